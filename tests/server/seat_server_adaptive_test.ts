import assert from "node:assert/strict";
import {
  bootstrapConfiguration,
  type EffectiveConfiguration,
  effectiveConfiguration,
  FakeEventClock,
  type SeatRequest,
  seatRequestFor,
} from "../../mod.ts";
import { Classifier } from "../../src/classify/classifier.ts";
import { normalizeUser } from "../../src/classify/identity.ts";
import { describeRequest } from "../../src/classify/request_info.ts";
import { SeatServer } from "../../src/server/seat_server.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";

const WIRE: WireConfiguration = { serverConcurrencyLimit: 600, mandatoryOnly: false, objects: [] };

/** alice's `GET /api/v1/pods`, classified by `effective`. */
function alicesRequest(effective: EffectiveConfiguration): SeatRequest {
  const user = normalizeUser({ name: "alice", groups: ["system:authenticated"] });
  const info = describeRequest("GET", "/api/v1/pods");
  return seatRequestFor(new Classifier(effective).classify(user, info), {
    user,
    requestInfo: info,
  });
}

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
    const request = alicesRequest(effective);
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

Deno.test("SeatServer with an adaptive limit: a release states how the work ended, and a seat taken back is no sample", async () => {
  const clock = new FakeEventClock(1000);
  const effective = effectiveConfiguration(bootstrapConfiguration());
  const server = new SeatServer(effective, WIRE, {
    clock,
    leaseMs: 500,
    adaptive: { minRttRequests: 3, initial: 30 },
  });
  try {
    clock.advance(1000);
    const samples = () => server.adaptive!.snapshot().samples;
    assert.equal(server.adaptive!.snapshot().phase, "measuring-min-rtt");
    const request = alicesRequest(effective);
    // The first waits a window for the borrowing adjustment to give its level a seat.
    const first = server.acquire(request);
    clock.advance(1000);
    const refused = await first;
    assert.ok(refused.admitted);
    clock.advance(40);
    // The upstream refused it (a 503): no latency to measure the minRTT with.
    server.release(refused.seatId, undefined, "rejected");
    assert.equal(samples(), 0);
    const abandoned = await server.acquire(request);
    assert.ok(abandoned.admitted);
    clock.advance(500); // neither released nor renewed: its client is gone, the lease ends
    assert.equal(server.sessions.stats.expired, 1);
    assert.equal(samples(), 0, "taken back: no sample");
    const served = await server.acquire(request);
    assert.ok(served.admitted);
    clock.advance(40);
    server.release(served.seatId);
    assert.equal(samples(), 1, "served: one sample toward the minRTT");
  } finally {
    server.close();
  }
  clock.runUntilIdle();
  assert.equal(clock.pendingTimers, 0);
});
