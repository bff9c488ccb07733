import assert from "node:assert/strict";
import { LevelHost, type LevelUpdate } from "../../src/cloudflare/_level_host.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

const wire = (queueLengthLimit = 2): WireConfiguration => ({
  serverConcurrencyLimit: 10,
  mandatoryOnly: true,
  objects: [limited("q", { shares: 95, queuing: { queues: 1, handSize: 1, queueLengthLimit } })],
});

function setup(options: { leaseMs?: number } = {}) {
  const clock = new FakeEventClock();
  const host = new LevelHost({ clock, livenessIntervalMs: 100, leaseMs: options.leaseMs ?? 1000 });
  const update = (u: Partial<LevelUpdate> = {}) =>
    host.update("q", { version: 1, configuration: wire(), limits: { q: 2 }, ...u });
  return { clock, host, update };
}

const req = { priorityLevel: "q", flowSchema: "q" };

function levelOf(host: LevelHost) {
  return host.snapshot().levels.find((l) => l.name === "q")!;
}

Deno.test("a level host serves its level at the limits the controller pushed", async () => {
  const { host, update } = setup();
  await assert.rejects(host.acquire(req), /the level has no configuration/);
  update();
  assert.equal(host.level, "q");
  assert.equal(levelOf(host).currentLimit, 2);
  assert.deepEqual(host.snapshot().levels.map((l) => l.name), ["q"], "only its own level");
  const a = await host.acquire(req);
  const b = await host.acquire(req);
  assert.ok(a.admitted && b.admitted);
  const queued = host.acquire(req);
  await settle(20);
  assert.equal(levelOf(host).queueSet.waitingRequests, 1);
  host.release(a.seatId, 12);
  host.release(a.seatId); // idempotent
  const c = await queued;
  assert.ok(c.admitted && c.leaseMs === 1000);
  const other = await host.acquire({ priorityLevel: "other", flowSchema: "x" });
  assert.equal(!other.admitted && other.reason, "unavailable");
  await assert.rejects(
    host.acquire({ priorityLevel: "q", flowSchema: "q", waitLimitMs: -5 } as never),
    /Cannot acquire a seat: invalid request at waitLimitMs/,
  );
  update({ version: 1, configuration: null, limits: { q: 5, other: 1 } });
  assert.equal(levelOf(host).currentLimit, 5);
  update({ version: 2, configuration: wire(3), limits: { q: 5 } });
  assert.equal(host.version, 2);
  update({ version: 1, configuration: wire(9), limits: { q: 3 } }); // older: ignored whole
  assert.equal(host.version, 2);
  assert.equal(levelOf(host).currentLimit, 5);
  assert.throws(
    () => update({ version: 3, configuration: { ...wire(), serverConcurrencyLimit: -1 } }),
    /configuration version 3: it is invalid/,
  );
  assert.equal(host.version, 2, "refused whole");
  assert.throws(
    () => host.update("z", { version: 9, configuration: null, limits: {} }),
    /for level "z"/,
  );
  host.release(b.seatId);
  host.release(c.seatId);
  assert.equal(levelOf(host).queueSet.seatsInUse, 0);
  assert.equal(host.stats.granted, 3);
  host.close();
});

Deno.test("a queued caller that goes away is dropped before its grant", async () => {
  const { clock, host, update } = setup();
  update();
  const held = [await host.acquire(req), await host.acquire(req)];
  let alive = true;
  const pending = host.acquire(req, { alive: () => alive });
  await settle(20);
  clock.advance(100);
  await settle(20);
  assert.equal(levelOf(host).queueSet.waitingRequests, 1, "still there while alive");
  alive = false;
  clock.advance(100);
  await settle(20);
  const a = await pending;
  assert.equal(!a.admitted && a.reason, "cancelled");
  assert.equal(levelOf(host).queueSet.waitingRequests, 0);
  assert.equal(host.stats.abandoned, 1);
  // A pulse that throws (the caller's context is gone) counts as gone too.
  const throwing = host.acquire(req, {
    alive: () => {
      throw new Error("execution context no longer running");
    },
  });
  await settle(20);
  clock.advance(100);
  await settle(20);
  assert.equal(!(await throwing).admitted, true);
  for (const s of held) if (s.admitted) host.release(s.seatId);
  host.close();
});

Deno.test("a caller gone at its grant gets no seat: it goes back at once", async () => {
  const { clock, host, update } = setup();
  update();
  const held = await host.acquire(req);
  await host.acquire(req);
  let alive = true;
  const pending = host.acquire(req, { alive: () => Promise.resolve(alive) });
  await settle(20);
  alive = false;
  clock.advance(50); // it waited (the next pulse would come at 100 ms)
  assert.ok(held.admitted);
  host.release(held.seatId); // dispatches the queued request to a caller found gone
  const a = await pending;
  await settle(20);
  assert.equal(!a.admitted && a.reason, "cancelled");
  assert.equal(levelOf(host).queueSet.seatsInUse, 1, "only the other held seat");
  assert.equal(host.stats.abandoned, 1);
  host.close();
});

Deno.test("seats neither released nor renewed expire; the alarm's sweep takes back what is due", async () => {
  const { clock, host, update } = setup({ leaseMs: 1000 });
  update();
  assert.equal(host.nextLeaseDue(), null);
  assert.equal(host.nextLeaseInMs(), null);
  const a = await host.acquire(req);
  const b = await host.acquire(req);
  assert.ok(a.admitted && b.admitted);
  assert.equal(host.nextLeaseDue(), 1000);
  clock.advance(600);
  assert.equal(host.nextLeaseInMs(), 400, "on the host's clock");
  assert.equal(host.renew(b.seatId), true);
  clock.advance(400);
  await settle(20);
  assert.equal(levelOf(host).queueSet.seatsInUse, 1, "a expired, b renewed");
  assert.equal(host.renew(a.seatId), false);
  assert.equal(host.nextLeaseDue(), 1600);
  assert.equal(host.nextLeaseInMs(), 600);
  host.expireDue(); // nothing due yet
  assert.equal(levelOf(host).queueSet.seatsInUse, 1);
  const sessions = host.sessionsSnapshot()!;
  assert.equal(sessions.expiredSeats, 1);
  assert.deepEqual(sessions.reclaimed.map((r) => [r.reason, r.client, r.priorityLevel]), [
    ["expired", "rpc", "q"],
  ]);
  host.release(b.seatId);
  host.close();
});

Deno.test("WebSocket clients speak protocol v1 to the level object and hear new configurations", async () => {
  const { host, update } = setup();
  assert.throws(() => host.connect(() => {}, () => {}), /no configuration/);
  update();
  const sent: Record<string, unknown>[] = [];
  const conn = host.connect((t) => sent.push(JSON.parse(t)), () => {});
  conn.receive(
    JSON.stringify({ t: "hello", v: [1], token: null, client: "deno-app", resume: null }),
  );
  assert.equal(sent[0]!.t, "welcome");
  conn.receive(JSON.stringify({ t: "ops", ops: [["acquire", 1, req], ["acquire", 2, req]] }));
  await settle(20);
  assert.deepEqual(sent[1], { t: "decisions", d: [[1, "admitted", 0], [2, "admitted", 0]] });
  update({ version: 2, configuration: wire(7), limits: { q: 2 } });
  assert.equal(sent[2]!.t, "config");
  conn.closed();
  host.close();
  assert.equal(levelOf(host).queueSet.seatsInUse, 0);
});

Deno.test("a learned limit: a WebSocket client's seats are samples too, ended as its release says; seats given back early, taken back or never used are none", async () => {
  const { clock, host, update } = setup({ leaseMs: 1000 });
  update({ limits: { q: 2 }, serverConcurrencyLimit: 40 });
  const sent: Record<string, unknown>[] = [];
  const conn = host.connect((t) => sent.push(JSON.parse(t)), () => {});
  conn.receive(
    JSON.stringify({ t: "hello", v: [1, 2], token: null, client: "deno-app", resume: null }),
  );
  assert.equal(sent[0]!.v, 2);
  const ops = (...ops: unknown[]) => conn.receive(JSON.stringify({ t: "ops", ops }));
  ops(["acquire", 1, req], ["acquire", 2, req]);
  await settle(20);
  clock.advance(20);
  // A time-out of the upstream; a release of version 1 (no outcome: served), measured by the client.
  ops(["release", 1, null, "timeout"], ["release", 2, 7]);
  ops(["acquire", 3, req], ["acquire", 4, req]);
  await settle(20);
  ops(["initialized", 3]); // long-running: its time is the stream's
  clock.advance(1000); // 4's lease expires: its client is gone, it is taken back
  await settle(20);
  assert.ok(sent.some((m) => JSON.stringify(m.d) === '[[4,"expired"]]'), JSON.stringify(sent));
  // An RPC caller gone by its grant: its seat goes back unused.
  const held = [await host.acquire(req), await host.acquire(req)];
  let alive = true;
  const gone = host.acquire(req, { alive: () => alive });
  await settle(20);
  alive = false;
  clock.advance(50);
  assert.ok(held[0]!.admitted && held[1]!.admitted);
  host.release(held[0]!.seatId, 12, "error");
  const a = await gone;
  assert.equal(!a.admitted && a.reason, "cancelled");
  assert.equal(host.stats.abandoned, 1);
  clock.advance(5);
  assert.deepEqual(host.collectSamples(), {
    samples: [
      [1055, 20, 40, "timeout"],
      [1055, 7, 40, "ok"],
      [5, 12, 40, "error"],
    ],
    released: 3,
    peakDemand: 2,
  });
  host.release(held[1]!.seatId);
  conn.closed();
  host.close();
});

Deno.test("a learned server concurrency limit: the level serves at it live, and times its seats from dispatch to release", async () => {
  const { clock, host, update } = setup();
  update({ limits: { q: 1 }, serverConcurrencyLimit: 40 });
  assert.equal(host.snapshot().serverConcurrencyLimit, 40, "the learned limit, not the wire's 10");
  const at40 = levelOf(host).nominalLimit;
  const a = await host.acquire(req);
  assert.ok(a.admitted);
  const waiting = host.acquire(req);
  await settle(20);
  clock.advance(10);
  // A new learned limit (a limits-only update, as each window's): recomputed, nothing dropped.
  update({ configuration: null, limits: { q: 1 }, serverConcurrencyLimit: 20 });
  assert.equal(host.snapshot().serverConcurrencyLimit, 20);
  assert.ok(levelOf(host).nominalLimit < at40, "NominalCL recomputed at the new limit");
  assert.equal(levelOf(host).queueSet.waitingRequests, 1, "what waits still waits");
  clock.advance(20);
  host.release(a.seatId); // held 30 ms, measured here
  const b = await waiting;
  assert.ok(b.admitted && b.waitedMs === 30);
  clock.advance(50);
  host.release(b.seatId, 45, "rejected"); // the caller measured 45 ms (its measure wins): a 503
  const c = await host.acquire(req);
  assert.ok(c.admitted);
  host.initialized(c.seatId); // long-running: no sample
  clock.advance(5);
  const collected = host.collectSamples()!;
  assert.deepEqual(collected.samples, [
    [55, 30, 40, "ok"], // released 55 ms ago, 30 ms, dispatched at 40, served
    [5, 45, 20, "rejected"], // its 30 ms in the queue not counted; dispatched at 20; refused
  ]);
  assert.equal(collected.released, 2);
  assert.equal(collected.peakDemand, 1, "b still waited for its seat when a went back");
  assert.deepEqual(host.collectSamples(), { samples: [], released: 0, peakDemand: 0 });

  // A static limit again (a configuration without one): no sampling.
  update({ version: 2, configuration: wire(), limits: { q: 2 } });
  assert.equal(host.snapshot().serverConcurrencyLimit, 10);
  assert.equal(host.collectSamples(), null);
  assert.throws(
    () => update({ version: 2, configuration: null, serverConcurrencyLimit: 0 }),
    /learned server concurrency limit: it must be a positive integer, got 0/,
  );
  host.close();
});
