/** The coordinator conformance suite, run against the EmbeddedCoordinator. */

import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { coordinatorConformance } from "../_helpers/coordinator_conformance.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";

coordinatorConformance("EmbeddedCoordinator", (config, clock) => {
  const coordinator = new EmbeddedCoordinator(config, { clock });
  return {
    coordinator,
    close() {
      try {
        assertIdle(coordinator.snapshot());
        assert.deepEqual(
          coordinator.snapshot().levels.map((l) => l.name),
          ["catch-all", "exempt", "queued", "sharded"],
        );
      } finally {
        coordinator.close();
      }
      assert.equal(clock.pendingTimers, 0, "no timer left behind");
    },
  };
});
