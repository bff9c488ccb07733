import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { RECLAIMED_LOG_SIZE, SessionHost } from "../../src/server/sessions.ts";
import { dumpSessions, dumpSessionsJson } from "../../src/observe/session_dumps.ts";
import type { WireDecision } from "../../src/protocol/wire.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

function setup(options: { leaseMs?: number; graceMs?: number } = {}) {
  const clock = new FakeEventClock();
  const coordinator = new EmbeddedCoordinator(
    configOf(6, [
      limited("queued", { shares: 10, queuing: { queues: 1, handSize: 1, queueLengthLimit: 3 } }),
    ]),
    { clock },
  );
  const host = new SessionHost(coordinator, { clock, leaseMs: 1000, graceMs: 500, ...options });
  return { clock, coordinator, host };
}

const req = { priorityLevel: "queued", flowSchema: "queued" };

function levelOf(coordinator: EmbeddedCoordinator) {
  return coordinator.snapshot().levels.find((l) => l.name === "queued")!.queueSet;
}

Deno.test("a session acquires, releases and batches its decisions per tick", async () => {
  const { coordinator, host } = setup();
  const batches: WireDecision[][] = [];
  const s = host.open("a", { decisions: (b) => batches.push(b), error: () => {} });
  const limit = levelOf(coordinator).concurrencyLimit;
  const ops = Array.from({ length: limit + 1 }, (_, i) => ["acquire", i, req] as const);
  s.apply(ops as never);
  await settle();
  assert.equal(batches.length, 1, "one batch for the tick");
  assert.deepEqual(batches[0]!.map((d) => d[1]), Array(limit).fill("admitted"));
  assert.equal(s.waiting, 1);
  s.apply([["release", 0, 5], ["release", 0, 5], ["release", 999, null]]); // idempotent, unknown ignored
  await settle();
  assert.deepEqual(batches.at(-1), [[limit, "admitted", 0]]);
  assert.deepEqual(s.held.length, limit);
  s.end();
  assert.equal(levelOf(coordinator).seatsInUse, 0);
  assert.equal(host.stats.sessions, 0);
  coordinator.close();
});

Deno.test("duplicate ids and invalid requests are answered with errors, nothing else changes", async () => {
  const { coordinator, host } = setup();
  const errors: [string, number | null][] = [];
  const s = host.open("a", { decisions: () => {}, error: (e, id) => errors.push([e.code, id]) });
  s.apply([["acquire", 1, req], ["acquire", 1, req], ["acquire", 2, {
    priorityLevel: "queued",
    flowSchema: "queued",
    waitLimitMs: -1,
  }]]);
  await settle();
  assert.deepEqual(errors, [["duplicate-id", 1], ["invalid-request", 2]]);
  assert.deepEqual(s.held, [1]);
  s.end();
  coordinator.close();
});

Deno.test("a seat neither released nor renewed expires at its lease; renew keeps it", async () => {
  const { clock, coordinator, host } = setup();
  const seen: WireDecision[] = [];
  const s = host.open("a", { decisions: (b) => seen.push(...b), error: () => {} });
  s.apply([["acquire", 1, req], ["acquire", 2, req]]);
  await settle();
  clock.advance(600);
  s.apply([["renew", 2]]);
  clock.advance(600);
  await settle();
  assert.deepEqual(seen.slice(2), [[1, "expired"]]);
  assert.deepEqual(s.held, [2]);
  assert.equal(host.stats.expired, 1);
  s.apply([["renew", 1]]); // gone: the client is told again
  await settle();
  assert.deepEqual(seen.at(-1), [1, "expired"]);
  clock.advance(1000);
  await settle();
  assert.equal(host.stats.expired, 2);
  assert.equal(levelOf(coordinator).seatsInUse, 0);
  s.end();
  coordinator.close();
});

Deno.test("a closed connection cancels its waiters at once and loses its seats after the grace period", async () => {
  const { clock, coordinator, host } = setup({ leaseMs: 60_000 });
  const s = host.open("a", { decisions: () => {}, error: () => {} });
  const limit = levelOf(coordinator).concurrencyLimit;
  s.apply(Array.from({ length: limit + 1 }, (_, i) => ["acquire", i, req]) as never);
  await settle();
  assert.equal(s.waiting, 1);
  s.detach();
  await settle();
  assert.equal(s.waiting, 0);
  assert.equal(levelOf(coordinator).waitingRequests, 0);
  assert.equal(levelOf(coordinator).seatsInUse, limit, "held through the grace period");
  clock.advance(500);
  assert.equal(levelOf(coordinator).seatsInUse, 0);
  assert.equal(host.stats.lost, limit);
  assert.equal(host.stats.sessions, 0);
  coordinator.close();
});

Deno.test("a client that resumes within the grace period reclaims its seats; never doubled", async () => {
  const { clock, coordinator, host } = setup({ leaseMs: 60_000 });
  const s = host.open("a", { decisions: () => {}, error: () => {} });
  s.apply([["acquire", 7, req], ["acquire", 8, req]]);
  await settle();
  s.apply([["release", 8, null]]);
  assert.equal(
    host.resume(s.id, { decisions: () => {}, error: () => {} }),
    null,
    "a live session cannot be taken over",
  );
  s.detach();
  clock.advance(400);
  const resumed = host.resume(s.id, { decisions: () => {}, error: () => {} });
  assert.deepEqual(resumed?.reclaimed, [7]);
  clock.advance(1000);
  assert.equal(host.stats.lost, 0, "the grace timer was cancelled");
  assert.equal(levelOf(coordinator).seatsInUse, 1);
  resumed!.session.apply([["release", 7, null]]);
  assert.equal(levelOf(coordinator).seatsInUse, 0);
  assert.equal(host.resume("s-unknown", { decisions: () => {}, error: () => {} }), null);
  host.close();
  coordinator.close();
});

Deno.test("cancel leaves a waiting request; initialized gives seats back", async () => {
  const { coordinator, host } = setup();
  const seen: WireDecision[] = [];
  const s = host.open("a", { decisions: (b) => seen.push(...b), error: () => {} });
  const limit = levelOf(coordinator).concurrencyLimit;
  s.apply(Array.from({ length: limit + 1 }, (_, i) => ["acquire", i, req]) as never);
  await settle();
  s.apply([["cancel", limit], ["cancel", 0]]); // cancelling a held seat does nothing
  await settle();
  assert.deepEqual(seen.at(-1), [limit, "rejected", "cancelled", 1]);
  s.apply([["initialized", 0]]);
  assert.equal(levelOf(coordinator).seatsInUse, limit - 1);
  assert.throws(() => new SessionHost(coordinator, { leaseMs: 0 }), /leaseMs must be > 0, got 0/);
  host.close();
  assert.equal(levelOf(coordinator).seatsInUse, 0);
  coordinator.close();
});

Deno.test("the sessions dump shows each session and the seats taken back, expired and lost", async () => {
  const { clock, coordinator, host } = setup({ leaseMs: 1000, graceMs: 500 });
  const a = host.open("gateway-a", { decisions: () => {}, error: () => {} });
  const b = host.open("gateway-b", { decisions: () => {}, error: () => {} });
  a.apply([["acquire", 1, req], ["acquire", 2, req]]);
  b.apply([["acquire", 5, req]]);
  await settle();
  clock.advance(300);
  a.apply([["renew", 2]]);
  b.detach();
  let snap = host.snapshot();
  assert.deepEqual(snap.sessions.map((s) => [s.client, s.state, s.heldSeats]), [
    ["gateway-a", "connected", 2],
    ["gateway-b", "detached", 1],
  ]);
  clock.advance(500); // b's grace ends: seat 5 lost, held 800 ms
  clock.advance(200); // a's seat 1 expires at 1000 ms; seat 2 was renewed at 300
  snap = host.snapshot();
  assert.equal(snap.expiredSeats, 1);
  assert.equal(snap.lostSeats, 1);
  assert.deepEqual(snap.sessions.map((s) => [s.client, s.expiredSeats, s.lostSeats]), [
    ["gateway-a", 1, 0],
  ]);
  assert.deepEqual(
    snap.reclaimed.map((r) => [r.reason, r.client, r.seatId, r.priorityLevel, r.heldMs]),
    [["lost", "gateway-b", 5, "queued", 800], ["expired", "gateway-a", 1, "queued", 1000]],
  );
  const json = dumpSessionsJson(snap);
  assert.equal(json.reclaimed[0]!.reclaimedAt, "1970-01-01T00:00:00.8Z");
  const text = dumpSessions(snap).split("\n");
  assert.match(text[0]!, /^SessionID,\s+Client,\s+State,\s+HeldSeats,/);
  assert.match(text[1]!, /^s-[0-9a-f-]+,\s+gateway-a,\s+connected,\s+1,\s+0,\s+1,\s+0\s*$/);
  assert.equal(text[2], "");
  assert.match(text[3]!, /^ReclaimedAt,\s+Reason,\s+SessionID,/);
  assert.match(
    text[4]!,
    /^1970-01-01T00:00:00\.8Z,\s+lost,\s+s-\S+,\s+gateway-b,\s+5,\s+queued,\s+queued,\s+800ms\s*$/,
  );
  assert.match(text[5]!, /,\s+expired,.*,\s+1s\s*$/);
  a.end();
  coordinator.close();
});

Deno.test("the reclaimed-seat log keeps the most recent entries only", async () => {
  const { clock, coordinator, host } = setup({ leaseMs: 10 });
  const s = host.open("a", { decisions: () => {}, error: () => {} });
  for (let i = 0; i < RECLAIMED_LOG_SIZE + 5; i++) {
    s.apply([["acquire", i, req]]);
    await settle();
    clock.advance(10);
  }
  const snap = host.snapshot();
  assert.equal(snap.expiredSeats, RECLAIMED_LOG_SIZE + 5);
  assert.equal(snap.reclaimed.length, RECLAIMED_LOG_SIZE);
  assert.equal(snap.reclaimed[0]!.seatId, 5);
  s.end();
  coordinator.close();
});
