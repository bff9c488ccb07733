/**
 * What the controller Durable Object does, without the platform: it keeps
 * the configuration (stored, versioned), pushes it with current limits to
 * the level objects, and every 10 s collects their seat demand and pushes
 * the limits the borrowing allocation (`docs/semantics.md` §6) gives. A level object that
 * does not answer keeps its statistics here and its last limits there.
 *
 * With a learned server concurrency limit (`serverConcurrencyLimit:
 * "auto"`, `docs/adaptive.md`) the adjustment runs every sample window
 * instead (1 s), as `AdaptiveLimit` runs it in one process
 * (`src/coordinator/adaptive_limit.ts`): each collection brings the level
 * objects' latency samples too, the one gradient controller learns from
 * them (`_learned_limit.ts`), and a new limit reaches the levels as a new
 * ServerCL would: the allocation reconfigured at it, and every level object
 * told, which recomputes its NominalCL, LendableCL and BorrowingCL live
 * without dropping or reordering what waits. Limits that did not change are
 * not pushed again within 10 s.
 * Internal to the Cloudflare adapter.
 *
 * @module
 */

import { type EffectiveConfiguration, withServerConcurrencyLimit } from "../config/mod.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import type { GradientSnapshot } from "../adaptive/types.ts";
import {
  BORROWING_ADJUSTMENT_PERIOD_MS,
  type BorrowingAdjustment,
} from "../coordinator/embedded.ts";
import { BorrowingController, type SeatDemandReport } from "../coordinator/borrowing_controller.ts";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import {
  checkConfiguration,
  type ControllerConfigurationInput,
  type StoredConfiguration,
} from "./_controller_configuration.ts";
import type { LevelSamples } from "./_latency_samples.ts";
import { LearnedLimit, type ReceivedSamples } from "./_learned_limit.ts";
import type { LevelUpdate } from "./_level_host.ts";

export type { ControllerConfigurationInput, StoredConfiguration };

/** What a level object gives the controller at each adjustment. */
export interface LevelCollection {
  /** The level's seat demand since the previous collection. */
  demand: SeatDemandReport[];
  /** Its latency samples since then, or `null` when it samples none (a static limit). */
  samples: LevelSamples | null;
}

/** What the controller calls on a level object (an RPC stub on Cloudflare). */
export interface LevelPort {
  /** The level's seat demand and samples since the previous call. */
  collect(): Promise<LevelCollection>;
  /** Applies a configuration and limits. */
  update(level: string, update: LevelUpdate): Promise<unknown>;
}

/** Where the controller keeps its configuration (Durable Object storage on Cloudflare). */
export interface ConfigurationStore {
  get(): Promise<StoredConfiguration | undefined>;
  put(value: StoredConfiguration): Promise<void>;
}

/** Options of {@linkcode ControllerHost}. */
export interface ControllerHostOptions {
  /** The level object of each level. */
  levels: (level: string) => LevelPort;
  /** Where the configuration is kept (default: memory only). */
  store?: ConfigurationStore;
  /** The configuration used until one is set (default: the built-in one at 600 seats). */
  initial?: ControllerConfigurationInput;
  /** The clock (default: the system clock). */
  clock?: Clock;
  /** How long a level object may take to answer, in ms (default 2,000). */
  callTimeoutMs?: number;
  /** Numbers in [0, 1) for a learned limit's jitter (default `Math.random`). */
  random?: () => number;
}

/** Counters of the controller. */
export interface ControllerStats {
  /** Borrowing adjustments run. */
  adjustments: number;
  /** Calls to level objects that failed or timed out. */
  failedCalls: number;
}

/** The controller of a Cloudflare deployment. */
export class ControllerHost {
  /** Counters. */
  readonly stats: ControllerStats = { adjustments: 0, failedCalls: 0 };
  #options: ControllerHostOptions;
  #clock: Clock;
  #stored: StoredConfiguration | null = null;
  #controller: BorrowingController | null = null;
  #learned: LearnedLimit | null = null;
  #last: BorrowingAdjustment | null = null;
  /** What the last adjustment pushed, and when: unchanged limits wait up to 10 s. */
  #pushed: { key: string; atMs: number } | null = null;

  constructor(options: ControllerHostOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Loads the stored configuration, or the initial one (idempotent).
   *
   * @throws {ConfigurationError} or {RangeError} ({TypeError}) when it is invalid.
   */
  async start(): Promise<void> {
    if (this.#controller !== null) return;
    const stored = await this.#options.store?.get();
    if (stored !== undefined) {
      const { effective, adaptive } = checkConfiguration({
        objects: stored.configuration.objects,
        serverConcurrencyLimit: stored.adaptive ?? stored.configuration.serverConcurrencyLimit,
        mandatoryOnly: stored.configuration.mandatoryOnly,
      });
      this.#stored = stored;
      this.#adopt(adaptive);
      this.#controller ??= new BorrowingController(effective);
      return;
    }
    const { wire, effective, adaptive } = checkConfiguration(this.#options.initial ?? {});
    this.#stored = { version: 1, configuration: wire, ...(adaptive !== null && { adaptive }) };
    this.#adopt(adaptive);
    this.#controller ??= new BorrowingController(effective);
  }

  /** The configuration in force and its version. */
  get configuration(): StoredConfiguration {
    return this.#started().stored;
  }

  /** The last borrowing adjustment, or `null` before the first. */
  get lastAdjustment(): BorrowingAdjustment | null {
    return this.#last;
  }

  /**
   * How often to adjust, in ms: every 10 s, or every sample window of a
   * learned limit.
   */
  get adjustmentPeriodMs(): number {
    return this.#learned?.controller.options.sampleWindowMs ?? BORROWING_ADJUSTMENT_PERIOD_MS;
  }

  /** The learned limit's state, or `null` for a static limit. */
  adaptiveSnapshot(): GradientSnapshot | null {
    return this.#learned?.snapshot() ?? null;
  }

  /** What a level object gets when it asks (after a restart): the configuration and limits. */
  levelUpdate(): LevelUpdate {
    const { stored, controller } = this.#started();
    return {
      version: stored.version,
      configuration: stored.configuration,
      limits: controller.currentLimits(),
      ...(this.#learned !== null &&
        { serverConcurrencyLimit: controller.configuration.serverConcurrencyLimit }),
    };
  }

  /**
   * Replaces the configuration (refused whole when invalid), stores it, and
   * pushes it with new limits to every level object, removed levels included
   * (they drain). A learned limit with the same options goes on learning
   * from where it is; with other options it starts again.
   *
   * @throws {ConfigurationError} listing every problem, or {RangeError}; nothing changes then.
   */
  async setConfiguration(source: ControllerConfigurationInput): Promise<StoredConfiguration> {
    const { controller, stored } = this.#started();
    const { wire, effective, adaptive } = checkConfiguration(source);
    const next: StoredConfiguration = {
      version: stored.version + 1,
      configuration: wire,
      ...(adaptive !== null && { adaptive }),
    };
    await this.#options.store?.put(next);
    const names = this.#levelNames();
    const collected = await this.#collect(names);
    this.#stored = next;
    this.#adopt(adaptive);
    this.#learned?.learn(collected.samples);
    this.#last = controller.configure(
      this.#atLearnedLimit(effective),
      collected.demand,
      this.#now(),
    );
    await this.#push(new Set([...names, ...this.#levelNames()]), true);
    return next;
  }

  /**
   * The adjustment: collect demand (and, with a learned limit, latency
   * samples, from which the controller learns), allocate, push limits. A
   * learned limit that changed reconfigures the allocation at it first, as
   * a new ServerCL does.
   */
  async adjust(): Promise<BorrowingAdjustment> {
    const { controller } = this.#started();
    const names = this.#levelNames();
    const { demand, samples } = await this.#collect(names);
    const learned = this.#learned;
    const limit = learned?.learn(samples);
    const current = controller.configuration;
    const adjustment = limit !== undefined && limit !== current.serverConcurrencyLimit
      ? controller.configure(withServerConcurrencyLimit(current, limit), demand, this.#now())
      : controller.adjust(demand, this.#now());
    this.#last = adjustment;
    this.stats.adjustments++;
    await this.#push(new Set(names), false);
    return adjustment;
  }

  /** Stops learning. */
  close(): void {
    this.#learned?.close();
    this.#learned = null;
  }

  #now(): number {
    return this.#clock.now();
  }

  /** Learns with `adaptive`'s options (keeping a controller that has them), or stops learning. */
  #adopt(adaptive: GradientControllerOptions | null): void {
    const learned = this.#learned;
    if (
      adaptive !== null && learned !== null &&
      JSON.stringify(learned.given) === JSON.stringify(adaptive)
    ) return;
    learned?.close();
    this.#learned = adaptive === null
      ? null
      : new LearnedLimit(adaptive, this.#clock, this.#options.random);
  }

  /** `effective` at the learned limit, when there is one. */
  #atLearnedLimit(effective: EffectiveConfiguration): EffectiveConfiguration {
    const learned = this.#learned;
    return learned === null || learned.limit === effective.serverConcurrencyLimit
      ? effective
      : withServerConcurrencyLimit(effective, learned.limit);
  }

  #started(): { stored: StoredConfiguration; controller: BorrowingController } {
    if (this.#stored === null || this.#controller === null) {
      throw new TypeError("Cannot use the controller before start()");
    }
    return { stored: this.#stored, controller: this.#controller };
  }

  #levelNames(): string[] {
    const controller = this.#controller!;
    return [
      ...controller.configuration.priorityLevels.map((pl) => pl.name),
      ...controller.quiescing(),
    ];
  }

  async #collect(
    names: readonly string[],
  ): Promise<{ demand: SeatDemandReport[]; samples: ReceivedSamples[] }> {
    const results = await Promise.all(
      names.map((name) =>
        this.#call(async () => {
          const collection = await this.#options.levels(name).collect();
          return { collection, receivedAt: this.#now() };
        })
      ),
    );
    const demand: SeatDemandReport[] = [];
    const samples: ReceivedSamples[] = [];
    for (const r of results) {
      if (r === undefined) continue;
      demand.push(...r.collection.demand);
      if (r.collection.samples !== null) {
        samples.push({ samples: r.collection.samples, receivedAt: r.receivedAt });
      }
    }
    return { demand, samples };
  }

  async #push(names: ReadonlySet<string>, withConfiguration: boolean): Promise<void> {
    const update = this.levelUpdate();
    if (!withConfiguration) update.configuration = null;
    // With a learned limit the adjustment runs every window: what did not change waits.
    const key = JSON.stringify([update.version, update.limits, update.serverConcurrencyLimit]);
    const now = this.#now();
    const last = this.#pushed;
    if (
      !withConfiguration && this.#learned !== null && last !== null && last.key === key &&
      now - last.atMs < BORROWING_ADJUSTMENT_PERIOD_MS
    ) return;
    const failed = this.stats.failedCalls;
    await Promise.all(
      [...names].map((name) => this.#call(() => this.#options.levels(name).update(name, update))),
    );
    this.#pushed = this.stats.failedCalls === failed ? { key, atMs: now } : null;
  }

  /** One call to a level object, bounded in time; `undefined` when it failed. */
  async #call<T>(call: () => Promise<T>): Promise<T | undefined> {
    const timeoutMs = this.#options.callTimeoutMs ?? 2_000;
    let timer: { cancel(): void } | null = null;
    try {
      return await Promise.race([
        call(),
        new Promise<never>((_, reject) => {
          timer = this.#clock.setTimer(timeoutMs, () => reject(new Error("timed out")));
        }),
      ]);
    } catch {
      this.stats.failedCalls++;
      return undefined;
    } finally {
      (timer as { cancel(): void } | null)?.cancel();
    }
  }
}
