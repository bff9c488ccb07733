import assert from "node:assert/strict";
import {
  bootstrapConfiguration,
  effectiveConfiguration,
  FakeEventClock,
  seatRequestFor,
} from "../../mod.ts";
import { Classifier } from "../../src/classify/classifier.ts";
import { normalizeUser } from "../../src/classify/identity.ts";
import { describeRequest } from "../../src/classify/request_info.ts";
import { SeatServer } from "../../src/server/seat_server.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";

const WIRE: WireConfiguration = { serverConcurrencyLimit: 600, mandatoryOnly: false, objects: [] };

Deno.test("SeatServer with an adaptive limit learns it from how long clients hold their seats, and a reload keeps it", async () => {
  const clock = new FakeEventClock(1000);
  const effective = effectiveConfiguration(bootstrapConfiguration());
  const server = new SeatServer(effective, WIRE, {
    clock,
    adaptive: { minRttRequests: 3, initial: 30 },
  });
  try {
    const scl = () => server.coordinator.configuration.serverConcurrencyLimit;
    assert.equal(scl(), 30, "the initial limit, for a window");
    clock.advance(1000);
    assert.equal(scl(), 3, "the minRTT measurement's pin");
    const user = normalizeUser({ name: "alice", groups: ["system:authenticated"] });
    const info = describeRequest("GET", "/api/v1/pods");
    const request = seatRequestFor(new Classifier(effective).classify(user, info), {
      user,
      requestInfo: info,
    });
    // At the pin's 3 seats, a level with no demand recorded has none: its first request waits
    // for the next window's borrowing adjustment (not the 10 s of a static limit).
    const first = server.acquire(request);
    clock.advance(1000);
    const a = await first;
    assert.ok(a.admitted && a.waitedMs === 1000, JSON.stringify(a));
    clock.advance(40);
    server.release(a.seatId);
    for (let i = 0; i < 2; i++) {
      const a = await server.acquire(request);
      assert.ok(a.admitted && a.waitedMs === 0);
      clock.advance(40);
      server.release(a.seatId);
    }
    assert.deepEqual(
      [server.adaptive!.snapshot().minRttMs, server.adaptive!.snapshot().phase],
      [40, "sampling"],
    );
    assert.equal(scl(), 30);
    assert.match(server.metrics.registry.expose(), /^apf_adaptive_concurrency_limit 30$/m);
    // A reload brings the files' configuration, at their static limit: the learned one stays.
    server.configure(effective, WIRE);
    assert.equal(scl(), 30);
  } finally {
    server.close();
  }
  clock.runUntilIdle();
  assert.equal(clock.pendingTimers, 0);
});
