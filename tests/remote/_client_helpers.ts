/** Helpers of the remote client tests: the leak check, a request, elapsed time. */

import type { SeatRequest } from "../../src/coordinator/types.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { waitFor } from "../_helpers/real_time.ts";
import type { TestServer } from "./_server.ts";

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
