/**
 * Waiting on the real clock, for the tests that talk to servers, processes
 * or workerd on loopback (everything else runs on a fake clock).
 */

import assert from "node:assert/strict";
import { systemClock } from "../../mod.ts";

/** Resolves after `ms` on the system clock. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => systemClock.setTimer(ms, resolve));
}

/** Waits until `condition` holds, polling every 5 ms; fails naming `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean,
  what: string,
  timeoutMs = 3_000,
): Promise<void> {
  const end = systemClock.now() + timeoutMs;
  while (!condition()) {
    assert.ok(systemClock.now() < end, `timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * `promise`, or an assertion failure after `ms` whose message is `what`
 * (called then, so it can describe the state at that time); the timer is
 * cleared either way.
 */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string | (() => string),
): Promise<T> {
  let cancel = () => {};
  const deadline = new Promise<never>((_, reject) => {
    const timer = systemClock.setTimer(ms, () =>
      reject(
        new assert.AssertionError({
          message: typeof what === "string" ? `not within ${ms} ms: ${what}` : what(),
        }),
      ));
    cancel = () => timer.cancel();
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    cancel();
  }
}
