/**
 * One priority level's queue set: who waits, who runs, who is rejected
 * (Kubernetes: `queueset.go` in `pkg/util/flowcontrol/fairqueuing/queueset`;
 * KEP-1040 "Queuing", "Dispatching", "Fair Queuing for Server Requests",
 * "Support for LIST requests", "Support for WATCH requests"; differences
 * in `docs/semantics.md` §4 and §11.3).
 *
 * ## Virtual time
 *
 * Fair queuing imagines a processor that serves every non-empty queue at
 * once, each at an equal share of the capacity, and dispatches requests in
 * the order that imaginary processor would finish them. "Virtual time" R
 * measures the imaginary service: it is the number of seat-seconds one
 * queue has received. With `C` seats, `A(t)` active queues (a queue is
 * active while it has a waiting or an executing request) and `D(t)` seats
 * demanded (Σ over queues of seats in use plus max seats of waiting
 * requests), the seats actually handed out are `min(D, C)`, shared equally,
 * so
 *
 *     dR/dt = min(D(t), C) / A(t)        (0 when no queue is active).
 *
 * R is piecewise linear: every operation first advances it with the ratio
 * of the state before the operation (`#syncTime`), then changes the state.
 *
 * A request's work is `initialSeats · G + finalSeats · additionalLatency`
 * seat-seconds, with `G` = 3 ms standing in for the unknown execution
 * time. Each queue keeps `nextDispatchR`, the virtual time at which its
 * head starts; the head would finish at `nextDispatchR + work`, and the
 * queue with the least such finish is served next (ties: first queue after
 * the last one served, round robin). Dispatch adds the work to the queue's
 * `nextDispatchR`; on completion the guess `G` is replaced by the actual
 * execution time S, adding `initialSeats · (S − G)`. A queue that becomes
 * active starts at the current R; and because all active queues get the
 * same share even when they cannot use it, `nextDispatchR` is never allowed
 * to fall behind its head's arrival R ("anti-windup").
 *
 * Dispatch is head-of-line blocking across the set: when the chosen head
 * does not fit in the free seats nothing else is dispatched, and a head
 * wider than the whole limit runs only when nothing is executing.
 *
 * ## Representation
 *
 * Seat-seconds are integers in units of 1e-8 (see `seat_seconds.ts`),
 * rounded exactly like Kubernetes, so ties are exact. They are JS numbers,
 * exact below 2^53; instead of Kubernetes' uint64 epochs, R is rebased to 0
 * whenever it reaches 2^50 units (about 130 seat-days), shifting every
 * stored virtual time by the same integer, which keeps all comparisons and
 * differences exact (and idle queues are reset, as Kubernetes does).
 *
 * ## Beyond Kubernetes
 *
 * Kubernetes scans every queue on each dispatch; here a segment tree over
 * the queues' finish times (`_dispatch_tree.ts`) selects the same queue in
 * O(log Q), and the sums behind dR/dt are maintained incrementally, so no
 * operation is linear in the number of queues (except removing a surplus
 * queue and rebasing, both rare). Waiting deadlines and lingering seats
 * share one clock timer.
 *
 * @module
 */

import { AbortWatch } from "./_abort_watch.ts";
import { DispatchTree } from "./_dispatch_tree.ts";
import { IndexedHeap } from "./_indexed_heap.ts";
import {
  DONE,
  EXECUTING,
  type ExecutingHolder,
  LINGERING,
  linkExecuting,
  Queue,
  Req,
  type RequestOwner,
  unlinkExecuting,
  WAITING,
} from "./_queue.ts";
import { type Clock, systemClock, type Timer } from "./clock.ts";
import { Integrator, type IntegratorResults } from "./integrator.ts";
import {
  DEFAULT_WORK,
  resolveConfig,
  type ResolvedConfig,
  resolveWork,
} from "./queue_set_config.ts";
import {
  durationPerSeatMs,
  seatSecondsToFloat,
  seatsTimesDuration,
} from "../_shared/seat_seconds.ts";
import { SafeObserver } from "./_safe_observer.ts";
import type {
  FlowHash,
  QueueSetConfig,
  QueueSetObserver,
  QueueSetRequest,
  QueueSetSnapshot,
  QueueSnapshot,
  RejectReason,
  RequestDescriptor,
  RequestSnapshot,
  SnapshotOptions,
  StartRequestInit,
} from "./types.ts";
import { checkNumber, valueError } from "../_shared/errors.ts";

/** `G`: the execution time assumed for every request until it finishes (Kubernetes: 3 ms). */
export const ESTIMATED_SERVICE_DURATION_MS = 3;

/** Virtual time is rebased when it reaches this many seat-seconds units (2^50). */
export const REBASE_THRESHOLD = 2 ** 50;

const MAX_UINT64 = (1n << 64n) - 1n;

const isUint32 = (x: unknown): boolean => typeof x === "number" && x >>> 0 === x;

function validHash(hash: unknown): hash is bigint | FlowHash {
  if (typeof hash === "bigint") return hash >= 0n && hash <= MAX_UINT64;
  return typeof hash === "object" && hash !== null &&
    isUint32((hash as FlowHash).hi) && isUint32((hash as FlowHash).lo);
}

/** Whether `hash` has a hash's type (a bigint, or two number halves), whatever their range. */
function isHashShaped(hash: unknown): boolean {
  return typeof hash === "bigint" ||
    typeof hash === "object" && hash !== null && typeof (hash as FlowHash).hi === "number" &&
      typeof (hash as FlowHash).lo === "number";
}

/** A request's signal as given: a signal, a function returning one when needed, or none. */
type SignalInit = AbortSignal | (() => AbortSignal | undefined) | null;

function isSignal(signal: unknown): signal is AbortSignal {
  return typeof (signal as AbortSignal).aborted === "boolean";
}

const ANONYMOUS: RequestDescriptor = Object.freeze({ flowSchema: "", distinguisher: "" });

/** Reports an error thrown by a callback (the default of {@linkcode QueueSetOptions.onError}). */
function logCallbackError(error: unknown): void {
  console.error("apf: a queue set callback threw:", error);
}

/**
 * A validated configuration change of one queue set, not yet applied: the
 * first phase of Kubernetes' two-phase reconfiguration (`BeginConfigChange`,
 * then `Complete`), so that a change spanning many levels validates all of
 * them before committing any.
 */
export interface QueueSetConfigChange {
  /** The queue set it applies to. */
  readonly queueSet: QueueSet;
  /**
   * Applies the change (at most once), optionally with a different
   * concurrency limit (the one borrowing computed).
   *
   * @throws {RangeError} when `concurrencyLimit` is not an integer >= 0 ({TypeError}: not a
   * number).
   * @throws {TypeError} when the change was already applied or the set is closed.
   */
  complete(concurrencyLimit?: number): void;
}

/** Options of a {@linkcode QueueSet}. */
export interface QueueSetOptions {
  /** The clock (default: {@linkcode systemClock}). */
  clock?: Clock;
  /** Name used in errors and dumps (default `"queue-set"`). */
  name?: string;
  /** `G`, the assumed execution time in ms (default 3); tests may change it. */
  estimatedServiceDurationMs?: number;
  /** Told about every enqueue, dispatch, rejection, finish and release (for metrics). */
  observer?: QueueSetObserver;
  /**
   * Receives what an observer or an `onDecision` callback throws; such errors
   * never propagate into the queue set. Default: logged with `console.error`.
   */
  onError?: (error: unknown) => void;
}

/**
 * A queue set with Kubernetes' semantics (`docs/semantics.md` §4): shuffle
 * sharding into queues, fair queuing in virtual time, seats with final-phase
 * lingering, and rejection only when both the seats and the chosen queue are
 * full.
 *
 * @example
 * ```ts
 * import { FakeEventClock } from "@apf/edge";
 * import { QueueSet } from "@apf/edge/sim";
 * const clock = new FakeEventClock();
 * const qs = new QueueSet(
 *   { type: "Limited", concurrencyLimit: 1, queuing: { queues: 8, queueLengthLimit: 10, handSize: 2 } },
 *   { clock },
 * );
 * const first = qs.startRequest({ hash: { hi: 0, lo: 1 } });
 * const second = qs.startRequest({ hash: { hi: 0, lo: 2 } });
 * first.decision; // "execute"
 * second.decision; // null: waiting for a seat
 * clock.advance(5);
 * first.finish();
 * second.decision; // "execute"
 * second.finish();
 * qs.isIdle; // true
 * ```
 */
export class QueueSet {
  /** The name given at construction. */
  readonly name: string;
  #clock: Clock;
  #g: number;
  /** The work of one seat for `G`, the common case, computed once. */
  #oneSeatG: number;
  #cfg: ResolvedConfig;
  #queues: Queue[] = [];
  #tree = new DispatchTree(0);
  #hand: Int32Array = new Int32Array(0);
  #currentR = 0;
  /**
   * Initialized here, not left to the constructor: a field declared without a value starts as
   * `undefined`, and then every time stored in it would be a new heap number.
   */
  #lastRealTime = 0;
  #robinIndex = 0;
  #enqueues = 0;
  #totWaiting = 0;
  #totExecuting = 0;
  #totSeatsInUse = 0;
  #totSeatsWaiting = 0;
  /** Σ over queues of seatsInUse + waiting max seats: the seat demand driving R. */
  #seatsRequested = 0;
  #activeQueues = 0;
  #rebases = 0;
  #dispatched = 0;
  #rejected: Record<RejectReason, number> = {
    "queue-full": 0,
    "concurrency-limit": 0,
    "time-out": 0,
    cancelled: 0,
  };
  #demand: Integrator;
  /** Waiting requests with a deadline and lingering ones, by `dueMs`. */
  #due = new IndexedHeap<Req>((a, b) => a.dueMs < b.dueMs);
  #timer: Timer | null = null;
  #timerAt = Infinity;
  #signals = new AbortWatch((requests) => {
    this.#syncTime();
    for (const r of requests) if (r.phase === WAITING) this.#removeWaiting(r, "cancelled");
    this.#afterOperation();
  });
  #decided: Req[] = [];
  #notifying = false;
  #owner: RequestOwner;
  /** Null without an observer: every request then skips five calls of a no-op. */
  #observer: SafeObserver | null;
  #onError: (error: unknown) => void;
  /** Requests executing without a queue (exempt and reject sets). */
  #unqueued: ExecutingHolder = { executingHead: null };
  #closed = false;

  /**
   * Creates a queue set; virtual time starts at 0.
   *
   * @throws {RangeError} for a number out of range, {TypeError} for any other invalid field
   * (naming the field).
   */
  constructor(config: QueueSetConfig, options: QueueSetOptions = {}) {
    this.name = options.name ?? "queue-set";
    const g = options.estimatedServiceDurationMs ?? ESTIMATED_SERVICE_DURATION_MS;
    checkNumber(
      g,
      (ms) => ms > 0 && ms < Infinity,
      () =>
        `Cannot create queue set ${
          JSON.stringify(this.name)
        }: estimatedServiceDurationMs must be finite and > 0, got ${g}`,
    );
    this.#g = g;
    this.#oneSeatG = seatsTimesDuration(1, g);
    this.#cfg = resolveConfig(this.name, config, null);
    this.#clock = options.clock ?? systemClock;
    this.#lastRealTime = this.#clock.now();
    this.#demand = new Integrator(this.#clock);
    this.#onError = options.onError ?? logCallbackError;
    this.#observer = options.observer === undefined
      ? null
      : new SafeObserver(options.observer, this.#onError);
    this.#owner = {
      finish: (r, executionMs) => this.#finishRequest(r, executionMs),
      reject: (r, reason) => this.#rejectWaiting(r, reason),
    };
    this.#growQueues();
  }

  /** True when no request waits or executes (lingering seats do not count). */
  get isIdle(): boolean {
    return this.#totWaiting === 0 && this.#totExecuting === 0;
  }

  /** Requests waiting in queues. */
  get waitingRequests(): number {
    return this.#totWaiting;
  }

  /** Requests executing (not counting those lingering on final seats). */
  get executingRequests(): number {
    return this.#totExecuting;
  }

  /** Seats held by executing and lingering requests. */
  get seatsInUse(): number {
    return this.#totSeatsInUse;
  }

  /** Σ max seats of waiting requests. */
  get seatsWaiting(): number {
    return this.#totSeatsWaiting;
  }

  /** The current concurrency limit. */
  get concurrencyLimit(): number {
    return this.#cfg.concurrencyLimit;
  }

  /** True once {@linkcode QueueSet.close} ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Starts a request: it executes at once, waits in a queue, or is rejected
   * (`concurrency-limit` by a set that does not queue, `queue-full` when no
   * seat is free and the chosen queue is at its length limit, `cancelled`
   * when its signal is already aborted and it would have to wait: like
   * Kubernetes, a request whose context is done still runs if it can start
   * at once). The decision is on the returned
   * handle; a waiting request's arrives later (see
   * {@linkcode StartRequestInit.onDecision} and
   * {@linkcode QueueSetRequest.wait}).
   *
   * @throws {RangeError} or {TypeError} for an invalid work estimate, hash,
   * wait limit or signal, a missing hash in a set of several queues, or a
   * closed set; nothing changes then.
   */
  startRequest(init: StartRequestInit = {}): QueueSetRequest {
    if (this.#closed) {
      throw new TypeError(
        `Cannot start a request: queue set ${JSON.stringify(this.name)} is closed`,
      );
    }
    // Most requests give no estimate: resolveWork is then left out of this hot function.
    const given = init.work;
    const work = given === undefined ? DEFAULT_WORK : resolveWork(given);
    const waitLimitMs = init.waitLimitMs;
    // Checked inline, not with checkNumber's closures: this runs for every request.
    if (waitLimitMs !== undefined && !(typeof waitLimitMs === "number" && waitLimitMs >= 0)) {
      throw valueError(
        waitLimitMs,
        `Cannot start a request: waitLimitMs must be a number >= 0, got ${waitLimitMs}`,
      );
    }
    const signal = init.signal ?? null;
    if (signal !== null && typeof signal !== "function" && !isSignal(signal)) {
      throw new TypeError(
        "Cannot start a request: signal must be an AbortSignal or a function returning one",
      );
    }
    const cfg = this.#cfg;
    const queuing = cfg.desiredQueues > 0;
    const hash = init.hash;
    if (cfg.desiredQueues > 1 && !validHash(hash)) {
      throw new (isHashShaped(hash) ? RangeError : TypeError)(
        hash === undefined
          ? `Cannot start a request: queue set ${
            JSON.stringify(this.name)
          } has ${cfg.desiredQueues} queues, so a flow hash is required`
          : `Cannot start a request: hash must be { hi, lo } unsigned 32-bit halves or an unsigned 64-bit bigint, got ${
            typeof hash === "object" ? JSON.stringify(hash) : String(hash)
          }`,
      );
    }
    this.#syncTime();
    const now = this.#lastRealTime;
    const r = new Req(
      this.#owner,
      work.initialSeats,
      work.finalSeats,
      work.additionalLatencyMs,
      now,
      init.descriptor ?? ANONYMOUS,
    );
    r.arrivalR = this.#currentR;
    if (init.onDecision !== undefined) r.onDecision = init.onDecision;
    // A request whose context is already done still runs if it need not wait
    // (`docs/semantics.md` §4.10): only waiting is cut short (see #startWaiting).
    if (!queuing) {
      // Exempt or no queuing (Kubernetes: `dispatchSansQueueLocked`): run now or reject now.
      if (this.#canAccommodate(r.maxSeats)) this.#dispatchSansQueue(r);
      else this.#decide(r, "concurrency-limit");
    } else {
      r.totalWork =
        (r.initialSeats === 1 ? this.#oneSeatG : seatsTimesDuration(r.initialSeats, this.#g)) +
        (r.finalSeats === 0 ? 0 : seatsTimesDuration(r.finalSeats, r.additionalLatencyMs));
      // One queue needs no deal, but its requests still move the scan's start (Kubernetes'
      // `shuffleShardLocked` counts every enqueue): it shows once the set has more queues.
      const q = this
        .#queues[cfg.desiredQueues === 1 ? (this.#enqueues++, 0) : this.#shuffleShard(hash!)]!;
      if (
        this.#totWaiting === 0 && this.#totSeatsInUse < cfg.concurrencyLimit &&
        this.#canAccommodate(r.maxSeats)
      ) {
        // Nobody waits and the request fits: enqueuing it would make it the only head, and
        // dispatch would take it at once. Do what those two steps leave behind, without the
        // round trip through the queue and the dispatch tree (no queue has an old request
        // to time out either).
        this.#enqueueAndDispatch(r, q);
      } else {
        this.#enqueueOrReject(r, q, now, signal, waitLimitMs);
      }
    }
    this.#afterOperation();
    return r;
  }

  /** The general case of a queued start: time out, reject when full, or enqueue and dispatch. */
  #enqueueOrReject(
    r: Req,
    q: Queue,
    now: number,
    signal: SignalInit,
    waitLimitMs: number | undefined,
  ): void {
    const cfg = this.#cfg;
    if (cfg.requestWaitLimitMs !== null) this.#removeTimedOut(q, now - cfg.requestWaitLimitMs);
    // KEP-1040, Queuing: reject only when no seat is free AND the queue is full.
    if (this.#totSeatsInUse >= cfg.concurrencyLimit && q.waiting >= cfg.queueLengthLimit) {
      this.#bound(q);
      this.#decide(r, "queue-full");
    } else {
      this.#enqueue(r, q);
      this.#dispatchAsMuchAsPossible();
      if (r.phase === WAITING) {
        // Kubernetes records the seat demand at enqueue, before a request whose context has
        // already ended leaves the queue (in `wait`): the demand's maximum keeps that moment.
        this.#noteDemand();
        this.#startWaiting(r, signal, waitLimitMs, now);
      }
    }
  }

  /**
   * Applies a new configuration: more queues are added at once, surplus
   * queues drain and disappear as their last request releases its seats,
   * and a raised limit dispatches waiting requests at once (Kubernetes:
   * `setConfiguration`, `removeQueueIfEmptyLocked`).
   * The same as `beginConfigure(config).complete()`.
   *
   * @throws {RangeError} or {TypeError} when `config` is invalid; nothing changes then.
   * @throws {TypeError} when the set is closed.
   */
  configure(config: QueueSetConfig): void {
    this.beginConfigure(config).complete();
  }

  /**
   * Validates `config` against this set without applying it (the first
   * phase of a reconfiguration, Kubernetes' `BeginConfigChange`).
   *
   * @throws {RangeError} or {TypeError} when `config` is invalid; nothing changes.
   * @throws {TypeError} when the set is closed.
   */
  beginConfigure(config: QueueSetConfig): QueueSetConfigChange {
    this.#assertOpen("configure");
    const next = resolveConfig(this.name, config, this.#cfg);
    let done = false;
    return {
      queueSet: this,
      complete: (concurrencyLimit?: number): void => {
        if (done) throw new TypeError("Cannot complete a configuration change twice");
        if (concurrencyLimit !== undefined) checkLimit(this.name, concurrencyLimit);
        this.#assertOpen("configure");
        done = true;
        this.#syncTime();
        this.#cfg = concurrencyLimit === undefined ? next : { ...next, concurrencyLimit };
        this.#growQueues();
        this.#dispatchAsMuchAsPossible();
        this.#afterOperation();
      },
    };
  }

  /**
   * Changes only the concurrency limit (the borrowing adjustment).
   *
   * @throws {RangeError} when `limit` is not an integer >= 0 ({TypeError}: not a number).
   * @throws {TypeError} when the set is closed.
   */
  setConcurrencyLimit(limit: number): void {
    checkLimit(this.name, limit);
    this.#assertOpen("set the concurrency limit of");
    this.#syncTime();
    this.#cfg = { ...this.#cfg, concurrencyLimit: limit };
    this.#dispatchAsMuchAsPossible();
    this.#afterOperation();
  }

  /**
   * Closes the set: every waiting request is rejected with `cancelled`,
   * lingering seats are released, and the timer is cancelled. Executing
   * requests may still finish (their seats are released at once). Further
   * starts and configuration changes throw. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#syncTime();
    for (const q of this.#queues) {
      for (let r = q.head; r !== null; r = q.head) this.#removeWaiting(r, "cancelled");
    }
    for (let r = this.#due.pop(); r !== undefined; r = this.#due.pop()) {
      if (r.phase === LINGERING) this.#releaseSeats(r);
    }
    this.#timer?.cancel();
    this.#timer = null;
    this.#timerAt = Infinity;
    this.#afterOperation();
  }

  #assertOpen(action: string): void {
    if (this.#closed) {
      throw new TypeError(`Cannot ${action} queue set ${JSON.stringify(this.name)}: it is closed`);
    }
  }

  /** Seat demand (seats in use plus seats waiting) observed since creation or the last reset. */
  seatDemand(): IntegratorResults {
    return this.#demand.results();
  }

  /**
   * Returns the seat demand observed so far and starts a new observation
   * window (`docs/semantics.md` §6.1).
   */
  resetSeatDemand(): IntegratorResults {
    return this.#demand.reset();
  }

  /**
   * The state of the set and its queues, for dumps and tests; with
   * `includeRequests`, every waiting and executing request too (lingering
   * ones are not listed, as in Kubernetes' `dump_requests`).
   */
  snapshot(options: SnapshotOptions = {}): QueueSetSnapshot {
    const withRequests = options.includeRequests === true;
    const cfg = this.#cfg;
    const nowMs = this.#clock.now();
    const out: QueueSetSnapshot = {
      nowMs,
      type: cfg.desiredQueues < 0 ? "Exempt" : "Limited",
      concurrencyLimit: cfg.concurrencyLimit,
      desiredQueues: cfg.desiredQueues,
      isIdle: this.isIdle,
      closed: this.#closed,
      waitingRequests: this.#totWaiting,
      executingRequests: this.#totExecuting,
      seatsInUse: this.#totSeatsInUse,
      seatsWaiting: this.#totSeatsWaiting,
      currentR: seatSecondsToFloat(this.#virtualTimeAt(nowMs)),
      lastChangeR: seatSecondsToFloat(this.#currentR),
      robinIndex: this.#robinIndex,
      rebases: this.#rebases,
      dispatched: this.#dispatched,
      rejected: { ...this.#rejected },
      queues: this.#queues.map((q) => {
        const qs: QueueSnapshot = {
          index: q.index,
          waitingRequests: q.waiting,
          executingRequests: q.executing,
          seatsInUse: q.seatsInUse,
          waitingInitialSeats: q.initialSeatsSum,
          waitingSeats: q.maxSeatsSum,
          waitingWork: seatSecondsToFloat(q.totalWorkSum),
          nextDispatchR: seatSecondsToFloat(q.nextDispatchR),
        };
        if (withRequests) {
          const requests: RequestSnapshot[] = [];
          let i = 0;
          for (let r = q.head; r !== null; r = r.next) {
            requests.push(requestSnapshot(r, q.index, i++));
          }
          for (let r = q.executingHead; r !== null; r = r.next) {
            requests.push(requestSnapshot(r, q.index, -1));
          }
          qs.requests = requests;
        }
        return qs;
      }),
    };
    if (withRequests) {
      const unqueued: RequestSnapshot[] = [];
      for (let r = this.#unqueued.executingHead; r !== null; r = r.next) {
        unqueued.push(requestSnapshot(r, -1, -1));
      }
      out.unqueuedRequests = unqueued;
    }
    return out;
  }

  // ---- time -------------------------------------------------------------

  /**
   * Advances R to now with the ratio of the state before the operation
   * (Kubernetes: `syncTimeLocked`, `getVirtualTimeRatioLocked`).
   */
  #syncTime(): void {
    const now = this.#clock.now();
    if (!(now - this.#lastRealTime > 0)) return;
    this.#currentR = this.#virtualTimeAt(now);
    this.#lastRealTime = now;
    if (this.#currentR >= REBASE_THRESHOLD) this.#rebase();
  }

  /**
   * R at `now` without advancing it: a look does not move the state. Every advance rounds, so a
   * snapshot that synced would shift R by a unit now and then, and decisions with it (Kubernetes'
   * `Dump` does not sync either).
   */
  #virtualTimeAt(now: number): number {
    const dt = now - this.#lastRealTime;
    if (!(dt > 0) || this.#activeQueues === 0) return this.#currentR;
    const cl = this.#cfg.concurrencyLimit;
    const seats = this.#seatsRequested < cl ? this.#seatsRequested : cl;
    return this.#currentR + seatsTimesDuration(seats / this.#activeQueues, dt);
  }

  /** Shifts every stored virtual time by −R so that R is 0 again (the rollover fix). */
  #rebase(): void {
    const shift = this.#currentR;
    this.#currentR = 0;
    for (const q of this.#queues) {
      if (!q.active) {
        q.nextDispatchR = 0;
        continue;
      }
      q.nextDispatchR -= shift;
      for (let r = q.head; r !== null; r = r.next) r.arrivalR -= shift;
    }
    this.#rebuildTree();
    this.#rebases++;
  }

  // ---- arrival ----------------------------------------------------------

  /** Picks the queue of the hand with the least waiting work (Kubernetes: `shuffleShardLocked`). */
  #shuffleShard(hash: bigint | FlowHash): number {
    const dealer = this.#cfg.dealer!;
    const n = dealer.handSize;
    const offset = this.#enqueues % n;
    if (this.#totWaiting === 0 && typeof hash !== "bigint") {
      // Every queue is empty (no waiting work): the scan below keeps its first card.
      this.#enqueues++;
      return dealer.cardFromHalves(hash.hi, hash.lo, offset);
    }
    const hand = typeof hash === "bigint"
      ? dealer.dealIntoHand(hash, this.#hand)
      : dealer.dealIntoHandFromHalves(hash.hi, hash.lo, this.#hand);
    this.#enqueues++;
    return this.#leastWork(hand, n, offset);
  }

  /** The queue of `hand` (`n` cards) with the least waiting work, from `offset`, first on ties. */
  #leastWork(hand: Int32Array, n: number, offset: number): number {
    let best = -1, min = Infinity;
    for (let i = 0; i < n; i++) {
      const qi = hand[(offset + i) % n]!;
      const w = this.#queues[qi]!.totalWorkSum;
      if (w < min) {
        min = w;
        best = qi;
      }
    }
    return best;
  }

  #enqueue(r: Req, q: Queue): void {
    if (!q.active) {
      q.nextDispatchR = this.#currentR;
      this.#activeQueues++;
    }
    r.queue = q;
    q.push(r);
    this.#observer?.enqueued(r, q.waiting);
    this.#seatsRequested += r.maxSeats;
    this.#totWaiting++;
    this.#totSeatsWaiting += r.maxSeats;
    this.#bound(q);
  }

  /**
   * {@linkcode #enqueue} then {@linkcode #dispatchOne} of a request that arrives when nobody
   * waits and fits in the free seats, folded: the state and the observer's events are the
   * same, but the request never sits in the queue's FIFO nor in the dispatch tree.
   */
  #enqueueAndDispatch(r: Req, q: Queue): void {
    if (!q.active) {
      q.nextDispatchR = this.#currentR;
      this.#activeQueues++;
    }
    r.queue = q;
    // Anti-windup with r as the head (#bound).
    if (q.nextDispatchR < r.arrivalR) q.nextDispatchR = r.arrivalR;
    this.#observer?.enqueued(r, 1);
    this.#startExecuting(r, q);
  }

  /**
   * Wires up the cancellation signal and the wait deadline of a request left
   * waiting. A signal function that throws or returns something else cancels
   * the request and throws, once the set is consistent again.
   */
  #startWaiting(r: Req, init: SignalInit, waitLimitMs: number | undefined, now: number) {
    let signal: AbortSignal | null;
    try {
      signal = typeof init === "function" ? init() ?? null : init;
      if (signal !== null && !isSignal(signal)) {
        throw new TypeError(
          `Cannot start a request: its signal function must return an AbortSignal, got ${
            String(signal)
          }`,
        );
      }
    } catch (e) {
      this.#removeWaiting(r, "cancelled");
      this.#afterOperation();
      throw e;
    }
    if (signal?.aborted) {
      this.#removeWaiting(r, "cancelled");
      return;
    }
    if (waitLimitMs !== undefined && waitLimitMs !== Infinity) {
      if (waitLimitMs <= 0) {
        this.#removeWaiting(r, "time-out");
        return;
      }
      r.dueMs = now + waitLimitMs;
      this.#due.push(r);
      this.#arm();
    }
    if (signal !== null) this.#signals.watch(r, signal);
  }

  /** Kubernetes ≤ 1.28: reject the queue's requests that arrived before `arrivalLimit`. */
  #removeTimedOut(q: Queue, arrivalLimit: number): void {
    for (let r = q.head; r !== null && arrivalLimit > r.arrivalMs; r = q.head) {
      this.#removeWaiting(r, "time-out");
    }
  }

  /** Runs a request of an exempt or non-queuing set now (Kubernetes: `dispatchSansQueueLocked`). */
  #dispatchSansQueue(r: Req): void {
    r.startMs = r.arrivalMs;
    r.phase = EXECUTING;
    linkExecuting(this.#unqueued, r);
    this.#totExecuting++;
    this.#totSeatsInUse += r.maxSeats;
    this.#dispatched++;
    this.#decide(r, "execute");
  }

  // ---- dispatch ---------------------------------------------------------

  #canAccommodate(seats: number): boolean {
    const cfg = this.#cfg;
    if (cfg.desiredQueues < 0) return true;
    // A request wider than the limit runs only when nothing executes (Kubernetes:
    // `canAccommodateSeatsLocked`).
    if (seats > cfg.concurrencyLimit) return this.#totExecuting === 0;
    return this.#totSeatsInUse + seats <= cfg.concurrencyLimit;
  }

  #dispatchAsMuchAsPossible(): void {
    // An exempt set has no limit: queues left from a Limited past drain at once.
    const unlimited = this.#cfg.desiredQueues < 0;
    while (
      this.#totWaiting !== 0 &&
      (unlimited || this.#totSeatsInUse < this.#cfg.concurrencyLimit) &&
      this.#dispatchOne()
    );
  }

  /**
   * Dispatches the head with the least virtual finish time, if it fits
   * (Kubernetes: `findDispatchQueueToBoundLocked`, `dispatchLocked`).
   */
  #dispatchOne(): boolean {
    const idx = this.#tree.select(this.#robinIndex);
    if (idx < 0) return false;
    const q = this.#queues[idx]!;
    const r = q.head!;
    if (!this.#canAccommodate(r.maxSeats)) {
      // Head-of-line blocking; a full unsuccessful scan leaves robinIndex where it was.
      if (this.#robinIndex < 0) this.#robinIndex = this.#queues.length - 1;
      return false;
    }
    q.remove(r);
    this.#seatsRequested -= r.maxSeats;
    this.#totWaiting--;
    this.#totSeatsWaiting -= r.maxSeats;
    this.#stopWaiting(r);
    this.#startExecuting(r, q);
    return true;
  }

  /** Starts a request that just left (or skipped) queue `q` (Kubernetes: `dispatchLocked`). */
  #startExecuting(r: Req, q: Queue): void {
    const cl = this.#cfg.concurrencyLimit;
    if (r.finalSeats > cl && this.#cfg.desiredQueues >= 0) capFinalSeats(r, cl);
    this.#robinIndex = q.index;
    r.phase = EXECUTING;
    linkExecuting(q, r);
    r.startMs = this.#lastRealTime;
    this.#totExecuting++;
    this.#totSeatsInUse += r.maxSeats;
    q.executing++;
    q.seatsInUse += r.maxSeats;
    this.#seatsRequested += r.maxSeats;
    q.nextDispatchR += r.totalWork;
    this.#bound(q);
    this.#dispatched++;
    this.#decide(r, "execute");
  }

  /**
   * Anti-windup (Kubernetes: `boundNextDispatchLocked`): virtual start never
   * precedes the head's arrival; refreshes the index.
   */
  #bound(q: Queue): void {
    const head = q.head;
    if (head === null) {
      this.#tree.set(q.index, Infinity);
      return;
    }
    if (q.nextDispatchR < head.arrivalR) q.nextDispatchR = head.arrivalR;
    this.#tree.set(q.index, q.nextDispatchR + head.totalWork);
  }

  // ---- completion -------------------------------------------------------

  #finishRequest(r: Req, executionMs: number | undefined): boolean {
    if (r.phase !== EXECUTING) return false;
    if (
      executionMs !== undefined &&
      !(typeof executionMs === "number" && executionMs >= 0 && executionMs < Infinity)
    ) {
      throw valueError(
        executionMs,
        `Cannot finish a request: executionMs must be a finite number >= 0, got ${executionMs}`,
      );
    }
    this.#syncTime();
    const now = this.#lastRealTime;
    this.#totExecuting--;
    const q = r.queue;
    const s = executionMs ?? now - r.startMs;
    unlinkExecuting(q ?? this.#unqueued, r);
    if (q !== null) {
      q.executing--;
      if (!q.active) this.#activeQueues--;
      // Replace the guess G by the actual service time S (Kubernetes: `finishRequestLocked`).
      q.nextDispatchR -= seatsTimesDuration(r.initialSeats, this.#g - s);
      this.#bound(q);
    }
    this.#observer?.finished(r, s);
    if (r.additionalLatencyMs > 0 && !this.#closed) {
      // KEP-1040, LIST/WATCH: final seats stay occupied for the additional latency.
      r.phase = LINGERING;
      r.dueMs = now + r.additionalLatencyMs;
      this.#due.push(r);
      this.#arm();
    } else {
      this.#releaseSeats(r);
    }
    this.#dispatchAsMuchAsPossible();
    this.#disarmWhenIdle();
    this.#afterOperation();
    return true;
  }

  #releaseSeats(r: Req): void {
    r.phase = DONE;
    this.#totSeatsInUse -= r.maxSeats;
    this.#observer?.released(r, r.maxSeats);
    const q = r.queue;
    if (q === null) return;
    q.seatsInUse -= r.maxSeats;
    if (q.index < 0) return; // its queue was removed; its seats no longer count
    this.#seatsRequested -= r.maxSeats;
    // Attrition (Kubernetes: `removeQueueIfEmptyLocked`): a surplus queue goes when its last
    // request is done.
    if (this.#queues.length > this.#cfg.desiredQueues && !q.active) this.#removeQueue(q);
  }

  #removeQueue(q: Queue): void {
    const index = q.index;
    this.#queues.splice(index, 1);
    for (let i = index; i < this.#queues.length; i++) this.#queues[i]!.index = i;
    q.index = -1;
    this.#seatsRequested -= q.seatsInUse;
    if (this.#robinIndex >= index) this.#robinIndex--;
    this.#rebuildTree();
  }

  // ---- waiting requests that leave without executing --------------------

  #rejectWaiting(r: Req, reason: RejectReason): boolean {
    if (r.phase !== WAITING) return false;
    this.#syncTime();
    this.#removeWaiting(r, reason);
    this.#afterOperation();
    return true;
  }

  #removeWaiting(r: Req, reason: RejectReason): void {
    const q = r.queue!;
    q.remove(r);
    if (!q.active) this.#activeQueues--;
    this.#seatsRequested -= r.maxSeats;
    this.#totWaiting--;
    this.#totSeatsWaiting -= r.maxSeats;
    this.#bound(q);
    this.#stopWaiting(r);
    this.#decide(r, reason);
  }

  #stopWaiting(r: Req): void {
    if (r.heapIndex >= 0) {
      this.#due.delete(r);
      this.#disarmWhenIdle();
    }
    this.#signals.unwatch(r);
  }

  /**
   * Stops the timer once nothing is due and nothing executes. While
   * requests execute, a timer left armed with nothing due fires once for
   * nothing; stopping it each time the last waiting request leaves costs a
   * timer's start and stop per wait instead (about 4.5 µs on Deno, whose
   * `setTimeout` makes a Node.js `Timeout`), and a busy level's queues
   * empty and fill again many times a second. An idle queue set holds no
   * timer: nothing keeps the process alive for it.
   */
  #disarmWhenIdle(): void {
    if (this.#timer !== null && this.#due.size === 0 && this.#totExecuting === 0) {
      this.#timer.cancel();
      this.#timer = null;
      this.#timerAt = Infinity;
    }
  }

  // ---- timers -----------------------------------------------------------

  #arm(): void {
    if (this.#closed) return;
    const top = this.#due.peek();
    if (top === undefined || top.dueMs >= this.#timerAt) return;
    this.#timer?.cancel();
    this.#timerAt = top.dueMs;
    this.#timer = this.#clock.setTimer(top.dueMs - this.#clock.now(), this.#onTimer);
  }

  #onTimer = (): void => {
    this.#timer = null;
    this.#timerAt = Infinity;
    // The deadline the timer was set for may no longer apply (its request was dispatched or left
    // its queue since). That is no event, so virtual time is left alone: each advance rounds, and
    // an extra one could change a later dispatch. The timer is set for the next deadline, if any.
    const top = this.#due.peek();
    if (top === undefined || top.dueMs > this.#clock.now()) {
      this.#arm();
      return;
    }
    this.#syncTime();
    const now = this.#lastRealTime;
    for (let r = this.#due.peek(); r !== undefined && r.dueMs <= now; r = this.#due.peek()) {
      this.#due.pop();
      if (r.phase === WAITING) {
        this.#removeWaiting(r, "time-out");
      } else if (r.phase === LINGERING) {
        this.#releaseSeats(r);
        this.#dispatchAsMuchAsPossible();
      }
    }
    this.#arm();
    this.#afterOperation();
  };

  // ---- bookkeeping ------------------------------------------------------

  #decide(r: Req, decision: "execute" | RejectReason): void {
    r.decision = decision;
    const waited = this.#lastRealTime - r.arrivalMs;
    if (decision !== "execute") {
      r.phase = DONE;
      this.#rejected[decision]++;
      this.#observer?.rejected(r, decision, waited, r.queue !== null);
    } else {
      this.#observer?.dispatched(r, waited);
    }
    if (r.onDecision !== null || r.waiter !== null) this.#decided.push(r);
  }

  /** Records seat demand and tells callers their decisions, once the state is consistent. */
  #afterOperation(): void {
    this.#noteDemand();
    // The telling is a function of its own, so that this one stays small enough to inline.
    if (!this.#notifying && this.#decided.length !== 0) this.#notify();
  }

  #noteDemand(): void {
    const demand = this.#totSeatsInUse + this.#totSeatsWaiting;
    if (demand !== this.#demand.value) this.#demand.set(demand, this.#lastRealTime);
  }

  #notify(): void {
    this.#notifying = true;
    const decided = this.#decided;
    try {
      // Callbacks may start or finish requests, which appends to `decided`.
      for (let i = 0; i < decided.length; i++) {
        const r = decided[i]!;
        const waiter = r.waiter, callback = r.onDecision;
        r.waiter = null;
        r.onDecision = null;
        waiter?.resolve(r.decision!);
        if (callback !== null) {
          try {
            callback(r);
          } catch (e) {
            // Reported, never corrupting the set nor escaping as an uncaught error.
            this.#onError(e);
          }
        }
      }
    } finally {
      decided.length = 0;
      this.#notifying = false;
    }
  }

  #growQueues(): void {
    const cfg = this.#cfg;
    if (cfg.desiredQueues > this.#queues.length) {
      for (let i = this.#queues.length; i < cfg.desiredQueues; i++) this.#queues.push(new Queue(i));
      this.#rebuildTree();
    }
    if (this.#hand.length !== cfg.handSize) this.#hand = new Int32Array(cfg.handSize);
  }

  #rebuildTree(): void {
    this.#tree.resize(this.#queues.length);
    for (const q of this.#queues) if (q.head !== null) this.#bound(q);
  }
}

/**
 * Caps the final phase of `r` to `limit` seats, preserving its work (Kubernetes:
 * `findDispatchQueueToBoundLocked`). Out of line: it is rare, and its caller is hot.
 */
function capFinalSeats(r: Req, limit: number): void {
  const finalWork = seatsTimesDuration(r.finalSeats, r.additionalLatencyMs);
  r.finalSeats = limit;
  r.additionalLatencyMs = durationPerSeatMs(finalWork, limit);
  r.maxSeats = r.initialSeats > limit ? r.initialSeats : limit;
}

function checkLimit(name: string, limit: number): void {
  checkNumber(
    limit,
    (n) => Number.isSafeInteger(n) && n >= 0,
    () =>
      `Cannot set the concurrency limit of queue set ${
        JSON.stringify(name)
      }: must be an integer >= 0, got ${limit}`,
  );
}

function requestSnapshot(r: Req, queueIndex: number, indexInQueue: number): RequestSnapshot {
  return {
    queueIndex,
    indexInQueue,
    arrivalMs: r.arrivalMs,
    startMs: r.phase === WAITING ? null : r.startMs,
    initialSeats: r.initialSeats,
    finalSeats: r.finalSeats,
    additionalLatencyMs: r.additionalLatencyMs,
    descriptor: r.descriptor,
  };
}
