/**
 * The example Worker (`examples/cloudflare_worker/`) in real workerd
 * through Miniflare, over HTTP: classification in the Worker, seats in one
 * Durable Object per level, lending by the controller.
 */

import assert from "node:assert/strict";
import type { PriorityLevelObject } from "../../src/cloudflare/level_object.ts";
import { Hono } from "hono";
import { connectCoordinator, CoordinatorRefusedError } from "../../src/remote/client.ts";
import { connectPerLevel } from "../../src/remote/per_level_client.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { noDelayWebSocket } from "../../src/deno/mod.ts";
import type { PriorityLevelSnapshot } from "../../src/observe/types.ts";
import { sleep } from "../_helpers/real_time.ts";
import { eventually } from "./_eventually.ts";
import { byUserSchema, queuingLevel } from "./_manifests.ts";
import { MINIFLARE_TEST_OPTIONS, type StartedWorker, startWorker } from "./_miniflare.ts";

/**
 * ServerCL 10: tenants and batch have 5 seats each (NominalCL); tenants lends none (its limit
 * is 5 or more), batch lends half. catch-all has 1.
 */
const APF_CONFIG = [
  queuingLevel("tenants", { shares: 45, queues: 64, handSize: 1, queueLengthLimit: 3 }),
  queuingLevel("batch", {
    shares: 45,
    lendablePercent: 50,
    queues: 64,
    handSize: 1,
    queueLengthLimit: 3,
  }),
  byUserSchema("batch", 500, "batch"),
  byUserSchema("tenants", 1000, "system:authenticated"),
].join("\n");

const API_KEYS = JSON.stringify({
  "key-elephant": { name: "elephant", groups: ["customers"] },
  "key-mouse": { name: "mouse", groups: ["customers"] },
  "key-cron": { name: "cron", groups: ["batch"] },
});

const TOKEN = "a-test-token-of-some-length";

async function start(): Promise<StartedWorker> {
  return await startWorker({
    entry: new URL("./_fixtures/apf_test_worker.ts", import.meta.url),
    durableObjects: { APF_LEVELS: "PriorityLevelObject", APF_CONTROLLER: "ControllerObject" },
    bindings: {
      APF_CONFIG,
      APF_SERVER_CONCURRENCY: "10",
      APF_MANDATORY_ONLY: "true",
      APF_TOKEN: TOKEN,
      API_KEYS,
    },
  });
}

/** What the tests look at of a level object's state. */
interface LevelState {
  currentLimit: number;
  waiting: number;
  seatsInUse: number;
}

async function levelState(worker: StartedWorker, name: string): Promise<LevelState> {
  const stub = await worker.durableObject<PriorityLevelObject>("APF_LEVELS", name);
  const level = structuredClone({ ...await stub.snapshot() }).levels[0]! as PriorityLevelSnapshot;
  return {
    currentLimit: level.currentLimit,
    waiting: level.queueSet.waitingRequests,
    seatsInUse: level.queueSet.seatsInUse,
  };
}

const get = (worker: StartedWorker, path: string, key?: string) =>
  worker.fetch(path, key === undefined ? {} : { headers: { "X-Api-Key": key } });

Deno.test({
  name:
    "example Worker: classified in the Worker, seats in level objects, 429 with Retry-After when full",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    const ok = await get(worker, "/", "key-mouse");
    assert.equal(ok.status, 200, `${[...ok.headers]} ${await ok.clone().text()}`);
    assert.equal(ok.headers.get("X-Kubernetes-PF-PriorityLevel-UID"), "tenants-uid");
    assert.ok(ok.headers.get("X-Kubernetes-PF-FlowSchema-UID"));
    assert.deepEqual(await ok.json(), { user: "mouse", level: "tenants", waitedMs: 0 });
    const batch = await get(worker, "/", "key-cron");
    assert.equal(((await batch.json()) as { level: string }).level, "batch");

    // Every seat busy, 3 queued in the elephant's queue: the next one is refused.
    const { currentLimit } = await levelState(worker, "tenants");
    const slow = Array.from(
      { length: currentLimit + 3 },
      () => get(worker, "/slow?ms=400", "key-elephant"),
    );
    await eventually(() => levelState(worker, "tenants"), (l) => l.waiting === 3);
    const refused = await get(worker, "/slow?ms=1", "key-elephant");
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("Retry-After")) >= 1);
    assert.equal(refused.headers.get("X-Kubernetes-PF-PriorityLevel-UID"), "tenants-uid");
    await refused.body?.cancel();
    for (const res of await Promise.all(slow)) {
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === 0);
  },
});

Deno.test({
  name:
    "example Worker: a queued mouse is served before the elephant's backlog (fair queuing across flows)",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    const done: string[] = [];
    const call = async (key: string, who: string, ms: number) => {
      const res = await get(worker, `/slow?ms=${ms}`, key);
      assert.equal(res.status, 200);
      await res.body?.cancel();
      done.push(who);
    };
    await (await get(worker, "/", "key-mouse")).body?.cancel();
    const { currentLimit } = await levelState(worker, "tenants");
    // The elephant holds every seat, freed one at a time 100 ms apart from 1.5 s on (time for
    // the 4 requests below to queue on a loaded machine before the first seat is freed)...
    const running = Array.from(
      { length: currentLimit },
      (_, i) => call("key-elephant", `run${i}`, 1_500 + 100 * i),
    );
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === currentLimit);
    // ...and queues 3 more; then the mouse queues behind them.
    const queued = [0, 1, 2].map((i) => call("key-elephant", `e${i}`, 50));
    await eventually(() => levelState(worker, "tenants"), (l) => l.waiting === 3);
    const mouse = call("key-mouse", "mouse", 50);
    await eventually(() => levelState(worker, "tenants"), (l) => l.waiting === 4);
    assert.equal(done.length, 0, "the mouse queued while every seat was still held");
    await Promise.all([...running, ...queued, mouse]);
    // Each freed seat dispatches one waiting request: fair queuing picks the mouse's queue
    // first, although its request arrived last (FIFO would serve it fourth).
    const order = done.filter((who) => !who.startsWith("run"));
    assert.equal(order[0], "mouse", `order of the queued ones: ${order.join(" ")}`);
  },
});

Deno.test({
  name: "example Worker: a seat goes back when the Worker request ends without releasing it",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    const res = await worker.fetch("/test/forget");
    assert.deepEqual(await res.json(), { admitted: true });
    // The request is over: the runtime disposes of its SeatTarget, which releases the seat.
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === 0);
  },
});

Deno.test({
  name: "example Worker: a queued caller that went away is dropped before it is granted",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    await (await get(worker, "/", "key-mouse")).body?.cancel();
    const { currentLimit } = await levelState(worker, "tenants");
    const slow = Array.from(
      { length: currentLimit },
      () => get(worker, "/slow?ms=2500", "key-elephant"),
    );
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === currentLimit);
    const left = await worker.fetch("/test/abandon");
    assert.equal(left.status, 202);
    await left.body?.cancel();
    await eventually(() => levelState(worker, "tenants"), (l) => l.waiting === 1);
    // Its pulse fails within a second: it leaves the queue while every seat is still busy.
    await eventually(
      () => levelState(worker, "tenants"),
      (l) => l.waiting === 0 && l.seatsInUse === currentLimit,
    );
    for (const res of await Promise.all(slow)) await res.body?.cancel();
    const metrics = await (await worker.durableObject<PriorityLevelObject>("APF_LEVELS", "tenants"))
      .metrics();
    assert.match(metrics, /^apf_level_object_abandoned_requests\{priority_level="tenants"\} 1$/m);
  },
});

Deno.test({
  name: "example Worker: the controller lends the idle level's seats to the flooded one",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    // Both level objects exist (a first request each), then tenants floods.
    for (const key of ["key-mouse", "key-cron"]) await (await get(worker, "/", key)).body?.cancel();
    const before = {
      tenants: (await levelState(worker, "tenants")).currentLimit,
      batch: (await levelState(worker, "batch")).currentLimit,
    };
    const flood = Array.from(
      { length: before.tenants + 3 },
      () => get(worker, "/slow?ms=1500", "key-elephant"),
    );
    try {
      await eventually(() => levelState(worker, "tenants"), (l) => l.waiting === 3);
      const forbidden = await worker.fetch("/apf/adjust", { method: "POST" });
      assert.equal(forbidden.status, 403);
      await forbidden.body?.cancel();
      // Trigger the controller's alarm body twice: the first starts a period of full demand
      // (what came before was mostly idle), the second allocates from it.
      for (let i = 0; i < 2; i++) {
        if (i === 1) await sleep(300);
        const adjusted = await worker.fetch("/apf/adjust", {
          method: "POST",
          headers: { Authorization: `Bearer ${TOKEN}` },
        });
        assert.equal(adjusted.status, 200);
        await adjusted.body?.cancel();
      }
      const after = {
        tenants: (await levelState(worker, "tenants")).currentLimit,
        batch: (await levelState(worker, "batch")).currentLimit,
      };
      assert.ok(after.tenants > before.tenants, JSON.stringify({ before, after }));
      assert.ok(after.batch < before.batch, JSON.stringify({ before, after }));
    } finally {
      for (const r of await Promise.allSettled(flood)) {
        if (r.status === "fulfilled") await r.value.body?.cancel();
      }
    }
  },
});

Deno.test({
  name: "example Worker: a Deno app takes seats of a level object over WebSocket (protocol v1)",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    const url = new URL("/apf/ws?level=tenants", worker.url);
    url.protocol = "ws:";
    const refused = connectCoordinator(url, {
      token: "not-the-token-at-all",
      webSocket: noDelayWebSocket(),
      policy: "closed",
      reconnect: { initialMs: 5_000 },
    });
    await assert.rejects(refused.ready(), CoordinatorRefusedError);
    assert.equal(refused.state, "refused");
    await refused.close();

    await using client = connectCoordinator(url, {
      token: TOKEN,
      webSocket: noDelayWebSocket(),
      policy: "closed",
      client: "deno-app",
    });
    await client.ready();
    assert.equal(client.state, "connected");
    assert.ok(JSON.stringify(client.configuration?.objects).includes('"tenants"'));
    const request = {
      priorityLevel: "tenants",
      flowSchema: "tenants",
      flowHash: { hi: 1, lo: 2 },
      distinguisher: "deno-user",
    };
    const seats = await Promise.all([client.acquire(request), client.acquire(request)]);
    assert.ok(seats.every((a) => a.admitted));
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === 2);
    const stub = await worker.durableObject<PriorityLevelObject>("APF_LEVELS", "tenants");
    const sessions = structuredClone({ ...await stub.sessions() });
    assert.ok(sessions.sessions?.some((s) => s.client === "deno-app" && s.heldSeats === 2));
    for (const a of seats) if (a.admitted) a.seat.release();
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === 0);
  },
});

Deno.test({
  name:
    "example Worker: a Deno app's apf() uses the level objects as its coordinator, one connection per level",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    const urlFor = (level: string) => {
      const url = new URL(`/apf/ws?level=${encodeURIComponent(level)}`, worker.url);
      url.protocol = "ws:";
      return url;
    };
    await using coordinator = connectPerLevel(urlFor, {
      token: TOKEN,
      webSocket: noDelayWebSocket(),
      policy: "closed",
    });
    const limiter = apf({
      coordinator,
      identify: (req) => ({ name: req.headers.get("X-User") ?? "nobody", groups: ["customers"] }),
    });
    const app = new Hono<ApfEnv>().use(limiter).get(
      "/",
      (c) => c.text(c.get("apf").classification.priorityLevel.name),
    );
    const res = await app.request("/", { headers: { "X-User": "dora" } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "tenants", "classified with the controller's configuration");
    assert.deepEqual([...coordinator.connections.keys()].sort(), ["catch-all", "tenants"]);
    await eventually(() => levelState(worker, "tenants"), (l) => l.seatsInUse === 0);
    limiter.close();
  },
});

Deno.test({
  name: "example Worker: operators read every level object's metrics and dumps in one place",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await start();
    for (const key of ["key-mouse", "key-cron"]) await (await get(worker, "/", key)).body?.cancel();
    const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };
    const denied = await worker.fetch("/apf/metrics");
    assert.equal(denied.status, 403);
    await denied.body?.cancel();
    const metrics = await (await worker.fetch("/apf/metrics", auth)).text();
    for (const level of ["tenants", "batch"]) {
      assert.match(
        metrics,
        new RegExp(
          `^apiserver_flowcontrol_dispatched_requests_total\\{[^}]*priority_level="${level}"[^}]*\\} 1$`,
          "m",
        ),
      );
      assert.match(
        metrics,
        new RegExp(`^apf_level_object_starts\\{priority_level="${level}"\\} 1$`, "m"),
      );
    }
    assert.equal(metrics.match(/^# TYPE apiserver_flowcontrol_seat_fair_frac gauge$/gm)?.length, 1);
    assert.equal(metrics.match(/^# HELP apf_level_object_starts /gm)?.length, 1, "families merged");
    const levels = await (await worker.fetch(
      "/apf/debug/api_priority_and_fairness/dump_priority_levels?format=json",
      auth,
    )).json() as Array<{ priorityLevelName: string; dispatchedRequests: number }>;
    const dispatched = Object.fromEntries(
      levels.map((l) => [l.priorityLevelName, l.dispatchedRequests]),
    );
    assert.equal(dispatched.tenants, 1);
    assert.equal(dispatched.batch, 1);
    const text =
      await (await worker.fetch("/apf/debug/api_priority_and_fairness/dump_queues", auth))
        .text();
    assert.match(text, /^PriorityLevelName,\s+Index,/);
    const sessions = await worker.fetch(
      "/apf/debug/api_priority_and_fairness/dump_sessions?level=tenants",
      auth,
    );
    assert.match(await sessions.text(), /^SessionID,\s+Client,\s+State,/);
    // The live dashboard in workerd: the page, its script, and every level object's data.
    const page = await worker.fetch("/apf/debug/api_priority_and_fairness/", auth);
    assert.equal(page.status, 200);
    assert.match(page.headers.get("Content-Security-Policy") ?? "", /script-src 'self'/);
    await page.body?.cancel();
    const script = await worker.fetch("/apf/debug/api_priority_and_fairness/dashboard.js", auth);
    assert.match(await script.text(), /^"use strict";/);
    const live = await (await worker.fetch("/apf/debug/api_priority_and_fairness/live", auth))
      .json() as { levels: { name: string; executing: number }[] };
    assert.deepEqual(
      live.levels.map((l) => l.name).filter((n) => n === "tenants" || n === "batch").sort(),
      ["batch", "tenants"],
    );
  },
});
