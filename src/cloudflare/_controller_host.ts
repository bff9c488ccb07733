/**
 * What the controller Durable Object does, without the platform: it keeps
 * the configuration (stored, versioned), pushes it with current limits to
 * the level objects, and every 10 s collects their seat demand and pushes
 * the limits the borrowing allocation (`docs/semantics.md` §6) gives. A level object that
 * does not answer keeps its statistics here and its last limits there.
 * Internal to the Cloudflare adapter.
 *
 * @module
 */

import {
  DEFAULT_SERVER_CONCURRENCY_LIMIT,
  type EffectiveConfiguration,
  loadConfiguration,
  resolveConfiguration,
} from "../config/mod.ts";
import type { BorrowingAdjustment } from "../coordinator/embedded.ts";
import { BorrowingController, type SeatDemandReport } from "../coordinator/borrowing_controller.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import type { LevelUpdate } from "./_level_host.ts";

/** What the controller calls on a level object (an RPC stub on Cloudflare). */
export interface LevelPort {
  /** The level's seat demand since the previous call. */
  collectSeatDemand(): Promise<SeatDemandReport[]>;
  /** Applies a configuration and limits. */
  update(level: string, update: LevelUpdate): Promise<unknown>;
}

/** The configuration as stored. */
export interface StoredConfiguration {
  /** Increases with every change. */
  version: number;
  /** The configuration. */
  configuration: WireConfiguration;
}

/** Where the controller keeps its configuration (Durable Object storage on Cloudflare). */
export interface ConfigurationStore {
  get(): Promise<StoredConfiguration | undefined>;
  put(value: StoredConfiguration): Promise<void>;
}

/**
 * A configuration as given to the controller (from `APF_CONFIG` and the
 * other variables, or to `setConfiguration`): manifests and objects, and the
 * limits to resolve them with. Kept in wire form as a
 * {@linkcode StoredConfiguration}.
 */
export interface ControllerConfigurationInput {
  /** FlowSchema and PriorityLevelConfiguration manifests (YAML or JSON text). */
  manifests?: string;
  /** Objects in manifest shape, after the manifests. */
  objects?: readonly unknown[];
  /** The server concurrency limit shared by every level (default 600). */
  serverConcurrencyLimit?: number;
  /** Merge with the mandatory built-in objects only (default false). */
  mandatoryOnly?: boolean;
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
}

/** Counters of the controller. */
export interface ControllerStats {
  /** Borrowing adjustments run. */
  adjustments: number;
  /** Calls to level objects that failed or timed out. */
  failedCalls: number;
}

/**
 * Checks a configuration the way the coordinator will use it and returns
 * its wire form and effective form.
 *
 * @throws {ConfigurationError} listing every problem, or {RangeError} ({TypeError}) for a bad
 * limit.
 */
export function checkConfiguration(
  source: ControllerConfigurationInput,
): { wire: WireConfiguration; effective: EffectiveConfiguration } {
  const user = loadConfiguration({
    manifests: source.manifests === undefined
      ? []
      : [{ name: "configuration", text: source.manifests }],
    objects: source.objects ?? [],
  });
  const wire: WireConfiguration = {
    serverConcurrencyLimit: source.serverConcurrencyLimit ?? DEFAULT_SERVER_CONCURRENCY_LIMIT,
    mandatoryOnly: source.mandatoryOnly === true,
    objects: [...user.flowSchemas, ...user.priorityLevels],
  };
  const effective = resolveConfiguration(user, {
    serverConcurrencyLimit: wire.serverConcurrencyLimit,
    mandatoryOnly: wire.mandatoryOnly,
  });
  return { wire, effective };
}

/** The controller of a Cloudflare deployment. */
export class ControllerHost {
  /** Counters. */
  readonly stats: ControllerStats = { adjustments: 0, failedCalls: 0 };
  #options: ControllerHostOptions;
  #clock: Clock;
  #stored: StoredConfiguration | null = null;
  #controller: BorrowingController | null = null;
  #last: BorrowingAdjustment | null = null;

  constructor(options: ControllerHostOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Loads the stored configuration, or the initial one (idempotent). */
  async start(): Promise<void> {
    if (this.#controller !== null) return;
    const stored = await this.#options.store?.get();
    if (stored !== undefined) {
      const { effective } = checkConfiguration({
        objects: stored.configuration.objects,
        serverConcurrencyLimit: stored.configuration.serverConcurrencyLimit,
        mandatoryOnly: stored.configuration.mandatoryOnly,
      });
      this.#stored = stored;
      this.#controller ??= new BorrowingController(effective);
      return;
    }
    const { wire, effective } = checkConfiguration(this.#options.initial ?? {});
    this.#stored = { version: 1, configuration: wire };
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

  /** What a level object gets when it asks (after a restart): the configuration and limits. */
  levelUpdate(): LevelUpdate {
    const { stored, controller } = this.#started();
    return {
      version: stored.version,
      configuration: stored.configuration,
      limits: controller.currentLimits(),
    };
  }

  /**
   * Replaces the configuration (refused whole when invalid), stores it, and
   * pushes it with new limits to every level object, removed levels included
   * (they drain).
   *
   * @throws {ConfigurationError} listing every problem, or {RangeError}; nothing changes then.
   */
  async setConfiguration(source: ControllerConfigurationInput): Promise<StoredConfiguration> {
    const { controller, stored } = this.#started();
    const { wire, effective } = checkConfiguration(source);
    const next: StoredConfiguration = { version: stored.version + 1, configuration: wire };
    await this.#options.store?.put(next);
    const names = this.#levelNames();
    const reports = await this.#collect(names);
    this.#stored = next;
    this.#last = controller.configure(effective, reports, this.#clock.now());
    await this.#push(new Set([...names, ...this.#levelNames()]), true);
    return next;
  }

  /** The 10 s borrowing adjustment: collect demand, allocate, push limits. */
  async adjust(): Promise<BorrowingAdjustment> {
    const { controller } = this.#started();
    const names = this.#levelNames();
    const reports = await this.#collect(names);
    const adjustment = controller.adjust(reports, this.#clock.now());
    this.#last = adjustment;
    this.stats.adjustments++;
    await this.#push(new Set(names), false);
    return adjustment;
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

  async #collect(names: readonly string[]): Promise<SeatDemandReport[]> {
    const results = await Promise.all(
      names.map((name) => this.#call(() => this.#options.levels(name).collectSeatDemand())),
    );
    return results.flatMap((r) => r ?? []);
  }

  async #push(names: ReadonlySet<string>, withConfiguration: boolean): Promise<void> {
    const update = this.levelUpdate();
    if (!withConfiguration) update.configuration = null;
    await Promise.all(
      [...names].map((name) => this.#call(() => this.#options.levels(name).update(name, update))),
    );
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
