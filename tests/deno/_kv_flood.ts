/**
 * What the Deno KV holder tests share with their child processes: the
 * configuration, the holder timings (short, on the real clock) and a flood
 * of requests that keeps a holder's level busy.
 */

import type { BudgetHolderOptions } from "../../src/budgets/holder.ts";
import type { Coordinator } from "../../src/coordinator/types.ts";
import { systemClock } from "../../src/fairqueuing/clock.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";

/** The level under test. */
export const LEVEL = "work";

/** `work` has 6 seats (as many shares as the mandatory `catch-all`, of 12). */
export const CONFIG = configOf(12, [
  exempt(),
  limited(LEVEL, { shares: 5, queuing: { queues: 16, handSize: 4, queueLengthLimit: 50 } }),
]);

/** The limit of {@linkcode LEVEL}. */
export const LIMIT = 6;

/**
 * The holders' timings: a dead holder's seats come back 650 ms after its
 * last renewal. A store operation may take 250 ms (the machine is shared);
 * one that fails leaves a holder without a lease `closed` (no seat), not
 * `local` (a seat outside the budgets), so that the level's limit holds
 * exactly whatever the machine's speed.
 */
export const TIMINGS: Omit<BudgetHolderOptions, "store"> = {
  policy: "closed",
  periodMs: 100,
  leaseMs: 400,
  drainMs: 200,
  driftMarginMs: 50,
  storeTimeoutMs: 250,
};

/** How long an admitted request of a flood holds its seat, in ms. */
export const HOLD_MS = 30;

/** Wall-clock milliseconds, sub-millisecond, comparable across the processes of this machine. */
export function wallTime(): number {
  return performance.timeOrigin + systemClock.now();
}

/**
 * Resolves after `ms` on the system clock (as `tests/_helpers/real_time.ts`,
 * without loading the whole core into the child processes).
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => systemClock.setTimer(ms, resolve));
}

/** A running flood; `stop()` resolves once every worker has let go of its seat. */
export interface Flood {
  /** Requests admitted so far. */
  readonly admitted: number;
  /** Stops asking; close the coordinator after, so that waiting requests are answered. */
  stop(): Promise<void>;
}

/**
 * `workers` requests of {@linkcode LEVEL} in a closed loop on `coordinator`,
 * each on its own flow: an admitted one calls `onAdmit`, holds its seat
 * {@linkcode HOLD_MS}, calls `onRelease` and releases it; a rejected one
 * retries 5 ms later.
 */
export function flood(
  coordinator: Coordinator,
  workers: number,
  hooks: { onAdmit?: () => void; onRelease?: () => void } = {},
): Flood {
  let stopped = false;
  let admitted = 0;
  const seed = Math.floor(Math.random() * 2 ** 32);
  const worker = async (i: number) => {
    while (!stopped) {
      const a = await coordinator.acquire({
        priorityLevel: LEVEL,
        flowSchema: "flood",
        flowHash: { hi: seed, lo: i },
        waitLimitMs: 1_000,
      });
      if (!a.admitted) {
        if (!stopped) await sleep(5);
        continue;
      }
      admitted++;
      hooks.onAdmit?.();
      await sleep(HOLD_MS);
      hooks.onRelease?.();
      a.seat.release();
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, i) => worker(i)));
  return {
    get admitted() {
      return admitted;
    },
    stop() {
      stopped = true;
      return running.then(() => {});
    },
  };
}
