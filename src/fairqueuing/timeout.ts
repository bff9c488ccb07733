/**
 * Waiting for a promise at most so long, on an injected {@linkcode Clock}
 * (a call to another object may never answer; tests advance a fake clock
 * instead of sleeping).
 *
 * @module
 */

import type { Clock } from "./clock.ts";

/** What {@linkcode withTimeout} resolves with when time ran out first. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * `promise`'s value, or {@linkcode TIMED_OUT} once `timeoutMs` passed on
 * `clock` without it settling; a rejection passes through. The timer is
 * cancelled as soon as either happens, so nothing is left pending.
 *
 * @throws {RangeError} when `timeoutMs` is not a number >= 0.
 * @example
 * ```ts
 * import { FakeEventClock } from "./clock.ts";
 * import { TIMED_OUT, withTimeout } from "./timeout.ts";
 * const clock = new FakeEventClock();
 * const answer = withTimeout(clock, new Promise<string>(() => {}), 100);
 * clock.advance(100);
 * (await answer) === TIMED_OUT; // true
 * ```
 */
export function withTimeout<T>(
  clock: Clock,
  promise: PromiseLike<T>,
  timeoutMs: number,
): Promise<T | typeof TIMED_OUT> {
  if (!(typeof timeoutMs === "number" && timeoutMs >= 0)) {
    throw new RangeError(
      `Cannot wait for a promise: timeoutMs must be a number >= 0, got ${String(timeoutMs)}`,
    );
  }
  return new Promise((resolve, reject) => {
    const timer = clock.setTimer(timeoutMs, () => resolve(TIMED_OUT));
    promise.then(
      (value) => {
        timer.cancel();
        resolve(value);
      },
      (error) => {
        timer.cancel();
        reject(error);
      },
    );
  });
}
