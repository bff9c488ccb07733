/**
 * The wrapper through which a queue set calls its `QueueSetObserver`
 * (`types.ts`).
 *
 * @module
 */

import type { QueueSetObserver, QueueSetRequest, RejectReason } from "./types.ts";

/**
 * The observer as the queue set calls it: every method there, none throwing into the queue
 * set. Each method names its arguments and calls the observer's own method by name, which the
 * compiler can inline; one wrapper with rest arguments would call five methods through one
 * `apply`.
 */
export class SafeObserver implements Required<QueueSetObserver> {
  #observer: QueueSetObserver;
  #onError: (error: unknown) => void;
  constructor(observer: QueueSetObserver, onError: (error: unknown) => void) {
    this.#observer = observer;
    this.#onError = onError;
  }
  enqueued(request: QueueSetRequest, queueLength: number): void {
    try {
      this.#observer.enqueued?.(request, queueLength);
    } catch (e) {
      this.#onError(e);
    }
  }
  dispatched(request: QueueSetRequest, waitedMs: number): void {
    try {
      this.#observer.dispatched?.(request, waitedMs);
    } catch (e) {
      this.#onError(e);
    }
  }
  rejected(
    request: QueueSetRequest,
    reason: RejectReason,
    waitedMs: number,
    queued: boolean,
  ): void {
    try {
      this.#observer.rejected?.(request, reason, waitedMs, queued);
    } catch (e) {
      this.#onError(e);
    }
  }
  finished(request: QueueSetRequest, executionMs: number): void {
    try {
      this.#observer.finished?.(request, executionMs);
    } catch (e) {
      this.#onError(e);
    }
  }
  released(request: QueueSetRequest, seats: number): void {
    try {
      this.#observer.released?.(request, seats);
    } catch (e) {
      this.#onError(e);
    }
  }
}
