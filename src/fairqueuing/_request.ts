/**
 * The queue set's request record, which is also the handle returned to
 * callers. It is kept flat (no per-request closures, promise or listener
 * objects unless asked for) because it is what a queued request costs in
 * memory. Internal to the queue set.
 *
 * @module
 */

import type { Queue } from "./_queue.ts";
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
  owner: RequestOwner;
  queue: Queue | null = null;
  prev: Req | null = null;
  next: Req | null = null;
  phase = WAITING;
  decision: Decision | null = null;
  initialSeats: number;
  finalSeats: number;
  /** max(initialSeats, finalSeats): held for the whole life of the request. */
  maxSeats: number;
  additionalLatencyMs: number;
  /** initialSeats·G + finalSeats·additionalLatency, in seat-seconds units. */
  totalWork = 0;
  arrivalMs: number;
  arrivalR = 0;
  startMs = NaN;
  /** Clock time of this request's pending timer (wait deadline or end of lingering). */
  dueMs = Infinity;
  /** Position in the owner's timer heap, or -1. */
  heapIndex = -1;
  signal: AbortSignal | null = null;
  onDecision: ((request: QueueSetRequest) => void) | null = null;
  waiter: Waiter | null = null;
  descriptor: RequestDescriptor;

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
      const { promise, resolve } = Promise.withResolvers<Decision>();
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
