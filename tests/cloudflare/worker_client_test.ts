import assert from "node:assert/strict";
import { LevelHost } from "../../src/cloudflare/_level_host.ts";
import type { LevelRpc, RpcAdmission } from "../../src/cloudflare/_worker_client.ts";
import { WorkerCoordinator } from "../../src/cloudflare/_worker_coordinator.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_conformance.ts";
import { levelRpc, signalLiveness } from "./_in_process.ts";
import { settle } from "../_helpers/settle.ts";

const req = { priorityLevel: "queued", flowSchema: "fs" };

function overloaded(): LevelRpc {
  return {
    acquire: () =>
      Promise.reject(
        Object.assign(new Error("Durable Object is overloaded"), { overloaded: true }),
      ),
  };
}

Deno.test("an overloaded level object leads to the policy: closed, open, local", async () => {
  const clock = new FakeEventClock();
  const config = conformanceConfiguration();
  for (const [policy, expected] of [["closed", false], ["open", true], ["local", true]] as const) {
    const c = new WorkerCoordinator(() => overloaded(), null, signalLiveness, {
      clock,
      policy,
      fallback: { configuration: config, fraction: 1 },
    });
    const a = await c.acquire(req);
    assert.equal(a.admitted, expected, policy);
    if (a.admitted) a.seat.release();
    else assert.equal(a.reason, "unavailable");
    assert.equal(c.stats.fallbacks, 1);
    assert.equal(c.stats.errors, 1);
    c.close();
  }
});

Deno.test("a stalled level object: the policy answers at the wait limit plus the margin; a late grant goes back", async () => {
  const clock = new FakeEventClock();
  let grant: (a: RpcAdmission) => void = () => {};
  const released: number[] = [];
  const stalled: LevelRpc = { acquire: () => new Promise((resolve) => grant = resolve) };
  const c = new WorkerCoordinator(() => stalled, null, signalLiveness, {
    clock,
    policy: "closed",
    deadlineMarginMs: 500,
  });
  const pending = c.acquire({ ...req, waitLimitMs: 2000 });
  clock.advance(2499);
  await settle(20);
  let outcome: unknown;
  void pending.then((a) => outcome = a);
  await settle(20);
  assert.equal(outcome, undefined, "still within its deadline");
  clock.advance(1);
  const a = await pending;
  assert.equal(!a.admitted && a.reason, "unavailable");
  grant({
    admitted: true,
    waitedMs: 2600,
    leaseMs: 30_000,
    seat: {
      release: (o?: { executionMs?: number }) => released.push(o?.executionMs ?? -1),
      initialized: () => released.push(Infinity),
      renew: () => true,
    },
  });
  await settle(20);
  // As an early release: given back unused, no sample of a learned limit.
  assert.deepEqual(released, [Infinity], "given back at once");
  assert.equal(c.stats.lateReleases, 1);
  c.close();
});

Deno.test("a long-held seat renews its lease; one the object forgot is reported lost", async () => {
  const clock = new FakeEventClock();
  const host = new LevelHost({ clock, leaseMs: 1000, resolve: () => conformanceConfiguration() });
  host.update("queued", {
    version: 1,
    configuration: { serverConcurrencyLimit: 6, mandatoryOnly: false, objects: [] },
    limits: { queued: 2 },
  });
  const c = new WorkerCoordinator(() => levelRpc(host), null, signalLiveness, { clock });
  const a = await c.acquire(req);
  assert.ok(a.admitted);
  for (let i = 0; i < 10; i++) {
    clock.advance(500);
    await settle(20);
  }
  assert.equal(host.snapshot().levels[0]!.queueSet.seatsInUse, 1, "renewed through 5 s");
  host.close(); // the object restarts: it no longer knows the seat
  clock.advance(500);
  await settle(20);
  assert.equal(c.stats.lost, 1);
  assert.equal(a.seat.release(), false, "a lost seat releases nothing");
  c.close();
});

Deno.test("the Worker classifies with the controller's configuration, fetched again when stale", async () => {
  const clock = new FakeEventClock();
  let version = 1;
  const wire = (): WireConfiguration => ({
    serverConcurrencyLimit: 100 * version,
    mandatoryOnly: false,
    objects: [],
  });
  let calls = 0;
  const controller = {
    levelUpdate: () => {
      calls++;
      return Promise.resolve({ version, configuration: wire(), limits: {} });
    },
  };
  const c = new WorkerCoordinator(() => overloaded(), controller, signalLiveness, {
    clock,
    policy: "closed",
    configurationRefreshMs: 10_000,
  });
  const seen: number[] = [];
  c.onConfiguration((w) => seen.push(w.serverConcurrencyLimit));
  await c.refreshConfiguration();
  assert.equal(c.configuration?.serverConcurrencyLimit, 100);
  await c.acquire(req);
  assert.equal(calls, 1, "fresh: not fetched again");
  version = 2;
  clock.advance(10_000);
  await c.acquire(req);
  await settle(20);
  assert.deepEqual(seen, [100, 200]);
  c.close();
});
