/**
 * The embedded coordinator (`docs/semantics.md` §11.1): every priority
 * level's queue set in this isolate, with configuration digestion
 * (Kubernetes' `apf_controller.go`; `docs/semantics.md` §2.6),
 * reconfiguration (§4.8), the periodic borrowing adjustment (§6) and
 * Retry-After (§7.4). It does no I/O: time and timers come from the
 * injected {@linkcode Clock}, so remote topologies can wrap the same logic.
 *
 * @module
 */

import { computeLevelLimits, type EffectiveConfiguration } from "../config/mod.ts";
import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import { QueueSet, type QueueSetConfigChange } from "../fairqueuing/queue_set.ts";
import type {
  Decision,
  QueueSetObserver,
  SnapshotOptions,
  StartRequestInit,
} from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot, PriorityLevelSnapshot } from "../observe/types.ts";
import { adjustLevels, type BorrowingAdjustment, pushLimit } from "./_adjust.ts";
import type { SeatDemandReport } from "./borrowing_controller.ts";
import { type Level, newLevel, queueSetConfigOf } from "./_level.ts";
import { EmbeddedSeat } from "./_seat.ts";
import { DroppedRequestsTracker } from "./retry_after.ts";
import { DEFAULT_QUEUE_WAIT_LIMIT_MS, MAX_QUEUE_WAIT_LIMIT_MS } from "./seat_request.ts";
import type {
  AcquireOptions,
  Admission,
  AdmissionRejectReason,
  Coordinator,
  Rejected,
  SeatRequest,
} from "./types.ts";
import { checkNumber } from "../_shared/errors.ts";

function logAdjustError(error: unknown): void {
  console.error("apf: the onAdjust callback threw:", error);
}

/** The borrowing adjustment runs every 10 s (Kubernetes: `borrowingAdjustmentPeriod`). */
export const BORROWING_ADJUSTMENT_PERIOD_MS = 10_000;

export type { BorrowingAdjustment, LevelAdjustment } from "./_adjust.ts";

/** Gives each priority level's queue set an observer (what `FlowcontrolMetrics` does). */
export interface LevelObservers {
  /** The observer of `priorityLevel`; `exempt` tells whether the level is exempt. */
  observerFor(priorityLevel: string, options: { exempt: boolean }): QueueSetObserver;
}

/** Options of {@linkcode EmbeddedCoordinator}. */
export interface EmbeddedCoordinatorOptions {
  /** The clock (default: {@linkcode systemClock}). */
  clock?: Clock;
  /**
   * Metrics: an observer per level, for example a `FlowcontrolMetrics`
   * (asked again when a level's type changes).
   */
  metrics?: LevelObservers;
  /** Receives errors thrown by observers and `onAdjust`; default: logged with `console.error`. */
  onError?: (error: unknown) => void;
  /** Told about every borrowing adjustment (after configuration and every 10 s). */
  onAdjust?: (adjustment: BorrowingAdjustment) => void;
  /**
   * The levels this coordinator holds queue sets for (default: every level).
   * Limits are still computed over the whole configuration; a request for
   * another level is `unavailable`. A Cloudflare level object holds one.
   */
  levels?: readonly string[];
  /**
   * Who runs the borrowing adjustment (`docs/semantics.md` §6): `"timer"` (default), this
   * coordinator every 10 s; `"external"`, a controller that reads
   * {@linkcode EmbeddedCoordinator.collectSeatDemand} and pushes
   * {@linkcode EmbeddedCoordinator.setCurrentLimits} (levels keep their
   * limits until it does).
   */
  borrowing?: "timer" | "external";
}

/**
 * Hands out the seats of every priority level of an effective
 * configuration, in this isolate.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, EmbeddedCoordinator, effectiveConfiguration, FakeEventClock } from "@apf/edge";
 * const clock = new FakeEventClock();
 * using coordinator = new EmbeddedCoordinator(effectiveConfiguration(bootstrapConfiguration()), { clock });
 * const admission = await coordinator.acquire({ priorityLevel: "catch-all", flowSchema: "catch-all" });
 * if (admission.admitted) admission.seat.release();
 * ```
 */
export class EmbeddedCoordinator implements Coordinator {
  #clock: Clock;
  #options: EmbeddedCoordinatorOptions;
  #config!: EffectiveConfiguration;
  #levels = new Map<string, Level>();
  #nominalSum = 0;
  #fairFraction = 0;
  #drops = new DroppedRequestsTracker();
  #timer: Timer | null = null;
  #closed = false;
  #reap = (): void => this.#reapQuiescing();
  #served: ReadonlySet<string> | null;
  #external: boolean;
  #init: { [K in keyof StartRequestInit]: StartRequestInit[K] | undefined } = {};
  #lastName: string | undefined = undefined;
  #lastLevel: Level | undefined = undefined;

  /**
   * Starts serving `config`; the first borrowing allocation runs at once and
   * then every 10 s on the clock.
   *
   * @throws {RangeError} or {TypeError} when a level's configuration is invalid.
   */
  constructor(config: EffectiveConfiguration, options: EmbeddedCoordinatorOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#options = options;
    this.#served = options.levels === undefined ? null : new Set(options.levels);
    this.#external = options.borrowing === "external";
    if (options.borrowing !== undefined && !["timer", "external"].includes(options.borrowing)) {
      throw new TypeError(
        `Cannot create the coordinator: borrowing must be "timer" or "external", got ${
          JSON.stringify(options.borrowing)
        }`,
      );
    }
    if (this.#served !== null && !this.#external) {
      throw new TypeError(
        'Cannot create the coordinator: holding some levels only needs borrowing: "external" (the allocation needs every level\'s demand)',
      );
    }
    this.#apply(config);
    if (!this.#external) this.#schedule();
  }

  /** The configuration in force. */
  get configuration(): EffectiveConfiguration {
    return this.#config;
  }

  /** True once {@linkcode EmbeddedCoordinator.close} ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Applies a new configuration live (`docs/semantics.md` §2.6, §4.8): levels are added;
   * a removed level keeps serving what it holds, with its share, and goes
   * once idle; queues, hand sizes and limits change in place; then the
   * borrowing allocation runs. Every level is validated before any changes:
   * on error nothing changes and the old configuration keeps serving.
   *
   * @throws {RangeError} or {TypeError} when a level's configuration is invalid or the coordinator is closed.
   */
  configure(next: EffectiveConfiguration): void {
    if (this.#closed) throw new TypeError("Cannot configure the coordinator: it is closed");
    this.#apply(next);
  }

  /**
   * Asks for seats. Exempt levels admit at once; others queue
   * fairly or reject. Resolves by the request's queue wait limit at the
   * latest; rejects only for a malformed request.
   */
  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    return this.#start(request, options, true) as Promise<Admission>;
  }

  /**
   * {@linkcode EmbeddedCoordinator.acquire}, but the admission comes back as
   * a value when it is decided at once (admitted, or rejected without
   * queuing), and as a promise only when the request waits in a queue: a
   * batching host answers the first kind in the same message.
   *
   * @throws {TypeError} or {RangeError} for a malformed request.
   */
  begin(request: SeatRequest, options?: AcquireOptions): Admission | Promise<Admission> {
    return this.#start(request, options, false);
  }

  /**
   * Both of the above: with `wrap`, every answer is a promise (a malformed
   * request a rejected one); without, answers decided at once are values
   * and a malformed request throws. One body, branching only where it
   * answers, keeps `acquire` as fast as when it stood alone.
   */
  #start(
    request: SeatRequest,
    options: AcquireOptions | undefined,
    wrap: boolean,
  ): Admission | Promise<Admission> {
    if (typeof request !== "object" || request === null) {
      const e = new TypeError(
        `Cannot acquire a seat: request must be an object, got ${String(request)}`,
      );
      if (wrap) return Promise.reject(e);
      throw e;
    }
    const name = request.priorityLevel;
    // Requests in a row mostly go to one level: the last one found is kept (forgotten when the
    // levels change and on close).
    let level = this.#lastLevel;
    if (name !== this.#lastName) {
      level = this.#closed ? undefined : this.#levels.get(name);
      if (level !== undefined) {
        this.#lastName = name;
        this.#lastLevel = level;
      }
    }
    if (level === undefined) {
      const rejected = this.#rejection(name, "unavailable");
      return wrap ? Promise.resolve(rejected) : rejected;
    }
    // One scratch object for every start: the queue set reads it and keeps nothing of it.
    const init = this.#init;
    const hash = request.flowHash;
    init.hash = hash === null ? undefined : hash;
    init.work = request.work;
    init.signal = options?.signal;
    init.waitLimitMs = Math.min(
      request.waitLimitMs ?? DEFAULT_QUEUE_WAIT_LIMIT_MS,
      MAX_QUEUE_WAIT_LIMIT_MS,
    );
    init.descriptor = request.details === undefined
      ? { flowSchema: request.flowSchema, distinguisher: request.distinguisher ?? "" }
      : {
        flowSchema: request.flowSchema,
        distinguisher: request.distinguisher ?? "",
        details: request.details,
      };
    let r;
    try {
      r = level.queueSet.startRequest(init as StartRequestInit);
    } catch (e) {
      if (wrap) return Promise.reject(e);
      throw e;
    } finally {
      init.signal = undefined;
      init.descriptor = undefined;
    }
    const decision = r.decision;
    if (decision === "execute") {
      const admitted: Admission = {
        admitted: true,
        seat: new EmbeddedSeat(level, r, this.#reap),
        waitedMs: 0,
      };
      return wrap ? Promise.resolve(admitted) : admitted;
    }
    if (decision !== null) {
      const rejected = this.#rejection(name, decision);
      return wrap ? Promise.resolve(rejected) : rejected;
    }
    let waiting: Promise<Decision>;
    try {
      waiting = r.wait();
    } catch (e) {
      // Whatever went wrong, the queued request must not stay behind: a request no one waits
      // for would be dispatched and hold its seats for ever, and the level would fill up.
      r.cancel();
      if (wrap) return Promise.reject(e);
      throw e;
    }
    return waiting.then((d): Admission => {
      if (d !== "execute") {
        return this.#rejection(name, this.#closed && d === "cancelled" ? "unavailable" : d);
      }
      try {
        return {
          admitted: true,
          seat: new EmbeddedSeat(level, r, this.#reap),
          waitedMs: r.startMs - r.arrivalMs,
        };
      } catch (e) {
        r.finish();
        throw e;
      }
    });
  }

  /** Who runs the borrowing adjustment: this coordinator on its timer, or an external controller. */
  get borrowing(): "timer" | "external" {
    return this.#external ? "external" : "timer";
  }

  /**
   * Runs the borrowing adjustment now (`docs/semantics.md` §6): folds each level's seat
   * demand since the last one into its statistics and reallocates current
   * limits. The coordinator runs it every 10 s by itself.
   *
   * @throws {TypeError} when the borrowing is external.
   */
  adjustLimits(): BorrowingAdjustment {
    if (this.#external) {
      throw new TypeError("Cannot adjust the limits here: a controller does (borrowing: external)");
    }
    return this.#adjust(null);
  }

  /**
   * For an external controller: each held level's seat demand since the
   * previous call (or since the last adjustment), which starts a new period,
   * and whether the level is idle. The statistics shown by `snapshot()` are
   * updated with it too.
   */
  collectSeatDemand(): SeatDemandReport[] {
    const reports: SeatDemandReport[] = [];
    for (const l of this.#levels.values()) {
      const demand = l.queueSet.resetSeatDemand();
      l.stats.update(demand);
      reports.push({ level: l.effective.name, demand, idle: l.queueSet.isIdle });
    }
    return reports;
  }

  /**
   * For an external controller: sets the current limits of the held levels
   * named in `limits` (others are ignored). Every value is checked first.
   *
   * @throws {RangeError} when a value is not an integer >= 0 ({TypeError}: not a number);
   * nothing changes then.
   */
  setCurrentLimits(limits: Readonly<Record<string, number>>): void {
    for (const [name, v] of Object.entries(limits)) {
      checkNumber(
        v,
        (n) => Number.isInteger(n) && n >= 0,
        () => `Cannot set the current limit of ${name}: it must be an integer >= 0, got ${v}`,
      );
    }
    for (const [name, v] of Object.entries(limits)) {
      const level = this.#levels.get(name);
      if (level === undefined) continue;
      level.current = v;
      pushLimit(level, null);
    }
  }

  /**
   * Seats that want the server now: those in use and those waiting, over
   * every limited level (an adaptive limit's demand; exempt levels are
   * outside any limit).
   */
  seatDemand(): number {
    let seats = 0;
    for (const level of this.#levels.values()) {
      if (level.effective.type === "Exempt") continue;
      const qs = level.queueSet;
      seats += qs.seatsInUse + qs.seatsWaiting;
    }
    return seats;
  }

  /** Every level's limits, demand and queue set (with requests when asked), sorted by name. */
  snapshot(options: SnapshotOptions = {}): CoordinatorSnapshot {
    const now = this.#clock.now();
    const levels = [...this.#levels.values()].map((l): PriorityLevelSnapshot => ({
      name: l.effective.name,
      type: l.effective.type,
      quiescing: l.quiescing,
      nominalLimit: l.limits.nominal,
      lowerLimit: l.limits.min,
      upperLimit: l.limits.max,
      currentLimit: l.current,
      demand: {
        highWatermark: l.stats.highWatermark,
        average: l.stats.average,
        stdDev: l.stats.stdDev,
        smoothed: l.stats.smoothed,
        target: l.target,
      },
      queueSet: l.queueSet.snapshot(options),
      retryAfterSeconds: this.#drops.retryAfter(l.effective.name),
    }));
    levels.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      nowMs: now,
      wallClockMs: this.#clock.wallNow?.() ?? now,
      serverConcurrencyLimit: this.#config.serverConcurrencyLimit,
      seatFairFraction: this.#fairFraction,
      levels,
    };
  }

  /**
   * Stops the coordinator: waiting requests are answered `unavailable`, the
   * borrowing timer stops, and later requests are `unavailable`. Seats held
   * may still be released. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#lastName = this.#lastLevel = undefined;
    this.#timer?.cancel();
    this.#timer = null;
    for (const level of this.#levels.values()) level.queueSet.close();
  }

  /** Same as {@linkcode EmbeddedCoordinator.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  // ---- configuration ------------------------------------------------------

  /**
   * Digests `next` in two phases: validate every level, then commit all
   * (`docs/semantics.md` §2.6).
   */
  #apply(next: EffectiveConfiguration): void {
    // Phase 1: nothing below changes any state.
    const names = new Set(next.priorityLevels.map((pl) => pl.name));
    const draining = [...this.#levels.values()].filter((l) =>
      !names.has(l.effective.name) && !l.queueSet.isIdle
    );
    // A mandatory level whose object went away keeps the spec it had (Kubernetes:
    // `processOldPLsLocked`, "Retaining mandatory priority level"); only one never held is
    // imagined afresh.
    const given = next.priorityLevels.map((pl) =>
      pl.imagined === true ? this.#levels.get(pl.name)?.effective ?? pl : pl
    );
    const all = [...given, ...draining.map((l) => l.effective)];
    // Draining levels keep their share of the server (Kubernetes: `digestConfigObjects`).
    const limits = computeLevelLimits(all.map((pl) => pl.object), next.serverConcurrencyLimit);
    const changes = new Map<Level, QueueSetConfigChange>();
    const fresh: Level[] = [];
    const served = this.#served;
    given.forEach((pl, i) => {
      if (served !== null && !served.has(pl.name)) return;
      const old = this.#levels.get(pl.name);
      if (old !== undefined) {
        changes.set(old, old.queueSet.beginConfigure(queueSetConfigOf(pl, old.current)));
        return;
      }
      const metrics = this.#options.metrics;
      const qs = new QueueSet(queueSetConfigOf(pl, limits[i]!.initialCurrent), {
        clock: this.#clock,
        name: pl.name,
        ...(metrics !== undefined &&
          { observer: metrics.observerFor(pl.name, { exempt: pl.type === "Exempt" }) }),
        ...(this.#options.onError !== undefined && { onError: this.#options.onError }),
      });
      fresh.push(newLevel(pl, limits[i]!, qs));
    });

    // Phase 2: commit.
    const levels = new Map<string, Level>();
    let freshIndex = 0;
    all.forEach((pl, i) => {
      if (served !== null && !served.has(pl.name)) return;
      const old = this.#levels.get(pl.name);
      const level = old ?? fresh[freshIndex++]!;
      if (old !== undefined && old.effective.type !== pl.type) {
        this.#options.metrics?.observerFor(pl.name, { exempt: pl.type === "Exempt" });
      }
      level.effective = pl;
      level.limits = limits[i]!;
      level.quiescing = i >= given.length;
      levels.set(pl.name, level);
    });
    for (const [name, old] of this.#levels) if (!levels.has(name)) old.queueSet.close();
    this.#levels = levels;
    this.#lastName = this.#lastLevel = undefined;
    this.#config = next;
    this.#nominalSum = limits.reduce((sum, l) => sum + l.nominal, 0);
    this.#adjust(changes);
  }

  /** A quiescing level that became idle goes away: digest the configuration again. */
  #reapQuiescing(): void {
    if (this.#closed) return;
    for (const level of this.#levels.values()) {
      if (level.quiescing && level.queueSet.isIdle) return this.#apply(this.#config);
    }
  }

  // ---- borrowing ----------------------------------------------------------

  #adjust(changes: Map<Level, QueueSetConfigChange> | null): BorrowingAdjustment {
    if (this.#external) {
      // The controller allocates: levels keep their limits (new ones their initial one) until it does.
      for (const l of this.#levels.values()) pushLimit(l, changes);
      return { atMs: this.#clock.now(), fairFraction: this.#fairFraction, levels: [] };
    }
    const adjustment = adjustLevels(
      [...this.#levels.values()],
      this.#nominalSum,
      changes,
      this.#clock.now(),
    );
    this.#fairFraction = adjustment.fairFraction;
    const onAdjust = this.#options.onAdjust;
    if (onAdjust !== undefined) {
      // A throwing callback must neither stop the 10 s timer nor make an applied change look refused.
      try {
        onAdjust(adjustment);
      } catch (e) {
        (this.#options.onError ?? logAdjustError)(e);
      }
    }
    return adjustment;
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimer(BORROWING_ADJUSTMENT_PERIOD_MS, () => {
      this.#timer = null;
      if (this.#closed) return;
      this.#adjust(null);
      this.#schedule();
    });
  }

  // ---- rejection ----------------------------------------------------------

  /**
   * A rejection with the level's Retry-After, read after recording the drop
   * (`docs/semantics.md` §7.4).
   */
  #rejection(priorityLevel: string, reason: AdmissionRejectReason): Rejected {
    if (reason !== "unavailable") {
      const unixSeconds = Math.floor((this.#clock.wallNow?.() ?? this.#clock.now()) / 1000);
      this.#drops.recordDroppedRequest(priorityLevel, unixSeconds);
      if (this.#levels.get(priorityLevel)?.quiescing) this.#reapQuiescing();
    }
    return {
      admitted: false,
      reason,
      retryAfterSeconds: this.#drops.retryAfter(priorityLevel),
    };
  }
}
