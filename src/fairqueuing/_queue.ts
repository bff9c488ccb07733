/**
 * A queue set's queues and requests (Kubernetes' `queue` and `request` in
 * `fairqueuing/queueset/types.go`). A request is at once its
 * record, its node in a queue's intrusive FIFO (or in a list of executing
 * requests), its entry in the timer heap, and the handle returned to
 * callers; it is kept flat (no per-request closures, promises or listeners
 * unless asked for) because it is what a queued request costs in memory.
 * Internal to the queue set.
 *
 * @module
 */

import type {
  Decision,
  FinishOptions,
  QueueSetRequest,
  RejectReason,
  RequestDescriptor,
} from "./types.ts";

/** Phases of a request. */
export const WAITING = 0, EXECUTING = 1, LINGERING = 2, DONE = 3;

/** What a request needs from its queue set. */
export interface RequestOwner {
  /** Finishes an executing request; false when it was not executing. */
  finish(r: Req, executionMs: number | undefined): boolean;
  /** Rejects a waiting request with `reason`; false when it was not waiting. */
  reject(r: Req, reason: RejectReason): boolean;
}

interface Waiter {
  promise: Promise<Decision>;
  resolve: (d: Decision) => void;
}

/** A request: record, FIFO node, timer-heap entry and public handle in one object. */
export class Req implements QueueSetRequest {
  // The fields the constructor sets are `declare`d: a class field would first be defined as
  // `undefined`, leaving a number field generic (a new heap number at every store).
  declare owner: RequestOwner;
  queue: Queue | null = null;
  prev: Req | null = null;
  next: Req | null = null;
  phase = WAITING;
  decision: Decision | null = null;
  declare initialSeats: number;
  declare finalSeats: number;
  /** max(initialSeats, finalSeats): held for the whole life of the request. */
  declare maxSeats: number;
  declare additionalLatencyMs: number;
  /** initialSeats·G + finalSeats·additionalLatency, in seat-seconds units. */
  totalWork = 0;
  declare arrivalMs: number;
  arrivalR = 0;
  startMs = NaN;
  /** Clock time of this request's pending timer (wait deadline or end of lingering). */
  dueMs = Infinity;
  /** Position in the owner's timer heap, or -1. */
  heapIndex = -1;
  signal: AbortSignal | null = null;
  onDecision: ((request: QueueSetRequest) => void) | null = null;
  waiter: Waiter | null = null;
  declare descriptor: RequestDescriptor;

  constructor(
    owner: RequestOwner,
    initialSeats: number,
    finalSeats: number,
    additionalLatencyMs: number,
    arrivalMs: number,
    descriptor: RequestDescriptor,
  ) {
    this.owner = owner;
    this.initialSeats = initialSeats;
    this.finalSeats = finalSeats;
    this.maxSeats = initialSeats > finalSeats ? initialSeats : finalSeats;
    this.additionalLatencyMs = additionalLatencyMs;
    this.arrivalMs = arrivalMs;
    this.descriptor = descriptor;
  }

  get done(): boolean {
    return this.phase >= LINGERING;
  }

  get queueIndex(): number {
    return this.queue === null ? -1 : this.queue.index;
  }

  wait(): Promise<Decision> {
    if (this.decision !== null) return Promise.resolve(this.decision);
    if (this.waiter === null) {
      // Not Promise.withResolvers: Node 20 lacks it (ES2024).
      let resolve!: (d: Decision) => void;
      const promise = new Promise<Decision>((r) => (resolve = r));
      this.waiter = { promise, resolve };
    }
    return this.waiter.promise;
  }

  finish(options?: FinishOptions): boolean {
    if (this.phase === EXECUTING) return this.owner.finish(this, options?.executionMs);
    if (this.phase === WAITING) this.owner.reject(this, "cancelled");
    return false;
  }

  cancel(): boolean {
    return this.phase === WAITING && this.owner.reject(this, "cancelled");
  }

  [Symbol.dispose](): void {
    this.finish();
  }
}

/** Holds a list of executing requests (linked through the same `prev`/`next` as the FIFO). */
export interface ExecutingHolder {
  /** Most recently started executing request. */
  executingHead: Req | null;
}

/** Adds executing request `r` (no longer in any FIFO) to `holder`'s list. */
export function linkExecuting(holder: ExecutingHolder, r: Req): void {
  const head = holder.executingHead;
  r.prev = null;
  r.next = head;
  if (head !== null) head.prev = r;
  holder.executingHead = r;
}

/** Removes `r` from `holder`'s list of executing requests. */
export function unlinkExecuting(holder: ExecutingHolder, r: Req): void {
  const { prev, next } = r;
  if (prev === null) holder.executingHead = next;
  else prev.next = next;
  if (next !== null) next.prev = prev;
  r.prev = r.next = null;
}

/**
 * A queue: an intrusive doubly linked FIFO of waiting requests, the list of
 * its executing requests (for `dump_requests`), plus bookkeeping.
 */
export class Queue implements ExecutingHolder {
  /** Position in the queue set's queue list (changes when an earlier queue is removed). */
  index: number;
  /** Oldest waiting request. */
  head: Req | null = null;
  /** Youngest waiting request. */
  tail: Req | null = null;
  /** Requests waiting. */
  waiting = 0;
  /** Σ initialSeats over waiting requests. */
  initialSeatsSum = 0;
  /** Σ maxSeats over waiting requests. */
  maxSeatsSum = 0;
  /** Σ totalWork over waiting requests, in seat-seconds units. */
  totalWorkSum = 0;
  /** Virtual time at which the queue's next request starts (seat-seconds units). */
  nextDispatchR = 0;
  /** Requests executing (not counting those lingering on final seats). */
  executing = 0;
  /** Seats held by this queue's executing and lingering requests. */
  seatsInUse = 0;
  /** This queue's executing requests (not the lingering ones), newest first. */
  executingHead: Req | null = null;

  constructor(index: number) {
    this.index = index;
  }

  /** True when the queue has a waiting or an executing request (it counts for virtual time). */
  get active(): boolean {
    return this.waiting > 0 || this.executing > 0;
  }

  /** Appends `r` to the FIFO and adds it to the sums. */
  push(r: Req): void {
    r.prev = this.tail;
    r.next = null;
    if (this.tail === null) this.head = r;
    else this.tail.next = r;
    this.tail = r;
    this.waiting++;
    this.initialSeatsSum += r.initialSeats;
    this.maxSeatsSum += r.maxSeats;
    this.totalWorkSum += r.totalWork;
  }

  /** Unlinks waiting request `r` (anywhere in the FIFO) and subtracts it from the sums. */
  remove(r: Req): void {
    const { prev, next } = r;
    if (prev === null) this.head = next;
    else prev.next = next;
    if (next === null) this.tail = prev;
    else next.prev = prev;
    r.prev = r.next = null;
    this.waiting--;
    this.initialSeatsSum -= r.initialSeats;
    this.maxSeatsSum -= r.maxSeats;
    this.totalWorkSum -= r.totalWork;
  }
}
