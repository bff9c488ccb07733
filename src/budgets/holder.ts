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
 * - A holder that cannot reach the store keeps its seats until its lease
 *   ends, then its unreachable policy applies: `local` (a fraction of the
 *   level's limit, default 0.1), `open` (no limit) or `closed` (no seat:
 *   new requests are refused `unavailable` at once; those already waiting
 *   wait for the budget to come back, up to their queue wait limit).
 *   The budgets come back with the store. A store that refuses the
 *   holder's credential is a configuration error: `ready()` rejects with
 *   it, and no policy answers.
 * - The exempt level has no budget: it admits at once, as everywhere.
 * - Borrowing between levels (`docs/semantics.md` §6) works over the
 *   holders together: every 10 s each holder runs the allocation with every
 *   level's seat demand summed over the live holders (from the ledgers it
 *   read), and holds each level's claims to the result; a ledger holds its
 *   claims to the smallest limit of its live holders, so holders that
 *   computed a little differently never exceed the server's limit together.
 *
 * Leases are in wall-clock time (`Clock.wallNow`), compared across holders
 * within the clock-skew bound; timers run on the clock.
 *
 * @module
 */

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
import { type LeaseTerms, settle } from "./ledger.ts";
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
  /** How long a claim lasts without being renewed, in ms (default 5,000). */
  leaseMs?: number;
  /**
   * How long a claim still counts after its lease, in ms: the longest a
   * request admitted just before may hold its seat (default: `leaseMs`).
   */
  drainMs?: number;
  /** How far the holders' wall clocks may disagree, in ms (default 1,000). */
  skewMs?: number;
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
}

/** One level's budget on this holder. */
export interface LevelBudget extends BudgetSnapshot {
  /** The priority level. */
  level: string;
}

interface LevelState {
  name: string;
  limit: number;
  budget: LevelBudget;
  /** A settle in flight. */
  settling: Promise<void> | null;
  /** The wall time of the last settle started. */
  lastSettleAt: number;
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
}

const MAX_CONFLICT_RETRIES = 3;

function checkMs(what: string, value: unknown, min: number): number {
  checkNumber(
    value,
    (n) => n >= min && n < Infinity,
    () =>
      `Cannot create the budget holder: ${what} must be a number >= ${min}, got ${String(value)}`,
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
  #refusal: Error | null = null;
  #failing = false;
  #onStoreError: (error: unknown) => void;
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
    const periodMs = checkMs("periodMs", options.periodMs ?? 1_000, 1);
    const leaseMs = checkMs("leaseMs", options.leaseMs ?? 5_000, 1);
    if (leaseMs <= periodMs) {
      throw new RangeError(
        `Cannot create the budget holder: leaseMs (${leaseMs}) must be longer than periodMs (${periodMs})`,
      );
    }
    this.#terms = {
      leaseMs,
      drainMs: checkMs("drainMs", options.drainMs ?? leaseMs, 0),
      skewMs: checkMs("skewMs", options.skewMs ?? 1_000, 0),
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
    this.#onStoreError = options.onStoreError ?? ((error) => {
      if (error instanceof StoreRefusedError) {
        console.error(`apf: budget holder ${this.id}: ${error.message}`);
      } else if (!this.#failing) {
        console.error(`apf: budget holder ${this.id} cannot reach its store:`, error);
      }
    });
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
  }

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
    // `closed` once the lease ended: refused at once, as the remote client does.
    if (this.#levels.get(request?.priorityLevel)?.budget.mode === "closed") {
      return Promise.resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
    }
    const decided = this.#local.begin(request, options);
    if (decided instanceof Promise) {
      // It waits on a level that has fewer seats here than its share (none yet, none since it
      // was idle, or not yet free): that level settles early rather than at the period.
      const level = this.#levels.get(request.priorityLevel);
      const budget = level?.budget;
      if (
        budget !== undefined &&
        (budget.capacity < budget.target || budget.capacity === 0 || budget.mode === "none")
      ) {
        this.#settleSoon(level!);
      }
      return decided;
    }
    return Promise.resolve(decided);
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
        continue;
      }
      const level: LevelState = {
        name: pl.name,
        limit,
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
        soon: null,
        drain: null,
        lastSettleAt: -Infinity,
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

  #wallNow(): number {
    return this.#clock.wallNow?.() ?? this.#clock.now();
  }

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
    const wait = level.lastSettleAt + this.#periodMs / 2 - this.#wallNow();
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
    level.settling ??= this.#settle(level).finally(() => level.settling = null);
    return level.settling;
  }

  async #settle(level: LevelState): Promise<void> {
    for (let attempt = 0; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
      level.lastSettleAt = this.#wallNow();
      const stored = await this.#call(this.#store.read(level.name));
      if (stored === TIMED_OUT || this.#closed) return this.#failed(level);
      // From here to the write's start, nothing awaits: the seats in use read now are the most
      // the level can have until the lower capacity below is applied.
      const queueSet = this.#levelSnapshot(level.name);
      const inUse = queueSet.seatsInUse;
      const settlement = settle(stored?.ledger ?? null, {
        id: this.id,
        now: this.#wallNow(),
        inUse,
        demand: Math.max(level.demand, inUse + queueSet.seatsWaiting),
        average: level.average,
        deviation: level.deviation,
        limit: level.limit,
      }, this.#terms);
      level.total = settlement.total;
      if (settlement.capacity < level.budget.capacity) {
        this.#setCapacity(level, settlement.capacity);
      }
      const written = await this.#call(
        this.#store.write(level.name, stored?.version ?? null, settlement.ledger),
      );
      if (written === TIMED_OUT || this.#closed) return this.#failed(level);
      if (!written) {
        // Another holder wrote first. A settle that changes something (the claim, a higher
        // capacity, the first lease) or whose lease would not last to the next round tries
        // again at once; a mere renewal waits for the next round, which reads afresh: a conflict
        // then costs no operation more.
        this.#stats.conflicts++;
        const mine = stored?.ledger.holders[this.id];
        const leaseLeft = (level.budget.leaseEndsAt ?? -Infinity) - this.#wallNow();
        if (
          mine === undefined || mine.claim !== settlement.claim ||
          settlement.capacity > level.budget.capacity ||
          leaseLeft < 2 * this.#periodMs + this.#storeTimeoutMs
        ) {
          continue;
        }
        return;
      }
      this.#stats.settles++;
      this.#failing = false;
      level.demand = 0;
      if (this.#wallNow() >= settlement.expiresAt) return this.#leaseEnded(level);
      level.budget = {
        level: level.name,
        limit: settlement.limit,
        target: settlement.target,
        claim: settlement.claim,
        capacity: level.budget.capacity,
        leaseEndsAt: settlement.expiresAt,
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
        settlement.expiresAt - this.#wallNow(),
        () => this.#leaseEnded(level),
      );
      return;
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

  /** A settle that failed: without a lease (none yet, or ended), the policy applies now. */
  #failed(level: LevelState): void {
    const endsAt = level.budget.leaseEndsAt;
    if (endsAt === null || this.#wallNow() >= endsAt) this.#leaseEnded(level);
  }

  #leaseEnded(level: LevelState): void {
    if (this.#closed) return;
    const endsAt = level.budget.leaseEndsAt;
    if (endsAt !== null && this.#wallNow() < endsAt) return; // renewed meanwhile
    level.leaseTimer?.cancel();
    level.leaseTimer = null;
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
