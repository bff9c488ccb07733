/** Helpers of the remote client tests: polling, and the leak check. */

import assert from "node:assert/strict";
import type { SeatRequest } from "../../src/coordinator/types.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import type { TestServer } from "./_server.ts";

/** Waits until `condition` holds, polling every few ms; fails after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean,
  message: string,
  timeoutMs = 3_000,
): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    assert.ok(performance.now() - started < timeoutMs, `timed out waiting: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The seat-leak check: the server's every level idle (after in-flight releases arrived). */
export async function assertNoLeak(server: TestServer): Promise<void> {
  await waitFor(
    () => server.coordinator.snapshot().levels.every((l) => l.queueSet.isIdle),
    "every seat back",
  );
  assertIdle(server.coordinator.snapshot());
}

/** A request of the `queued` level (limit 2) of the conformance configuration. */
export const queued = (extra: Partial<SeatRequest> = {}): SeatRequest => ({
  priorityLevel: "queued",
  flowSchema: "fs-queued",
  ...extra,
});

/** Milliseconds since `started`. */
export const since = (started: number): number => performance.now() - started;
