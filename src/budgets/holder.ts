/**
 * A budget holder: a {@linkcode Coordinator} that decides every request
 * here, with the exact local queue sets (fair queuing, seats, Retry-After),
 * on the share of each level's seats that it holds in the level's ledger.
 * A request within the budget costs no I/O; the store is read and written
 * once per level per period (`settle` of `ledger.ts`; each period is 0 to
 * 20% longer, at random, so that holders do not settle in step), and at
 * most once more between two periods: when requests wait on a level that
 * has fewer seats here than its share, and once when a claim above a lower
 * share has drained to it (the seats then go to the holder whose share
 * grew without waiting for the next period). A write that meets another
 * holder's is tried again at once only when it changes something.
 *
 * - Before its first settle a level has no seats here; requests wait (up to
 *   their queue wait limit) for it.
 * - A lower share applies at once; a higher one once the store accepted it.
 * - A lease runs from the start of the holder's last successful write, on
 *   its monotonic clock (and, to be safe from a suspended machine whose
 *   monotonic clock stood still, on its wall clock too: whichever ran more).
 *   When it ends, the holder stops admitting on its budget and settles
 *   first (a process that was frozen resumes this way: requests wait for
 *   that settle, within their queue wait limit). Only when a store
 *   operation started after the lease ended has failed does its
 *   unreachable policy apply: `local` (a fraction of the level's limit,
 *   default 0.1), `open` (no limit) or `closed` (no seat: new requests are
 *   refused `unavailable` at once; those already waiting wait for the
 *   budget to come back, up to their queue wait limit). The budgets come
 *   back with the store. A store that refuses the holder's credential is a
 *   configuration error: `ready()` rejects with it, and no policy answers.
 * - A store that forgot a ledger (restarted empty) while this holder's
 *   lease runs: the holder writes back what it remembers under a recovery
 *   mark (`ledger.ts`), and says so once. A line no holder could write
 *   holds its seats for a window and is dropped; each is reported once.
 * - The exempt level has no budget: it admits at once, as everywhere.
 * - Borrowing between levels (`docs/semantics.md` §6) works over the
 *   holders together: every 10 s each holder runs the allocation with every
 *   level's seat demand summed over the live holders (from the ledgers it
 *   read), and holds each level's claims to the result; a ledger holds its
 *   claims to the smallest limit of its live holders, so holders that
 *   computed a little differently never exceed the server's limit together.
 *
 * No decision compares clocks across holders (`line_watch.ts`): the wall
 * clock's times in the ledger are for display.
 *
 * @module
 */

import {
  type AdaptiveCoordinator,
  AdaptiveLimit,
  adaptiveOptionsOf,
} from "../coordinator/adaptive_limit.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import type { GradientSnapshot } from "../adaptive/types.ts";
import { exposeAdaptiveLimit } from "../observe/adaptive_metrics.ts";
import { EXEMPT } from "../config/constants.ts";
import type { EffectiveConfiguration } from "../config/effective.ts";
import { BORROWING_ADJUSTMENT_PERIOD_MS, EmbeddedCoordinator } from "../coordinator/embedded.ts";
import { BorrowingController } from "../coordinator/borrowing_controller.ts";
import type { AcquireOptions, Admission, Coordinator, SeatRequest } from "../coordinator/types.ts";
import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import { TIMED_OUT, withTimeout } from "../fairqueuing/timeout.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { BudgetSnapshot, CoordinatorSnapshot } from "../observe/types.ts";
import { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import { budgetMetrics } from "./_metrics.ts";
import { checkNumber } from "../_shared/errors.ts";
import type { UnreachablePolicy } from "../remote/fallback.ts";
import { type LeaseTerms, settle, type Settlement } from "./ledger.ts";
import { LeasedSeat } from "./_leased_seat.ts";
import { LineWatch } from "./line_watch.ts";
import { MAX_TERM_MS } from "./ledger_schema.ts";
import { checkOptionNames } from "../_shared/options.ts";
import { type BudgetStore, StoreRefusedError } from "./store.ts";

/** Options of {@linkcode BudgetHolder}. */
export interface BudgetHolderOptions {
  /** Where the ledgers are. */
  store: BudgetStore;
  /** This holder's id among the level's holders (default: a random UUID). */
  id?: string;
  /**
   * How often each level's ledger is settled, in ms (default 1,000): every
   * period plus a random 0 to 20% (the holders do not settle in step).
   */
  periodMs?: number;
  /**
   * How long a claim lasts without being renewed, in ms (default 5,000; at
   * most an hour).
   */
  leaseMs?: number;
  /**
   * How long after its lease a claim still counts, in ms: the longest a
   * request admitted just before may hold its seat (default: `leaseMs`; at
   * most an hour).
   */
  drainMs?: number;
  /**
   * What a line's window adds to the lease and the drain time, in ms, for
   * clocks that run at slightly different rates: the window is
   * lease + drain + margin on the reader's clock (default a tenth of lease +
   * drain, which covers rates up to 5% apart). Clocks need not agree.
   */
  driftMarginMs?: number;
  /** Random numbers in [0, 1) for the periods' jitter (default `Math.random`). */
  random?: () => number;
  /**
   * How long a store operation may take before it counts as failed, in ms
   * (default: `periodMs`, at least 1,000).
   */
  storeTimeoutMs?: number;
  /** After the lease ends without the store (default `local`). */
  policy?: UnreachablePolicy;
  /** The `local` policy's fraction of each level's limit (default 0.1, at least one seat). */
  fallbackFraction?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
  /**
   * Told of every failed store operation and of a refused credential
   * (default: logged, once per outage).
   */
  onStoreError?: (error: unknown) => void;
  /**
   * Told, once each, of a store that forgot a ledger (a recovery) and of a
   * line no holder could write (default: `console.warn`).
   */
  onWarning?: (message: string) => void;
  /**
   * Learn this holder's server concurrency limit from its own requests'
   * latency (`docs/adaptive.md`): `"auto"` or the controller's options.
   * Each holder then computes its levels' limits at its own learned limit,
   * and a ledger holds a level to the smallest limit of its live holders
   * (`ledger.ts`): the most loaded upstream's view wins. Default: the
   * configuration's static limit.
   */
  serverConcurrencyLimit?: "auto" | GradientControllerOptions;
}

const OPTION_NAMES = [
  "store",
  "id",
  "periodMs",
  "leaseMs",
  "drainMs",
  "driftMarginMs",
  "random",
  "storeTimeoutMs",
  "policy",
  "fallbackFraction",
  "clock",
  "onStoreError",
  "onWarning",
  "serverConcurrencyLimit",
] as const;

/** One level's budget on this holder. */
export interface LevelBudget extends BudgetSnapshot {
  /** The priority level. */
  level: string;
}

interface LevelState {
  name: string;
  limit: number;
  /** The most the level's limit can be (MaxCL): a line above it is suspect. */
  maxLimit: number;
  budget: LevelBudget;
  /** A settle in flight. */
  settling: Promise<void> | null;
  /** Settle again once the one in flight has ended (its lease ended meanwhile). */
  again: boolean;
  /** The clock time of the last settle started. */
  lastSettleAt: number;
  /** What this holder remembers of the level's lines. */
  watch: LineWatch;
  /** The start of its last successful write (monotonic and wall ms), or `null`. */
  leaseFrom: { now: number; wall: number } | null;
  /** When that lease ends on the wall clock (`leaseFrom.wall` + lease; none: Infinity). */
  wallLeaseEnd: number;
  /** The claim and beat of its last successful write. */
  lastClaim: number;
  lastBeat: number;
  /** An early settle waiting for its time, or `null`. */
  soon: Timer | null;
  /** Watching a claim above the capacity drain to it, or `null`. */
  drain: Timer | null;
  /** Peak seat demand since the last settle, from the queue set's integrator. */
  demand: number;
  /** Average and deviation of the seat demand over the last period. */
  average: number;
  deviation: number;
  /** The demand summed over the live holders, as last read. */
  total: { demand: number; average: number; deviation: number };
  leaseTimer: Timer | null;
  /** How many times admission on the level's budget stopped (its lease lapsed, the policy). */
  lapses: number;
}

const MAX_CONFLICT_RETRIES = 3;

function checkMs(what: string, value: unknown, min: number, max = Infinity): number {
  checkNumber(
    value,
    (n) => n >= min && n <= max && n < Infinity,
    () =>
      `Cannot create the budget holder: ${what} must be a number ${
        max < Infinity ? `from ${min} to ${max}` : `>= ${min}`
      }, got ${String(value)}`,
  );
  return value;
}

/** Decides requests locally on budgets leased from a store. */
export class BudgetHolder implements Coordinator {
  /** This holder's id. */
  readonly id: string;
  /**
   * Its metrics: Kubernetes' `apiserver_flowcontrol_*` for its local queue
   * sets (a level's current limit is this holder's capacity), and
   * `apf_budget_*`: each level's share (`apf_budget_seats` by `kind`:
   * limit, target, claim, capacity), the lease left, whether the policy
   * answers, and the store's operations by result.
   */
  readonly metrics: FlowcontrolMetrics;
  #store: BudgetStore;
  #clock: Clock;
  #local: EmbeddedCoordinator;
  #terms: LeaseTerms;
  #periodMs: number;
  #storeTimeoutMs: number;
  #policy: UnreachablePolicy;
  #fraction: number;
  #levels = new Map<string, LevelState>();
  #timer: Timer | null = null;
  #borrowingTimer: Timer | null = null;
  #borrowing: BorrowingController;
  #closed = false;
  #adaptive: AdaptiveLimit | null = null;
  #refusal: Error | null = null;
  #failing = false;
  #onStoreError: (error: unknown) => void;
  #onWarning: (message: string) => void;
  #first: Promise<void>;
  #stats = { settles: 0, conflicts: 0, failures: 0 };
  #random: () => number;

  /**
   * Starts holding budgets for every limited level of `configuration`:
   * settles each level at once, then every period.
   *
   * @throws {RangeError} for a number out of range; {TypeError} for another invalid option.
   */
  constructor(configuration: EffectiveConfiguration, options: BudgetHolderOptions) {
    if (options?.store === undefined || typeof options.store.read !== "function") {
      throw new TypeError("Cannot create the budget holder: options.store must be a BudgetStore");
    }
    checkOptionNames("create the budget holder", options, OPTION_NAMES);
    const periodMs = checkMs("periodMs", options.periodMs ?? 1_000, 1);
    const leaseMs = checkMs("leaseMs", options.leaseMs ?? 5_000, 1, MAX_TERM_MS);
    if (leaseMs <= periodMs) {
      throw new RangeError(
        `Cannot create the budget holder: leaseMs (${leaseMs}) must be longer than periodMs (${periodMs})`,
      );
    }
    const drainMs = checkMs("drainMs", options.drainMs ?? leaseMs, 0, MAX_TERM_MS);
    this.#terms = {
      leaseMs,
      drainMs,
      marginMs: checkMs(
        "driftMarginMs",
        options.driftMarginMs ?? Math.ceil((leaseMs + drainMs) / 10),
        0,
      ),
    };
    this.#periodMs = periodMs;
    this.#storeTimeoutMs = checkMs(
      "storeTimeoutMs",
      options.storeTimeoutMs ?? Math.max(periodMs, 1_000),
      1,
    );
    const policy = options.policy ?? "local";
    if (!["local", "open", "closed"].includes(policy)) {
      throw new TypeError(
        `Cannot create the budget holder: policy must be local, open or closed, got ${
          String(policy)
        }`,
      );
    }
    this.#policy = policy;
    const fraction = options.fallbackFraction ?? 0.1;
    checkNumber(
      fraction,
      (f) => f > 0 && f <= 1,
      () =>
        `Cannot create the budget holder: fallbackFraction must be in (0, 1], got ${
          String(fraction)
        }`,
    );
    this.#fraction = fraction;
    const id = options.id ?? crypto.randomUUID();
    if (typeof id !== "string" || id === "" || id === "__proto__") {
      throw new TypeError(
        `Cannot create the budget holder: id must be a non-empty string other than __proto__, got ${
          JSON.stringify(id)
        }`,
      );
    }
    this.id = id;
    this.#random = options.random ?? Math.random;
    this.#store = options.store;
    this.#clock = options.clock ?? systemClock;
    const clock = this.#clock;
    if (typeof clock.wallNow === "function") this.#wallNow = () => clock.wallNow!();
    this.#onStoreError = options.onStoreError ?? ((error) => {
      if (error instanceof StoreRefusedError) {
        console.error(`apf: budget holder ${this.id}: ${error.message}`);
      } else if (!this.#failing) {
        console.error(`apf: budget holder ${this.id} cannot reach its store:`, error);
      }
    });
    this.#onWarning = options.onWarning ?? ((message) => console.warn(`apf: ${message}`));
    this.metrics = new FlowcontrolMetrics({ snapshot: () => this.#local.snapshot() });
    this.#local = new EmbeddedCoordinator(configuration, {
      clock: this.#clock,
      borrowing: "external",
      metrics: this.metrics,
    });
    budgetMetrics(this.metrics.registry, {
      budgets: () => this.budgets(),
      stats: () => this.#stats,
      now: () => this.#wallNow(),
    });
    this.#borrowing = new BorrowingController(configuration);
    this.#adopt(configuration);
    this.#first = this.#round();
    this.#schedule();
    this.#scheduleBorrowing();
    const adaptive = adaptiveOptionsOf(options.serverConcurrencyLimit);
    if (adaptive !== null) {
      try {
        this.#adaptive = new AdaptiveLimit(this.#adaptiveHost(), adaptive, { clock: this.#clock });
      } catch (e) {
        this.close();
        throw e;
      }
      const learned = this.#adaptive;
      exposeAdaptiveLimit(this.metrics.registry, () => learned.snapshot());
    }
  }

  /** What the learned limit drives: this holder's configuration, its local demand. */
  #adaptiveHost(): AdaptiveCoordinator {
    // deno-lint-ignore no-this-alias
    const holder = this;
    return {
      get configuration() {
        return holder.#local.configuration;
      },
      get closed() {
        return holder.#closed;
      },
      configure: (next) => holder.configure(next),
      seatDemand: () => holder.#local.seatDemand(),
      // The holder's own borrowing controller runs on its period.
      borrowing: "external",
      adjustLimits: () => {},
    };
  }

  /** The learned limit's state, or `null` for a static one. */
  adaptiveSnapshot(): GradientSnapshot | null {
    return this.#adaptive?.snapshot() ?? null;
  }

  /**
   * `admission`'s seat, admitted on `level`'s lease, as a seat that tells
   * whether the lease still holds, and as a sample of the learned limit
   * when there is one.
   */
  #tracked(admission: Admission, level: LevelState | undefined): Admission {
    if (!admission.admitted) return admission;
    let seat = admission.seat;
    if (level !== undefined && level.budget.mode === "budget") {
      seat = new LeasedSeat(seat, level, level.lapses, this.#leaseHolds);
    }
    if (this.#adaptive !== null) seat = this.#adaptive.track(seat);
    return seat === admission.seat ? admission : { ...admission, seat };
  }

  /**
   * Whether `level`'s lease, as it was when its count of lapses was
   * `lapses`, still holds: not lapsed since, and not over by the wall clock
   * (a process resuming from a freeze may run this before its timers).
   */
  #leaseHolds = (level: LevelState, lapses: number): boolean => {
    if (level.lapses !== lapses) return false;
    if (level.wallLeaseEnd === Infinity || this.#wallNow() < level.wallLeaseEnd) return true;
    this.#leaseEnded(level);
    return level.lapses === lapses;
  };

  /**
   * Resolves once every level was settled once (or failed to be).
   *
   * @throws {StoreRefusedError} (rejects) when the store refused this holder's
   * credential. A first settle that timed out resolves it: a refusal then
   * shows at a later settle (acquires reject from then on, and
   * `onStoreError` hears of it).
   */
  async ready(): Promise<void> {
    await this.#first;
    if (this.#refusal !== null) throw this.#refusal;
  }

  /** Each limited level's budget here. */
  budgets(): LevelBudget[] {
    return [...this.#levels.values()].map((l) => ({ ...l.budget }));
  }

  /**
   * Counters of the store operations: settles written, writes refused
   * because another holder wrote first (retried), and operations that
   * failed or timed out.
   */
  get stats(): { readonly settles: number; readonly conflicts: number; readonly failures: number } {
    return { ...this.#stats };
  }

  /**
   * The local queue sets' state, each limited level with its `budget`; a
   * level's current limit here is this holder's capacity.
   */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot {
    const snapshot = this.#local.snapshot(options);
    for (const level of snapshot.levels) {
      const held = this.#levels.get(level.name);
      if (held === undefined) continue;
      const { level: _, ...budget } = held.budget;
      level.budget = budget;
    }
    return snapshot;
  }

  /**
   * Decides `request` here, on this holder's budget. Rejects like the
   * embedded coordinator for a malformed request, and with the refusal when
   * the store refused this holder.
   */
  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    if (this.#refusal !== null) return Promise.reject(this.#refusal);
    const level = this.#levels.get(request?.priorityLevel);
    // A lease that ended without its timer having run yet (a process frozen, a machine
    // suspended): no admission on it. One wall-clock read: the timer covers the monotonic clock.
    if (level !== undefined && this.#wallNow() >= level.wallLeaseEnd) this.#leaseEnded(level);
    // `closed` once the lease ended: refused at once, as the remote client does.
    if (level?.budget.mode === "closed") {
      return Promise.resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
    }
    const decided = this.#local.begin(request, options);
    if (decided instanceof Promise) {
      // It waits on a level that has fewer seats here than its share (none yet, none since it
      // was idle, or not yet free): that level settles early rather than at the period.
      const budget = level?.budget;
      if (
        budget !== undefined &&
        (budget.capacity < budget.target || budget.capacity === 0 || budget.mode === "none")
      ) {
        this.#settleSoon(level!);
      }
      if (level === undefined) return decided.then((a) => this.#tracked(a, level));
      return decided.then((a) => this.#tracked(this.#onLease(level, a), level));
    }
    return Promise.resolve(this.#tracked(decided, level));
  }

  /**
   * A waiting request admitted when a seat was released: refused instead if
   * the level's lease has ended by then, found now (a process resuming from
   * a freeze may handle responses before its timers run) or already (its
   * budget stopped, awaiting a settle: the capacity is 0 then, so this seat
   * was given before the stop). Several releases in one turn admit several
   * requests before the first of them is looked at here: the first finds
   * the end, the others the stop. So no admission rides an ended lease. One
   * wall-clock read, for requests that waited only.
   */
  #onLease(level: LevelState, admission: Admission): Admission {
    if (!admission.admitted || level.budget.mode !== "budget") return admission;
    const end = level.wallLeaseEnd;
    if (end !== Infinity && this.#wallNow() < end) return admission;
    if (end !== Infinity) this.#leaseEnded(level); // capacity 0 first
    admission.seat.release(); // with capacity 0, the seat given back admits nobody
    return { admitted: false, reason: "unavailable", retryAfterSeconds: 1 };
  }

  /**
   * Applies a new configuration live, as the embedded coordinator does
   * (`docs/semantics.md` §2.6): a new limited level has no seat until its
   * first settle, which starts at once; a removed level keeps its budget for
   * the requests it still holds and is let go once idle (its claim runs out
   * with its lease); the limits the claims are held to are reallocated.
   * Every level is validated first: on error nothing changes.
   *
   * @throws {RangeError} or {TypeError} when a level's configuration is invalid or the holder is closed.
   */
  configure(next: EffectiveConfiguration): void {
    if (this.#closed) throw new TypeError("Cannot configure the budget holder: it is closed");
    this.#local.configure(next); // validates every level before it changes anything
    this.#borrowing.configure(next);
    for (const level of this.#adopt(next)) void this.#settleLevel(level);
  }

  /** Stops settling; the local queue sets answer what waits `unavailable`. Claims run out with their lease. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#adaptive?.close();
    this.#timer?.cancel();
    this.#borrowingTimer?.cancel();
    for (const level of this.#levels.values()) {
      level.leaseTimer?.cancel();
      level.soon?.cancel();
      level.drain?.cancel();
    }
    this.#local.close();
  }

  /** Closes the holder (for `using`). */
  [Symbol.dispose](): void {
    this.close();
  }

  // ---- settling -------------------------------------------------------------

  /**
   * Holds every limited level of `configuration`: a new one with no seat
   * until its first settle; a known one keeps its budget. Returns the new ones.
   */
  #adopt(configuration: EffectiveConfiguration): LevelState[] {
    const limits: Record<string, number> = {};
    const current = this.#borrowing.currentLimits();
    const fresh: LevelState[] = [];
    for (const pl of configuration.priorityLevels) {
      if (pl.type === "Exempt" || pl.name === EXEMPT) {
        // A level that became exempt has no budget any more: its claim runs out with its lease.
        const held = this.#levels.get(pl.name);
        if (held !== undefined) this.#drop(held);
        continue;
      }
      const limit = current[pl.name] ?? pl.currentLimit;
      const known = this.#levels.get(pl.name);
      if (known !== undefined) {
        known.limit = limit;
        known.maxLimit = pl.max;
        continue;
      }
      const level: LevelState = {
        name: pl.name,
        limit,
        maxLimit: pl.max,
        budget: {
          level: pl.name,
          limit,
          target: 0,
          claim: 0,
          capacity: 0,
          leaseEndsAt: null,
          mode: "none",
        },
        settling: null,
        again: false,
        soon: null,
        drain: null,
        lastSettleAt: -Infinity,
        watch: new LineWatch(),
        leaseFrom: null,
        wallLeaseEnd: Infinity,
        lapses: 0,
        lastClaim: 0,
        lastBeat: 0,
        demand: 0,
        average: 0,
        deviation: 0,
        total: { demand: 0, average: 0, deviation: 0 },
        leaseTimer: null,
      };
      this.#levels.set(pl.name, level);
      fresh.push(level);
      limits[pl.name] = 0; // no seat before the first settle
    }
    this.#local.setCurrentLimits(limits);
    return fresh;
  }

  /** Stops holding `level` (removed and idle, or exempt now): its claim runs out with its lease. */
  #drop(level: LevelState): void {
    level.leaseTimer?.cancel();
    level.soon?.cancel();
    level.drain?.cancel();
    this.#levels.delete(level.name);
  }

  /** The clock's wall time (its monotonic time where it has none). */
  #wallNow: () => number = () => this.#clock.now();

  #schedule(): void {
    if (this.#closed) return;
    // Up to 20% over the period: holders started together do not settle in lockstep (each
    // conflict costs a read and a write more), and a level is settled at most once per period
    // (a read and a write), early settles aside.
    const jitter = this.#periodMs * (1 + 0.2 * this.#random());
    this.#timer = this.#clock.setTimer(jitter, () => {
      void this.#round();
      this.#schedule();
    });
  }

  #scheduleBorrowing(): void {
    if (this.#closed) return;
    this.#borrowingTimer = this.#clock.setTimer(BORROWING_ADJUSTMENT_PERIOD_MS, () => {
      this.#adjustLimits();
      this.#scheduleBorrowing();
    });
  }

  /** The borrowing allocation over every level's demand summed over the live holders. */
  #adjustLimits(): void {
    const reports = [...this.#levels.values()].map((l) => ({
      level: l.name,
      demand: {
        durationMs: BORROWING_ADJUSTMENT_PERIOD_MS,
        average: l.total.average,
        deviation: l.total.deviation,
        min: 0,
        max: l.total.demand,
      },
      idle: false,
    }));
    // Removed levels let go of here are idle: the allocation lets go of them too.
    for (const name of this.#borrowing.quiescing()) {
      if (this.#levels.has(name)) continue;
      const none = { durationMs: BORROWING_ADJUSTMENT_PERIOD_MS, average: 0, deviation: 0 };
      reports.push({ level: name, demand: { ...none, min: 0, max: 0 }, idle: true });
    }
    this.#borrowing.adjust(reports, this.#clock.now());
    const limits = this.#borrowing.currentLimits();
    for (const level of this.#levels.values()) level.limit = limits[level.name] ?? level.limit;
  }

  /** Settles every level: the demand of the period, then one settle each, in parallel. */
  #round(): Promise<void> {
    const reports = this.#local.collectSeatDemand();
    // A removed level that has gone idle here has left the local queue sets: let it go.
    const present = new Set(reports.map((r) => r.level));
    for (const level of [...this.#levels.values()]) {
      if (!present.has(level.name)) this.#drop(level);
    }
    for (const report of reports) {
      const level = this.#levels.get(report.level);
      if (level === undefined) continue;
      // A period of no length (the first round, at start) has no average: count it as none.
      const finite = (x: number) => (Number.isFinite(x) ? x : 0);
      level.demand = Math.ceil(finite(report.demand.max));
      level.average = finite(report.demand.average);
      level.deviation = finite(report.demand.deviation);
    }
    return Promise.all([...this.#levels.values()].map((l) => this.#settleLevel(l))).then(() => {});
  }

  /**
   * Settles `level` early: now, or, within half a period of its last settle,
   * half a period after it (one early settle between two rounds: at most two
   * per period, whatever the load).
   */
  #settleSoon(level: LevelState): void {
    if (this.#closed || level.soon !== null) return;
    const wait = level.lastSettleAt + this.#periodMs / 2 - this.#clock.now();
    level.soon = this.#clock.setTimer(Math.max(0, wait), () => {
      level.soon = null;
      if (level.settling === null) void this.#settleLevel(level);
    });
  }

  /**
   * A claim above the capacity (seats draining to a lower share) is written
   * lower as soon as the seats have drained, rather than at the next period:
   * the holder whose share grew gets them sooner. Checked locally every
   * tenth of a period; the store is written once, when drained.
   */
  #watchDrain(level: LevelState): void {
    if (this.#closed || level.drain !== null) return;
    const check = (wait: number) => {
      level.drain = this.#clock.setTimer(Math.max(0, wait), () => {
        level.drain = null;
        const { claim, capacity } = level.budget;
        if (claim <= capacity || level.settling !== null) return; // settled meanwhile
        if (this.#levelSnapshot(level.name).seatsInUse <= capacity) {
          void this.#settleLevel(level);
        } else {
          check(this.#periodMs / 10);
        }
      });
    };
    check(this.#periodMs / 10);
  }

  #settleLevel(level: LevelState): Promise<void> {
    if (this.#closed || this.#refusal !== null) return Promise.resolve();
    if (level.settling !== null) return level.settling;
    level.settling = this.#settle(level).finally(() => {
      level.settling = null;
      if (!level.again) return;
      level.again = false;
      void this.#settleLevel(level);
    });
    return level.settling;
  }

  async #settle(level: LevelState): Promise<void> {
    for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
      const startedAt = this.#clock.now();
      level.lastSettleAt = startedAt;
      const stored = await this.#call(this.#store.read(level.name));
      if (stored === TIMED_OUT || this.#closed) return this.#failed(level, startedAt);
      // From here to the write's start, nothing awaits: the seats in use read now are the most
      // the level can have until the lower capacity below is applied.
      const queueSet = this.#levelSnapshot(level.name);
      const inUse = queueSet.seatsInUse;
      const settlement = settle(
        stored,
        {
          id: this.id,
          now: this.#clock.now(),
          wallNow: this.#wallNow(),
          inUse,
          demand: Math.max(level.demand, inUse + queueSet.seatsWaiting),
          average: level.average,
          deviation: level.deviation,
          limit: level.limit,
          maxLimit: level.maxLimit,
          remembered: this.#leaseRuns(level) ? level.lastClaim : null,
          lastBeat: level.lastBeat,
        },
        this.#terms,
        level.watch,
      );
      this.#report(level, settlement);
      level.total = settlement.total;
      if (settlement.capacity < level.budget.capacity) {
        this.#setCapacity(level, settlement.capacity);
      }
      // The lease runs from the write's start: the others first see the line after it.
      const from = { now: this.#clock.now(), wall: this.#wallNow() };
      const written = await this.#call(
        this.#store.write(level.name, stored?.version ?? null, settlement.ledger),
      );
      if (written === TIMED_OUT || this.#closed) return this.#failed(level, startedAt);
      if (!written) {
        // Another holder wrote first. A settle that changes something (the claim, a higher
        // capacity, the first lease) or whose lease would not last to the next round tries
        // again at once; a mere renewal waits for the next round, which reads afresh: a conflict
        // then costs no operation more.
        this.#stats.conflicts++;
        const mine = stored?.ledger.holders[this.id];
        if (
          mine === undefined || mine.claim !== settlement.claim ||
          settlement.capacity > level.budget.capacity ||
          this.#leaseLeft(level) < 2 * this.#periodMs + this.#storeTimeoutMs
        ) {
          continue;
        }
        return;
      }
      this.#stats.settles++;
      this.#failing = false;
      level.demand = 0;
      level.leaseFrom = from;
      level.wallLeaseEnd = from.wall + this.#terms.leaseMs;
      level.lastClaim = settlement.claim;
      level.lastBeat = settlement.beat;
      if (!this.#leaseRuns(level)) {
        // The store answered only after the lease it granted had ended (a freeze, a slow store):
        // as good as no answer to an operation started within the lease: one more try first.
        this.#storeError(new Error("the store answered after the lease had ended"));
        return this.#failed(level, startedAt);
      }
      level.budget = {
        level: level.name,
        limit: settlement.limit,
        target: settlement.target,
        claim: settlement.claim,
        capacity: level.budget.capacity,
        leaseEndsAt: from.wall + this.#terms.leaseMs,
        mode: "budget",
        holders: Object.entries(settlement.ledger.holders).map(([id, line]) => ({
          id,
          self: id === this.id,
          claim: line.claim,
          demand: line.demand,
          expiresAt: line.expiresAt,
        })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
      };
      this.#setCapacity(level, settlement.capacity);
      if (settlement.claim > settlement.capacity) this.#watchDrain(level);
      // Requests wait for seats that are not free yet: look again half a period on.
      if (
        settlement.capacity < settlement.target && this.#levelSnapshot(level.name).seatsWaiting > 0
      ) {
        this.#settleSoon(level);
      }
      level.leaseTimer?.cancel();
      level.leaseTimer = this.#clock.setTimer(
        this.#leaseLeft(level),
        () => this.#leaseEnded(level),
      );
      return;
    }
  }

  /** Whether the lease of the level's last write still runs, on the monotonic and the wall clock. */
  #leaseRuns(level: LevelState): boolean {
    return this.#leaseLeft(level) > 0;
  }

  /** Ms left of the lease of the level's last write: the lesser on either clock. */
  #leaseLeft(level: LevelState): number {
    const from = level.leaseFrom;
    if (from === null) return -Infinity;
    const lease = this.#terms.leaseMs;
    return Math.min(
      from.now + lease - this.#clock.now(),
      from.wall + lease - this.#wallNow(),
    );
  }

  /** Tells, once each, of the suspect lines and the recovery a settle found. */
  #report(level: LevelState, settlement: Settlement): void {
    const where = this.#store.where === undefined ? "the store" : `the store ${this.#store.where}`;
    const window = this.#terms.leaseMs + this.#terms.drainMs + this.#terms.marginMs;
    const warn = (message: string) => {
      try {
        this.#onWarning(
          `budget holder ${this.id}: level ${JSON.stringify(level.name)}: ${message}`,
        );
      } catch {
        // A reporter that throws changes nothing.
      }
    };
    for (const suspect of settlement.suspects) {
      warn(
        `${where} holds a line no holder could write, ${
          JSON.stringify(suspect.id)
        }: ${suspect.reason}; it counts as a dead holder's (at most ${suspect.seats} seats for ${window} ms) and is dropped at the next write`,
      );
    }
    const mark = settlement.recovery;
    if (!settlement.newRecovery || mark === null) return;
    if (settlement.forgotten && mark.by === this.id) {
      warn(
        `${where} forgot the ledger (this holder's claim of ${level.lastClaim} seats was not in it): it writes the claim back with a recovery mark, and no holder grows past the claim it remembers for ${window} ms`,
      );
    } else if (mark.by === this.id) {
      warn(
        `${where} has no ledger (a new store, or one that forgot): a recovery mark goes in, and no holder takes seats it does not remember having for ${window} ms`,
      );
    } else {
      warn(
        `the ledger in ${where} carries a recovery mark by ${
          JSON.stringify(mark.by)
        } (the store forgot it): this holder grows past the claim it remembers by no seat for ${window} ms`,
      );
    }
  }

  /** The store's answer, `TIMED_OUT` when it failed or took too long (counted and reported). */
  async #call<T>(operation: Promise<T>): Promise<T | typeof TIMED_OUT> {
    try {
      const answer = await withTimeout(this.#clock, operation, this.#storeTimeoutMs);
      if (answer === TIMED_OUT) this.#storeError(new Error("the store did not answer in time"));
      return answer;
    } catch (error) {
      if (error instanceof StoreRefusedError) {
        this.#refuse(error);
      } else {
        this.#storeError(error);
      }
      return TIMED_OUT;
    }
  }

  #storeError(error: unknown): void {
    // An operation that ends after close() (its store closed under it) is nobody's news.
    if (this.#closed) return;
    this.#stats.failures++;
    try {
      this.#onStoreError(error);
    } catch {
      // A reporter that throws changes nothing.
    }
    this.#failing = true;
  }

  #refuse(error: StoreRefusedError): void {
    if (this.#refusal !== null) return;
    this.#refusal = error;
    try {
      this.#onStoreError(error);
    } catch {
      // A reporter that throws changes nothing.
    }
    this.close();
  }

  /**
   * A settle that failed. While the lease runs, the holder keeps its seats.
   * Once it has ended, the policy applies if the failed operation started
   * after the end (or there was no budget); otherwise the holder tries once
   * more first (a process that was frozen mid-operation).
   */
  #failed(level: LevelState, startedAt: number): void {
    if (this.#leaseRuns(level)) return;
    const from = level.leaseFrom;
    if (
      level.budget.mode === "budget" && from !== null && startedAt < from.now + this.#terms.leaseMs
    ) {
      // The lease ended while the operation was under way (a freeze, a slow store), perhaps before
      // its timer ran: no admission on it from now, and one more try before any policy.
      this.#stopAdmitting(level);
      level.again = true;
      return;
    }
    this.#applyPolicy(level);
  }

  /** No admission on the level's budget any more (its lease ended): capacity 0, no lease timer. */
  #stopAdmitting(level: LevelState): void {
    level.lapses++;
    level.leaseTimer?.cancel();
    level.leaseTimer = null;
    level.wallLeaseEnd = Infinity;
    this.#setCapacity(level, 0);
  }

  /**
   * The lease ended (its timer, or an acquire that found it over): no
   * admission on the budget any more, and a settle before any policy.
   */
  #leaseEnded(level: LevelState): void {
    if (this.#closed || level.budget.mode !== "budget" || this.#leaseRuns(level)) return;
    this.#stopAdmitting(level); // the settle below decides what comes next
    if (level.settling !== null) level.again = true;
    else void this.#settleLevel(level);
  }

  /** The store failed to answer: the unreachable policy applies. */
  #applyPolicy(level: LevelState): void {
    if (this.#closed) return;
    // A seat admitted on the budget does not hold under the policy (it has its own seats).
    if (level.budget.mode === "budget") level.lapses++;
    level.leaseTimer?.cancel();
    level.leaseTimer = null;
    level.wallLeaseEnd = Infinity;
    const capacity = this.#policy === "closed"
      ? 0
      : this.#policy === "open"
      ? Number.MAX_SAFE_INTEGER
      : Math.max(1, Math.ceil(level.limit * this.#fraction));
    level.budget = { ...level.budget, target: 0, claim: 0, mode: this.#policy };
    this.#setCapacity(level, capacity);
  }

  #setCapacity(level: LevelState, capacity: number): void {
    level.budget.capacity = capacity;
    this.#local.setCurrentLimits({ [level.name]: capacity });
  }

  #levelSnapshot(name: string): { seatsInUse: number; seatsWaiting: number } {
    const snapshot = this.#local.snapshot();
    const level = snapshot.levels.find((l) => l.name === name);
    return level?.queueSet ?? { seatsInUse: 0, seatsWaiting: 0 };
  }
}
