/**
 * One queue of a queue set (spec §4.1): a FIFO of waiting requests with
 * running sums over them, the queue's virtual dispatch time, and its
 * executing requests and seats. Internal to the queue set.
 *
 * @module
 */

import type { Req } from "./_request.ts";

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
