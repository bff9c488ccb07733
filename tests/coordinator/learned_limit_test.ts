/**
 * A learned server concurrency limit applied to the embedded coordinator as
 * a new ServerCL: limits recomputed, what waits kept in order.
 */

import assert from "node:assert/strict";
import { GradientController } from "../../src/adaptive/gradient_controller.ts";
import { bootstrapConfiguration } from "../../src/config/bootstrap.ts";
import { effectiveConfiguration, withServerConcurrencyLimit } from "../../src/config/effective.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import {
  applyServerConcurrencyLimit,
  followLearnedLimit,
} from "../../src/coordinator/learned_limit.ts";
import type { Seat } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

Deno.test("withServerConcurrencyLimit gives what effectiveConfiguration gives at that limit", () => {
  const objects = bootstrapConfiguration();
  for (const limit of [3, 8, 20, 100, 600, 1000]) {
    const rescaled = withServerConcurrencyLimit(effectiveConfiguration(objects), limit);
    assert.deepEqual(rescaled, effectiveConfiguration(objects, { serverConcurrencyLimit: limit }));
  }
  assert.throws(
    () => withServerConcurrencyLimit(effectiveConfiguration(objects), 0),
    {
      name: "RangeError",
      message: "Cannot compute limits: server concurrency limit must be a positive integer, got 0",
    },
  );
});

Deno.test("withServerConcurrencyLimit keeps the FlowSchemas' order, imagined ones included", () => {
  const base = effectiveConfiguration({ flowSchemas: [], priorityLevels: [] });
  const rescaled = withServerConcurrencyLimit(base, 7);
  assert.equal(rescaled.flowSchemas, base.flowSchemas);
  assert.equal(rescaled.dangling, base.dangling);
  assert.deepEqual(rescaled.priorityLevels.map((pl) => pl.nominal), [0, 7]);
});

const ONE_QUEUE = { queues: 1, handSize: 1, queueLengthLimit: 50 };

Deno.test("applyServerConcurrencyLimit: a lower then higher limit keeps what waits, in order", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(configOf(10, [limited("catch-all", { queuing: ONE_QUEUE })]), {
    clock,
  });
  const order: number[] = [];
  const seats: Seat[] = [];
  for (let i = 0; i < 16; i++) {
    c.acquire({ priorityLevel: "catch-all", flowSchema: "fs" }).then((a) => {
      assert.ok(a.admitted);
      order.push(i);
      seats.push(a.seat);
    });
  }
  await settle();
  assert.equal(order.length, 10);
  assert.equal(applyServerConcurrencyLimit(c, 4), true);
  assert.equal(applyServerConcurrencyLimit(c, 4), false);
  assert.equal(c.configuration.serverConcurrencyLimit, 4);
  // 10 run, 6 wait; releasing 7 leaves 3 running: below 4, one more starts.
  for (const s of seats.splice(0, 7)) s.release();
  await settle();
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const snapshot = c.snapshot().levels.find((l) => l.name === "catch-all")!;
  assert.equal(snapshot.currentLimit, 4);
  assert.equal(snapshot.queueSet.waitingRequests, 5);
  applyServerConcurrencyLimit(c, 12);
  await settle();
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
  for (const s of seats) s.release();
  c.close();
  assert.equal(applyServerConcurrencyLimit(c, 5), false);
});

Deno.test("followLearnedLimit: the coordinator's ServerCL follows the controller until stopped", () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(effectiveConfiguration(bootstrapConfiguration()), { clock });
  using controller = new GradientController({ minRttRequests: 1 }, { clock });
  const stop = followLearnedLimit(c, controller);
  assert.equal(c.configuration.serverConcurrencyLimit, 20, "a window at the initial limit");
  clock.advance(1000);
  assert.equal(c.configuration.serverConcurrencyLimit, 3, "the minRTT measurement's pin");
  clock.advance(50);
  controller.record({ latencyMs: 50, outcome: "ok" });
  assert.equal(c.configuration.serverConcurrencyLimit, 20);
  // Global-default's nominal limit is recomputed as at ServerCL 20: ceil(20 × 20 / 245).
  assert.equal(c.snapshot().levels.find((l) => l.name === "global-default")!.nominalLimit, 2);
  stop();
  controller.record({ latencyMs: 50, outcome: "ok" });
  clock.advance(1000);
  assert.ok(controller.limit > 20);
  assert.equal(c.configuration.serverConcurrencyLimit, 20);
});
