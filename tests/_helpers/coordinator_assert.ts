/** Assertions on coordinator snapshots. */

import assert from "node:assert/strict";
import type { CoordinatorSnapshot } from "../../src/observe/types.ts";

/** Every level idle: nothing waits, executes or lingers, and no level is quiescing. */
export function assertIdle(snapshot: CoordinatorSnapshot): void {
  for (const l of snapshot.levels) {
    const qs = l.queueSet;
    assert.deepEqual(
      {
        level: l.name,
        quiescing: l.quiescing,
        waiting: qs.waitingRequests,
        executing: qs.executingRequests,
        seatsInUse: qs.seatsInUse,
        seatsWaiting: qs.seatsWaiting,
        isIdle: qs.isIdle,
      },
      {
        level: l.name,
        quiescing: false,
        waiting: 0,
        executing: 0,
        seatsInUse: 0,
        seatsWaiting: 0,
        isIdle: true,
      },
    );
  }
}
