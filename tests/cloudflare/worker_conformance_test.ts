/**
 * The coordinator conformance suite against the Worker-side coordinator of
 * the Cloudflare topology, with one level host per level in this process
 * (the same code the Durable Objects run, minus workerd).
 */

import assert from "node:assert/strict";
import { coordinatorConformance } from "../_helpers/coordinator_conformance.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { inProcessTopology } from "./_in_process.ts";

coordinatorConformance("WorkerCoordinator over level hosts", (config, clock) => {
  const { hosts, coordinator } = inProcessTopology(config, clock);
  return {
    coordinator,
    close() {
      try {
        for (const host of hosts.values()) assertIdle(host.snapshot());
        assert.equal(coordinator.stats.fallbacks, 0, "every answer came from a level host");
        assert.equal(coordinator.stats.errors, 0);
      } finally {
        for (const host of hosts.values()) host.close();
        coordinator.close();
      }
      assert.equal(clock.pendingTimers, 0, "no timer left behind");
    },
  };
});
