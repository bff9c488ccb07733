import assert from "node:assert/strict";
import { bootstrapConfiguration, effectiveConfiguration } from "../../mod.ts";
import { resolveGradientOptions } from "../../src/adaptive/gradient_options.ts";
import { runConfigScenario } from "../../src/sim/config_run.ts";
import { configScenarioFromJson } from "../../src/sim/config_scenario.ts";
import type { ConfigSimulationResult } from "../../src/sim/config_types.ts";
import { ScenarioError } from "../../src/sim/scenario.ts";
import { run } from "../_helpers/cli.ts";

const EXAMPLE = new URL("../../examples/scenarios/adaptive_workers.json", import.meta.url).pathname;
const CLIENTS = [{ name: "a", path: "/api/v1/pods" }];

function rejects(value: Record<string, unknown>, message: string) {
  assert.throws(() => configScenarioFromJson({ config: [], clients: CLIENTS, ...value }), (e) => {
    assert.ok(e instanceof ScenarioError);
    assert.equal(e.message, message);
    return true;
  });
}

Deno.test("scenarios: serverConcurrencyLimit may be auto or the controller's options", () => {
  const auto = configScenarioFromJson({
    config: [],
    serverConcurrencyLimit: "auto",
    clients: CLIENTS,
  });
  assert.deepEqual(auto.adaptive, resolveGradientOptions());
  assert.equal(auto.serverConcurrencyLimit, 20);
  const tuned = configScenarioFromJson({
    config: [],
    serverConcurrencyLimit: { initial: 12, percentile: 0.5 },
    clients: CLIENTS,
  });
  assert.equal(tuned.adaptive?.percentile, 0.5);
  assert.equal(tuned.serverConcurrencyLimit, 12);
  rejects(
    { serverConcurrencyLimit: "AUTO" },
    'serverConcurrencyLimit: must be an integer >= 1, "auto" or the controller\'s options, got "AUTO"',
  );
  rejects(
    { serverConcurrencyLimit: { percentile: 2 } },
    "serverConcurrencyLimit: percentile must be a number in (0, 1], got 2",
  );
  rejects(
    { serverConcurrencyLimit: { buffr: 0.1 } },
    'serverConcurrencyLimit: unknown option "buffr" (did you mean "buffer"?)',
  );
  rejects(
    { serverConcurrencyLimit: "auto", holders: { count: 2 } },
    "serverConcurrencyLimit: a learned limit (auto) does not run with holders yet; give a number",
  );
});

Deno.test("scenarios: the upstream's fields, checked", () => {
  const s = configScenarioFromJson({
    config: [],
    upstream: { workers: 8, workMs: 50, changes: [{ atMs: 1000, workers: 4 }] },
    clients: CLIENTS,
  });
  assert.deepEqual(s.upstream, {
    workers: 8,
    workMs: 50,
    jitter: 0,
    changes: [{ atMs: 1000, workers: 4 }],
  });
  assert.equal(s.clients[0]!.execMs, 50);
  rejects({ upstream: { workMs: 50 } }, "upstream.workers: must be an integer >= 1, got null");
  rejects(
    { upstream: { workers: 1, workMs: 0 } },
    "upstream.workMs: must be a finite number > 0, got 0",
  );
  rejects(
    { upstream: { workers: 1, workMs: 5, jitter: 1 } },
    "upstream.jitter: must be below 1, got 1",
  );
  rejects(
    {
      upstream: {
        workers: 1,
        workMs: 5,
        changes: [{ atMs: 5, workers: 2 }, { atMs: 4, workers: 1 }],
      },
    },
    "upstream.changes[1].atMs: must be >= the previous change's (5), got 4",
  );
  rejects(
    { upstream: { workers: 1, workMs: 5, changes: [{ atMs: 5 }] } },
    "upstream.changes[0].workers: must be an integer >= 1, got null",
  );
  rejects(
    { upstream: { workers: 1, workMs: 5 }, clients: [{ name: "a", path: "/", execMs: 5 }] },
    "clients[0].execMs: comes from the upstream (its workMs and queue) when there is one; remove it",
  );
});

function phase(result: ConfigSimulationResult, workers: number, fromMs: number) {
  const p = result.upstream!.phases.find((p) => p.fromMs === fromMs);
  assert.ok(p !== undefined && p.workers === workers, `no phase of ${workers} from ${fromMs}`);
  return p;
}

Deno.test("apf simulate adaptive_workers.json: the learned limit finds K workers, then 4, then 8", async () => {
  // 90 simulated seconds on the simulated clock: the test takes a few hundred ms of real time.
  const r = await run(["simulate", EXAMPLE], { [EXAMPLE]: await Deno.readTextFile(EXAMPLE) });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as ConfigSimulationResult;
  // The goals, each phase measured from 10 s after its change of K: at most 2K inside
  // the upstream (p90) and at least 90% of K/S served.
  for (const [workers, fromMs] of [[8, 0], [4, 30_000], [8, 60_000]] as const) {
    const p = phase(out, workers, fromMs);
    assert.ok(p.inFlight.p90 <= 2 * workers, `K=${workers} from ${fromMs}: ${p.inFlight.p90}`);
    assert.ok(p.throughputRatio >= 0.9, `K=${workers} from ${fromMs}: ${p.throughputRatio}`);
  }
  // The limit it learned, once settled in each phase.
  const limits = (from: number, to: number) =>
    out.adaptive!.trace.filter((t) => t.atMs >= from && t.atMs < to && t.phase === "sampling")
      .map((t) => t.limit);
  for (
    const [from, to, low, high] of [[20e3, 30e3, 8, 16], [40e3, 60e3, 4, 8], [70e3, 90e3, 8, 16]]
  ) {
    const l = limits(from!, to!);
    assert.ok(l.length > 0 && Math.min(...l) >= low! && Math.max(...l) <= high!, `${from}: ${l}`);
  }
  assert.equal(out.adaptive!.trace[0]!.atMs, 0);
  // A window at the initial limit, then the minRTT measurement's pin.
  assert.equal(out.adaptive!.trace[0]!.limit, 20);
  assert.equal(out.adaptive!.trace[0]!.phase, "warming-up");
  assert.ok(out.adaptive!.trace.some((t) => t.limit === 3 && t.phase === "measuring-min-rtt"));
  assert.equal(out.adaptive!.final.minRttMs, 50);
  // The mouse is never stuck behind the elephants' queue once the level has seats.
  const mouse = out.clients.find((c) => c.name === "mouse")!;
  assert.ok(mouse.waitMs.p50 <= 50, `${mouse.waitMs.p50}`);
  assert.equal(mouse.rejected["queue-full"] + mouse.rejected["time-out"], 0);
  // Only the periodic borrowing adjustments are listed, as without a learned limit.
  assert.deepEqual(
    out.adjustments.map((a) => a.atMs),
    [0, 10e3, 20e3, 30e3, 40e3, 50e3, 60e3, 70e3, 80e3, 90e3],
  );
});

Deno.test("simulate: a fixed limit of 600 lets the whole load into the same upstream", async () => {
  const scenario = JSON.parse(await Deno.readTextFile(EXAMPLE));
  scenario.serverConcurrencyLimit = 600;
  scenario.durationMs = 20_000;
  const s = configScenarioFromJson(scenario);
  const r = await runConfigScenario(s, effectiveConfiguration(bootstrapConfiguration()));
  // The measurement: all 49 clients inside an upstream that works on 8.
  assert.equal(r.upstream!.inFlight.p90, 49);
  assert.equal(r.adaptive, undefined);
  assert.equal(r.serverConcurrencyLimit, 600);
});
