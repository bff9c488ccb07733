/**
 * The embedded coordinator on the oldest runtimes we support: no API newer
 * than they have, and an internal error never leaves seats behind.
 */

import assert from "node:assert/strict";
import { EmbeddedCoordinator, FakeEventClock } from "../../mod.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";

Deno.test("queued requests work without Promise.withResolvers (Node 20 lacks it)", async () => {
  const saved = Promise.withResolvers;
  // deno-lint-ignore no-explicit-any
  delete (Promise as any).withResolvers;
  const clock = new FakeEventClock(0);
  const coordinator = new EmbeddedCoordinator(
    configOf(2, [limited("q", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } })]),
    { clock },
  );
  try {
    const request = { priorityLevel: "q", flowSchema: "fs", waitLimitMs: 1_000 };
    const first = await coordinator.acquire(request);
    assert.ok(first.admitted);
    const queued = coordinator.acquire(request);
    first.seat.release();
    const second = await queued;
    assert.ok(second.admitted, "dispatched from the queue");
    second.seat.release();
  } finally {
    Promise.withResolvers = saved;
    coordinator.close();
  }
});
