import assert from "node:assert/strict";
import { bootstrapConfiguration, effectiveConfiguration } from "../../mod.ts";
import { runConfigScenario } from "../../src/sim/config_run.ts";
import { configScenarioFromJson } from "../../src/sim/config_scenario.ts";
import { ScenarioError } from "../../src/sim/scenario.ts";

const BUILTIN = effectiveConfiguration(bootstrapConfiguration());

function scenario(clients: unknown[], extra: Record<string, unknown> = {}) {
  return configScenarioFromJson({ config: [], ...extra, clients });
}

function rejects(value: unknown, message: string) {
  assert.throws(() => configScenarioFromJson(value), (e: unknown) => {
    assert.ok(e instanceof ScenarioError);
    assert.equal(e.message, message);
    return true;
  });
}

Deno.test("whole-configuration scenarios fill in defaults", () => {
  const s = scenario([{ name: "a", path: "/api/v1/pods" }]);
  assert.deepEqual(s, {
    name: "whole-configuration",
    config: [],
    mandatoryOnly: false,
    serverConcurrencyLimit: 600,
    adaptive: null,
    upstream: null,
    queueWaitLimitMs: 15_000,
    durationMs: 60_000,
    clients: [{
      name: "a",
      user: null,
      groups: [],
      method: "GET",
      path: "/api/v1/pods",
      query: "",
      threads: 1,
      calls: null,
      execMs: 100,
      thinkMs: 0,
      startMs: 0,
      stopMs: null,
      work: null,
      holder: 0,
    }],
    holders: null,
  });
  assert.deepEqual(
    configScenarioFromJson({ config: null, clients: [{ name: "a", path: "/" }] }).config,
    [],
  );
});

Deno.test("whole-configuration scenarios name the first bad field", () => {
  rejects(
    { config: [], clients: [] },
    "clients: must be a non-empty array of clients, got an array",
  );
  rejects(
    { clients: [{ name: "a", path: "/" }] } as unknown,
    "config: is required in a whole-configuration scenario",
  );
  rejects(
    { config: [1], clients: [{ name: "a", path: "/" }] },
    "config[0]: must be a non-empty string, got 1",
  );
  rejects(
    { config: [], clients: [{ path: "/" }] },
    "clients[0].name: must be a non-empty string, got null",
  );
  rejects(
    { config: [], clients: [{ name: "a", path: "x" }] },
    'clients[0].path: must be a string starting with "/", got "x"',
  );
  rejects(
    { config: [], clients: [{ name: "a", path: "/", startMs: 10, stopMs: 5 }] },
    "clients[0].stopMs: must be >= startMs (10), got 5",
  );
  rejects(
    { config: [], queueWaitLimitMs: 61_000, clients: [{ name: "a", path: "/" }] },
    "queueWaitLimitMs: must be at most 60000, got 61000",
  );
  rejects(
    { config: [], clients: [{ name: "a", path: "/", work: { initialSeats: 0 } }] },
    "clients[0].work.initialSeats: must be an integer >= 1, got 0",
  );
  rejects(
    { config: [], bogus: 1, clients: [] },
    "bogus: unknown field (expected one of name, config, mandatoryOnly, serverConcurrencyLimit, queueWaitLimitMs, durationMs, clients, holders, upstream)",
  );
  rejects(
    { config: [], clients: [{ name: "a", path: "/", holder: 1 }] },
    "clients[0].holder: needs holders",
  );
  rejects(
    { config: [], holders: { count: 2 }, clients: [{ name: "a", path: "/", holder: 2 }] },
    "clients[0].holder: must be below holders.count (2), got 2",
  );
  rejects(
    { config: [], holders: {}, clients: [{ name: "a", path: "/" }] },
    "holders.count: must be an integer >= 1, got null",
  );
  rejects(
    {
      config: [],
      holders: { count: 2, periodMs: 1_000, leaseMs: 1_000 },
      clients: [{ name: "a", path: "/" }],
    },
    "holders.leaseMs: must be longer than periodMs (1000)",
  );
});

Deno.test("a run classifies each client and accounts for every call", async () => {
  const s = scenario([
    {
      name: "alice",
      user: "alice",
      groups: ["dev"],
      path: "/api/v1/namespaces/a/pods",
      threads: 3,
      calls: 4,
      execMs: 50,
      thinkMs: 10,
    },
    { name: "anon", path: "/healthz", threads: 1, calls: 2, execMs: 5 },
    {
      name: "admin",
      user: "root",
      groups: ["system:masters"],
      path: "/api/v1/nodes",
      threads: 2,
      calls: 1,
    },
  ], { durationMs: 10_000 });
  const r = await runConfigScenario(s, BUILTIN);
  assert.deepEqual(
    r.clients.map((c) => [c.name, c.flowSchema, c.priorityLevel, c.dispatched]),
    [
      ["alice", "global-default", "global-default", 12],
      ["anon", "probes", "exempt", 2],
      ["admin", "exempt", "exempt", 2],
    ],
  );
  const level = (name: string) => r.levels.find((l) => l.name === name)!;
  assert.equal(level("global-default").dispatched, 12);
  assert.equal(level("exempt").dispatched, 4);
  assert.deepEqual(r.adjustments.map((a) => a.atMs), [0, 10_000]);
  assert.deepEqual(
    r.adjustments[0]!.levels.map((l) => [l.name, l.currentLimit]),
    [
      ["exempt", 0],
      ["catch-all", 30],
      ["system", 117],
      ["node-high", 170],
      ["leader-election", 58],
      [
        "workload-high",
        114,
      ],
      ["workload-low", 56],
      ["global-default", 56],
    ],
  );
});

Deno.test("a flooded level borrows, and its limit decays with the smoothing after the flood", async () => {
  const s = scenario([
    {
      name: "elephant",
      user: "alice",
      path: "/api/v1/namespaces/a/pods/p",
      threads: 300,
      execMs: 1000,
      stopMs: 30_000,
    },
    {
      name: "mouse",
      user: "bob",
      path: "/api/v1/namespaces/b/pods/q",
      threads: 1,
      execMs: 100,
      thinkMs: 900,
    },
  ], { durationMs: 120_000 });
  const r = await runConfigScenario(s, BUILTIN);
  const gd = r.adjustments.map((a) => a.levels.find((l) => l.name === "global-default")!);
  assert.equal(gd[0]!.currentLimit, 56);
  assert.ok(gd[1]!.currentLimit > 300, `borrowed: ${gd[1]!.currentLimit}`);
  // After the flood the smoothed demand follows A = 0.977 toward the small envelope.
  for (let i = 5; i < gd.length; i++) {
    const prev = gd[i - 1]!, cur = gd[i]!;
    const envelope = cur.average + cur.stdDev;
    assert.ok(
      Math.abs(cur.smoothed - Math.max(envelope, 0.977 * prev.smoothed + 0.023 * envelope)) < 1e-9,
    );
    assert.ok(cur.currentLimit <= prev.currentLimit);
  }
  assert.ok(gd.at(-1)!.currentLimit < gd[3]!.currentLimit);
  const mouse = r.clients[1]!;
  assert.equal(mouse.rejected["queue-full"] + mouse.rejected["time-out"], 0);
  // Fair queuing: the mouse waits only for the first seat to free up, never behind the flood.
  assert.equal(mouse.waitMs.p50, 0);
  assert.ok(mouse.waitMs.max <= 2000, `mouse waited ${mouse.waitMs.max} ms`);
});

Deno.test("calls that would repeat without time passing stop the run with a clear error", async () => {
  // catch-all rejects at once beyond its limit; with no think time the thread would spin.
  const s = scenario([
    { name: "spinner", user: "x", path: "/", threads: 40, execMs: 1000 },
  ], { mandatoryOnly: true, serverConcurrencyLimit: 10 });
  const effective = effectiveConfiguration({ flowSchemas: [], priorityLevels: [] }, {
    serverConcurrencyLimit: 10,
  });
  await assert.rejects(
    () => runConfigScenario(s, effective),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError);
      assert.match(e.message, /^clients\[0\]: calls repeat at 0 ms without time passing/);
      return true;
    },
  );
});

Deno.test("work overrides replace the estimate; the run is deterministic", async () => {
  const s = scenario([
    {
      name: "wide",
      user: "w",
      path: "/api/v1/pods",
      threads: 20,
      execMs: 200,
      thinkMs: 50,
      work: { initialSeats: 8, finalSeats: 0, additionalLatencyMs: 0 },
    },
    { name: "narrow", user: "n", path: "/api/v1/pods", threads: 20, execMs: 200, thinkMs: 50 },
  ], { durationMs: 20_000 });
  const a = await runConfigScenario(s, BUILTIN);
  const b = await runConfigScenario(s, BUILTIN);
  assert.deepEqual(a, b);
  const [wide, narrow] = a.clients;
  assert.ok(wide!.dispatched < narrow!.dispatched, `${wide!.dispatched} < ${narrow!.dispatched}`);
});

Deno.test("the estimator sizes requests without a work override", async () => {
  const s = scenario([
    {
      name: "lister",
      user: "l",
      path: "/api/v1/pods",
      query: "limit=500",
      threads: 1,
      calls: 1,
      execMs: 10,
    },
    {
      name: "getter",
      user: "g",
      path: "/api/v1/namespaces/a/pods/p",
      threads: 1,
      calls: 1,
      execMs: 10,
    },
  ], { durationMs: 1_000 });
  const seen: [string, string | URLSearchParams | undefined, number][] = [];
  const r = await runConfigScenario(s, BUILTIN, {
    estimator: (input) => {
      const seats = input.requestInfo.verb === "list" ? 5 : 1;
      seen.push([input.requestInfo.verb, input.query, input.maxSeats]);
      return { initialSeats: seats, finalSeats: 0, additionalLatencyMs: 0 };
    },
  });
  assert.deepEqual(seen, [["list", "limit=500", 8], ["get", "", 8]]);
  assert.deepEqual(r.clients.map((c) => c.dispatched), [1, 1]);
});
