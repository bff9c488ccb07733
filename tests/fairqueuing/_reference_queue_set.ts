/**
 * A deliberately naive reference model of a queue set's decisions and
 * virtual-time state, for the differential test `queue_set_reference_test.ts`.
 *
 * It is written from the documented semantics, not from the code it checks
 * (nor translated from Kubernetes' `queueset.go`): `docs/semantics.md`
 * §4.1–§4.10 and the queue-set deviations of §11.3, and KEP-1040's fair
 * queuing. Everything is recomputed by scanning plain arrays:
 * seats in use, active queues and seat demand are summed over every request
 * whenever they are needed, and every dispatch scans every queue. Nothing is
 * cached, so nothing can drift.
 *
 * Seat-seconds are integers counting 1e-8 seat-seconds; the two rounding
 * helpers are the project's exported ones (`seatsTimesDuration`,
 * `durationPerSeatMs`), and hands are dealt by the project's `Dealer`
 * (shuffle sharding is tested apart, against a BigInt reference).
 *
 * Out of scope: abort signals (the model's `cancel` is what an abort does to
 * a waiting request), `close()`, observers, seat-demand statistics, and the
 * rebase of R at 2^50 units (the model throws if R ever gets there).
 *
 * @module
 */

import { Dealer } from "../../src/fairqueuing/shuffle_shard.ts";
import { durationPerSeatMs, seatsTimesDuration } from "../../src/_shared/seat_seconds.ts";
import type { QueueSetConfig, RejectReason } from "../../src/fairqueuing/types.ts";

/** What the model decided for a request (`null` while it waits). */
export type RefDecision = "execute" | RejectReason;

/** The life of a request in the model. */
export type RefPhase = "waiting" | "executing" | "lingering" | "done" | "rejected";

/** One request of the model. */
export interface RefRequest {
  /** Position in the order of arrival (0, 1, ...). */
  readonly id: number;
  readonly initialSeats: number;
  /** Final seats; capped to the limit when dispatched from a queue (§4.6). */
  finalSeats: number;
  /** Additional latency in ms; stretched when the final seats are capped (§4.6). */
  additionalLatencyMs: number;
  /** initialSeats·G + finalSeats·additionalLatency, each term rounded, as computed at arrival. */
  readonly work: number;
  readonly arrivalMs: number;
  /** R at arrival, in units. */
  readonly arrivalR: number;
  startMs: number;
  /** The queue it joined, or null (rejected before joining, or never queued). */
  queue: RefQueue | null;
  phase: RefPhase;
  decision: RefDecision | null;
  /** Clock time of its wait deadline, if it waited with one (due only while it waits). */
  deadlineMs: number | null;
  /** Clock time its final seats go back, if it lingers (due only while it lingers). */
  lingerEndMs: number | null;
}

/** One queue of the model. */
export interface RefQueue {
  /** Waiting requests, head first. */
  waiting: RefRequest[];
  /** Virtual time at which its head starts, in units. */
  nextDispatchR: number;
}

/** What the model shows of a queue. */
export interface RefQueueView {
  nextDispatchR: number;
  waitingRequests: number;
  executingRequests: number;
  seatsInUse: number;
  waitingWork: number;
}

/** What the model shows of the set (seat-seconds in integer units). */
export interface RefView {
  /** R at the model's clock time, without advancing it. */
  currentR: number;
  /** R as the last operation left it. */
  lastChangeR: number;
  /** The round-robin position, modulo the number of queues (-1 without queues). */
  robinIndex: number;
  waitingRequests: number;
  executingRequests: number;
  seatsInUse: number;
  seatsWaiting: number;
  isIdle: boolean;
  dispatched: number;
  rejected: Record<RejectReason, number>;
  queues: RefQueueView[];
}

/** What a request asks for. */
export interface RefStart {
  hash: bigint;
  initialSeats: number;
  finalSeats: number;
  additionalLatencyMs: number;
  /** Omitted: no wait limit. */
  waitLimitMs?: number;
}

/** The limit R must stay under (the real set rebases there; the model does not). */
const R_LIMIT = 2 ** 50;

const mod = (i: number, n: number) => ((i % n) + n) % n;

/** A naive queue set, driven by explicit clock times. */
export class ReferenceQueueSet {
  /** Every request ever started, by id. */
  readonly requests: RefRequest[] = [];
  /** "id:decision", in the order decisions were made. */
  readonly log: string[] = [];
  /**
   * Set when two timed events (wait deadlines, ends of lingering) fall on the
   * same instant: nothing specifies their order (§4.10 only says the set keeps
   * one timer), and a release before or after a deadline decides whether the
   * waiting request runs or times out; even two time-outs log in either order.
   */
  ambiguous = false;

  #g: number;
  /** Desired queues: -1 exempt, 0 no queuing, else the count (§4.1). */
  #desired = 0;
  #limit = 0;
  #queueLengthLimit = 0;
  #handSize = 0;
  #dealer: Dealer | null = null;
  /** Kubernetes ≤ 1.28 lazy wait limit (§4.10), or null. */
  #lazyWaitLimitMs: number | null = null;
  #queues: RefQueue[] = [];
  #r = 0;
  #lastMs: number;
  #nowMs: number;
  #robin = 0;
  #enqueues = 0;
  #dispatched = 0;
  #rejected: Record<RejectReason, number> = {
    "queue-full": 0,
    "concurrency-limit": 0,
    "time-out": 0,
    cancelled: 0,
  };

  constructor(config: QueueSetConfig, nowMs = 0, gMs = 3) {
    this.#g = gMs;
    this.#nowMs = nowMs;
    this.#lastMs = nowMs;
    this.#apply(config);
  }

  // ---- derived quantities, always recomputed ---------------------------

  #live(): RefRequest[] {
    return this.requests.filter((r) => r.phase === "executing" || r.phase === "lingering");
  }

  /** Seats held by executing and lingering requests, queued or not (§4.2). */
  #seatsInUse(): number {
    return sum(this.#live().map(maxSeats));
  }

  #executingCount(): number {
    return this.requests.filter((r) => r.phase === "executing").length;
  }

  #queueSeatsInUse(q: RefQueue): number {
    return sum(this.#live().filter((r) => r.queue === q).map(maxSeats));
  }

  #queueExecuting(q: RefQueue): number {
    return this.requests.filter((r) => r.queue === q && r.phase === "executing").length;
  }

  /** A queue is active while a request waits or executes in it (§4.3). */
  #active(q: RefQueue): boolean {
    return q.waiting.length > 0 || this.#queueExecuting(q) > 0;
  }

  #waitingCount(): number {
    return sum(this.#queues.map((q) => q.waiting.length));
  }

  /** dR/dt · dt for `dt` ms at the present state (§4.3), in units. */
  #increment(dt: number): number {
    const active = this.#queues.filter((q) => this.#active(q)).length;
    if (active === 0) return 0;
    // Seats demanded: every queue's seats in use (lingering included) plus the max seats of
    // its waiting requests. Requests without a queue do not count.
    const demand = sum(
      this.#queues.map((q) => this.#queueSeatsInUse(q) + sum(q.waiting.map(maxSeats))),
    );
    return seatsTimesDuration(Math.min(demand, this.#limit) / active, dt);
  }

  /** Advances R to the model's clock with the state before the operation (§4.3). */
  #sync(): void {
    const dt = this.#nowMs - this.#lastMs;
    if (dt > 0) {
      this.#r += this.#increment(dt);
      this.#lastMs = this.#nowMs;
      if (this.#r >= R_LIMIT) throw new Error("the model does not rebase R");
    }
  }

  /** Anti-windup (§4.7): no queue's nextDispatchR stays behind its head's arrival R. */
  #boundAll(): void {
    for (const q of this.#queues) {
      const head = q.waiting[0];
      if (head !== undefined && q.nextDispatchR < head.arrivalR) q.nextDispatchR = head.arrivalR;
    }
  }

  // ---- decisions ---------------------------------------------------------

  #decide(r: RefRequest, decision: RefDecision): void {
    r.decision = decision;
    this.log.push(`${r.id}:${decision}`);
    if (decision === "execute") {
      this.#dispatched++;
      r.phase = "executing";
      r.startMs = this.#nowMs;
    } else {
      this.#rejected[decision]++;
      r.phase = "rejected";
    }
  }

  /** Fitting (§4.5). */
  #fits(seats: number): boolean {
    if (this.#desired < 0) return true;
    if (seats > this.#limit) return this.#executingCount() === 0;
    return this.#seatsInUse() + seats <= this.#limit;
  }

  /** Dispatch (§4.6): the head with the least virtual finish, if it fits. */
  #dispatchOne(): boolean {
    const n = this.#queues.length;
    let best: RefQueue | null = null, bestIndex = -1, bestFinish = Infinity;
    for (let k = 1; k <= n; k++) {
      const i = mod(this.#robin + k, n);
      const q = this.#queues[i]!;
      const head = q.waiting[0];
      if (head === undefined) continue;
      const finish = q.nextDispatchR + head.work;
      if (finish < bestFinish) {
        best = q;
        bestIndex = i;
        bestFinish = finish;
      }
    }
    // The scan steps the round-robin position once per queue, so a full scan leaves it at
    // itself modulo n: -1 (after attrition removed the queue it pointed at) becomes n - 1.
    this.#robin = mod(this.#robin, n);
    if (best === null) return false;
    const head = best.waiting[0]!;
    if (!this.#fits(maxSeats(head))) return false; // head-of-line blocking
    best.waiting.shift();
    // Final seats above the limit are capped to it, the final work kept (§4.6). An exempt set
    // has no limit to cap to: its limit is "not enforced" (types.ts) and it drains queues left
    // from a limited past "regardless of its limit" (§11.3). (Kubernetes never gets here: its
    // exempt sets stop dispatching once their seats reach the limit.)
    if (this.#desired >= 0 && head.finalSeats > this.#limit) {
      const finalWork = seatsTimesDuration(head.finalSeats, head.additionalLatencyMs);
      head.finalSeats = this.#limit;
      head.additionalLatencyMs = durationPerSeatMs(finalWork, this.#limit);
    }
    this.#robin = bestIndex;
    this.#decide(head, "execute");
    best.nextDispatchR += head.work;
    this.#boundAll();
    return true;
  }

  #dispatchAsMuchAsPossible(): void {
    while (
      this.#waitingCount() > 0 &&
      (this.#desired < 0 || this.#seatsInUse() < this.#limit) &&
      this.#dispatchOne()
    );
  }

  /** A waiting request leaves its queue without executing (§4.10); nothing is dispatched. */
  #leave(r: RefRequest, reason: RejectReason): void {
    const q = r.queue!;
    q.waiting.splice(q.waiting.indexOf(r), 1);
    this.#decide(r, reason);
    this.#boundAll();
  }

  /** Seats given back (§4.7), then attrition of a surplus queue (§4.8, §11.3). */
  #release(r: RefRequest): void {
    r.phase = "done";
    const q = r.queue;
    if (q === null) return;
    const index = this.#queues.indexOf(q);
    if (index < 0) return; // removed already: stays removed
    if (this.#queues.length > this.#desired && !this.#active(q)) {
      this.#queues.splice(index, 1);
      if (this.#robin >= index) this.#robin--;
    }
  }

  /** Shuffle sharding (§4.4): the hand's queue with the least waiting work. */
  #chooseQueue(hash: bigint): number {
    const offset = this.#enqueues % this.#handSize;
    this.#enqueues++; // counted for every arrival, rejected or not, one queue or many
    const hand = this.#desired === 1 ? [0] : [...this.#dealer!.dealIntoHand(hash)];
    let best = -1, least = Infinity;
    for (let i = 0; i < hand.length; i++) {
      const qi = hand[(offset + i) % hand.length]!;
      const work = sum(this.#queues[qi]!.waiting.map((w) => w.work));
      if (work < least) {
        least = work;
        best = qi;
      }
    }
    return best;
  }

  // ---- operations ------------------------------------------------------

  /** Starts a request at the model's clock time (§4.4). */
  start(init: RefStart): RefRequest {
    this.#sync();
    const r: RefRequest = {
      id: this.requests.length,
      initialSeats: init.initialSeats,
      finalSeats: init.finalSeats,
      additionalLatencyMs: init.additionalLatencyMs,
      work: seatsTimesDuration(init.initialSeats, this.#g) +
        seatsTimesDuration(init.finalSeats, init.additionalLatencyMs),
      arrivalMs: this.#nowMs,
      arrivalR: this.#r,
      startMs: NaN,
      queue: null,
      phase: "waiting",
      decision: null,
      deadlineMs: null,
      lingerEndMs: null,
    };
    this.requests.push(r);
    if (this.#desired <= 0) {
      // Exempt or no queuing: now or never, without a queue (§4.4, §4.9).
      this.#decide(r, this.#fits(maxSeats(r)) ? "execute" : "concurrency-limit");
      return r;
    }
    const q = this.#queues[this.#chooseQueue(init.hash)]!;
    if (this.#lazyWaitLimitMs !== null) {
      // ≤ 1.28: requests that waited in this queue longer than the limit go first (§4.10).
      for (const w of [...q.waiting]) {
        if (this.#nowMs - w.arrivalMs > this.#lazyWaitLimitMs) this.#leave(w, "time-out");
      }
    }
    if (this.#seatsInUse() >= this.#limit && q.waiting.length >= this.#queueLengthLimit) {
      this.#decide(r, "queue-full");
      return r;
    }
    if (!this.#active(q)) q.nextDispatchR = this.#r; // a queue becoming active starts at R
    r.queue = q;
    q.waiting.push(r);
    this.#boundAll();
    this.#dispatchAsMuchAsPossible();
    if (r.phase === "waiting" && init.waitLimitMs !== undefined) {
      if (init.waitLimitMs <= 0) this.#leave(r, "time-out");
      else r.deadlineMs = this.#nowMs + init.waitLimitMs;
    }
    return r;
  }

  /** Finishes an executing request after `executionMs` (default: the time since it started). */
  finish(r: RefRequest, executionMs?: number): void {
    if (r.phase !== "executing") throw new Error(`request ${r.id} is not executing`);
    this.#sync();
    const s = executionMs ?? this.#nowMs - r.startMs;
    r.phase = "done";
    if (r.queue !== null) {
      // The guess G is replaced by the actual S: nextDispatchR += initialSeats · (S − G) (§4.7).
      r.queue.nextDispatchR -= seatsTimesDuration(r.initialSeats, this.#g - s);
      this.#boundAll();
    }
    if (r.additionalLatencyMs > 0) {
      r.phase = "lingering";
      r.lingerEndMs = this.#nowMs + r.additionalLatencyMs;
    } else {
      this.#release(r);
    }
    this.#dispatchAsMuchAsPossible();
  }

  /** Cancels a waiting request (§4.10). */
  cancel(r: RefRequest): void {
    if (r.phase !== "waiting") throw new Error(`request ${r.id} is not waiting`);
    this.#sync();
    this.#leave(r, "cancelled");
  }

  /** Changes the concurrency limit (§4.8). */
  setConcurrencyLimit(limit: number): void {
    this.#sync();
    this.#limit = limit;
    this.#dispatchAsMuchAsPossible();
  }

  /** Applies a new configuration (§4.8). */
  configure(config: QueueSetConfig): void {
    this.#sync();
    this.#apply(config);
    this.#dispatchAsMuchAsPossible();
  }

  #apply(config: QueueSetConfig): void {
    if (config.type === "Exempt") {
      this.#desired = -1;
      this.#limit = config.concurrencyLimit ?? 0;
      this.#lazyWaitLimitMs = null;
      return;
    }
    this.#limit = config.concurrencyLimit;
    this.#lazyWaitLimitMs = config.requestWaitLimitMs ?? null;
    const q = config.queuing;
    if (q === null) {
      this.#desired = 0;
      return;
    }
    this.#desired = q.queues;
    this.#queueLengthLimit = q.queueLengthLimit;
    this.#handSize = q.handSize;
    this.#dealer = new Dealer(q.queues, q.handSize);
    while (this.#queues.length < q.queues) this.#queues.push({ waiting: [], nextDispatchR: 0 });
  }

  /**
   * Moves the clock to `t`, handling wait deadlines and ends of lingering in
   * time order, each at its own instant (§4.10). Nothing else is an event:
   * R is brought up to date at those instants only.
   */
  advanceTo(t: number): void {
    for (;;) {
      const times = [
        ...this.requests.flatMap((r) =>
          r.phase === "waiting" && r.deadlineMs !== null
            ? [r.deadlineMs]
            : r.phase === "lingering"
            ? [r.lingerEndMs!]
            : []
        ),
      ].filter((x) => x <= t);
      if (times.length === 0) break;
      this.#nowMs = Math.max(this.#nowMs, Math.min(...times));
      this.#sync();
      const due = this.requests.filter((r) =>
        (r.phase === "waiting" && r.deadlineMs !== null && r.deadlineMs <= this.#nowMs) ||
        (r.phase === "lingering" && r.lingerEndMs! <= this.#nowMs)
      );
      if (due.length > 1) this.ambiguous = true;
      // Deadlines first, by arrival, then lingering ends: arbitrary, see `ambiguous`.
      for (const r of due) {
        if (r.phase === "waiting") this.#leave(r, "time-out");
      }
      for (const r of due) {
        if (r.phase === "lingering") {
          this.#release(r);
          this.#dispatchAsMuchAsPossible();
        }
      }
    }
    if (t > this.#nowMs) this.#nowMs = t;
  }

  /** The queue index of a request as the set reports it: -1 when none or removed. */
  queueIndexOf(r: RefRequest): number {
    return r.queue === null ? -1 : this.#queues.indexOf(r.queue);
  }

  /** The requests waiting, by id. */
  waitingRequests(): RefRequest[] {
    return this.requests.filter((r) => r.phase === "waiting");
  }

  /** The requests executing, by id. */
  executingRequests(): RefRequest[] {
    return this.requests.filter((r) => r.phase === "executing");
  }

  /** The state, as the set's snapshot shows it. */
  view(): RefView {
    const n = this.#queues.length;
    return {
      currentR: this.#r + this.#increment(this.#nowMs - this.#lastMs),
      lastChangeR: this.#r,
      robinIndex: n === 0 ? -1 : mod(this.#robin, n),
      waitingRequests: this.#waitingCount(),
      executingRequests: this.#executingCount(),
      seatsInUse: this.#seatsInUse(),
      seatsWaiting: sum(this.requests.filter((r) => r.phase === "waiting").map(maxSeats)),
      isIdle: this.#waitingCount() === 0 && this.#executingCount() === 0,
      dispatched: this.#dispatched,
      rejected: { ...this.#rejected },
      queues: this.#queues.map((q) => ({
        nextDispatchR: q.nextDispatchR,
        waitingRequests: q.waiting.length,
        executingRequests: this.#queueExecuting(q),
        seatsInUse: this.#queueSeatsInUse(q),
        waitingWork: sum(q.waiting.map((w) => w.work)),
      })),
    };
  }
}

function maxSeats(r: RefRequest): number {
  return Math.max(r.initialSeats, r.finalSeats);
}

function sum(xs: number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}
