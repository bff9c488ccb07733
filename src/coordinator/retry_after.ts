/**
 * The `Retry-After` value of a 429 (Kubernetes' `droppedRequestsTracker`, in
 * `pkg/util/flowcontrol/dropped_requests_tracker.go`): per priority level,
 * it doubles (up to 32 s) while drops stay heavy and decays by one second
 * per second-with-drops when they become rare.
 *
 * @module
 */

import { checkNumber } from "../_shared/errors.ts";

/** The largest `Retry-After`, in seconds. */
export const MAX_RETRY_AFTER_SECONDS = 32;

/** Drops counted in one wall-clock second. */
interface SecondCount {
  unix: number;
  requests: number;
}

/** One level's state. */
class LevelDrops {
  history: SecondCount[] = [];
  currentUnix = 0;
  currentCount = 0;
  retryAfter = 1;
  lastIncreaseUnix = 0;

  record(u: number): void {
    if (u === this.currentUnix) {
      this.currentCount++;
      return;
    }
    // The second just ended joins the history (the very first call appends (0, 0)).
    const ended = this.currentUnix;
    this.history.push({ unix: ended, requests: this.currentCount });
    const keep = Math.min(2 * this.retryAfter, MAX_RETRY_AFTER_SECONDS);
    let drop = 0;
    while (drop < this.history.length && ended - this.history[drop]!.unix > keep) drop++;
    if (drop > 0) this.history.splice(0, drop);
    this.currentUnix = u;
    this.currentCount = 1;
    this.#update(u);
  }

  #update(u: number): void {
    const ra = this.retryAfter;
    let dropped = 0;
    // From the newest second back, up to the first one older than the window. The history is in
    // order of arrival: after the wall clock stepped back, an older second may follow a newer one,
    // and Kubernetes counts only what comes after the last second out of the window.
    const history = this.history;
    for (let i = history.length - 1; i >= 0; i--) {
      const h = history[i]!;
      if (u - h.unix > ra) break;
      if (h.unix < u) dropped += h.requests;
    }
    if (u - this.lastIncreaseUnix >= ra && dropped >= 3 * ra) {
      this.retryAfter = Math.min(2 * ra, MAX_RETRY_AFTER_SECONDS);
      this.lastIncreaseUnix = u;
    } else if (dropped < ra && ra > 1) {
      this.retryAfter = ra - 1;
    }
  }
}

/**
 * Tracks rejected requests per priority level and derives their
 * `Retry-After`. Time is passed in as integer Unix seconds (the caller
 * reads its clock), so the tracker is deterministic.
 *
 * @example
 * ```ts
 * import { DroppedRequestsTracker } from "./retry_after.ts";
 * const tracker = new DroppedRequestsTracker();
 * for (let s = 100; s < 102; s++) {
 *   for (let i = 0; i < 10; i++) tracker.recordDroppedRequest("workload-low", s);
 * }
 * tracker.retryAfter("workload-low"); // 2
 * tracker.retryAfter("global-default"); // 1: never dropped
 * ```
 */
export class DroppedRequestsTracker {
  #levels = new Map<string, LevelDrops>();

  /**
   * Records one rejected request of `priorityLevel` at `unixSeconds`.
   * The value only changes when a drop happens in a new second (no decay
   * without drops). Read {@linkcode DroppedRequestsTracker.retryAfter}
   * after recording, as Kubernetes does.
   *
   * @throws {TypeError} when `priorityLevel` is not a string.
   * @throws {RangeError} when `unixSeconds` is not a safe integer ({TypeError}: not a number).
   */
  recordDroppedRequest(priorityLevel: string, unixSeconds: number): void {
    if (typeof priorityLevel !== "string") {
      throw new TypeError(
        `Cannot record a dropped request: priorityLevel must be a string, got ${typeof priorityLevel}`,
      );
    }
    checkNumber(
      unixSeconds,
      Number.isSafeInteger,
      () => `Cannot record a dropped request: unixSeconds must be an integer, got ${unixSeconds}`,
    );
    let level = this.#levels.get(priorityLevel);
    if (level === undefined) {
      level = new LevelDrops();
      this.#levels.set(priorityLevel, level);
    }
    level.record(unixSeconds);
  }

  /** The `Retry-After` of `priorityLevel`, in whole seconds (1 when it never dropped). */
  retryAfter(priorityLevel: string): number {
    return this.#levels.get(priorityLevel)?.retryAfter ?? 1;
  }
}
