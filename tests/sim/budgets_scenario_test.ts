/**
 * `apf simulate` with budget holders: the same load on the exact
 * coordinator and on holders sharing each level's seats through a ledger.
 */

import assert from "node:assert/strict";
import { bootstrapConfiguration, effectiveConfiguration } from "../../mod.ts";
import { runConfigScenario } from "../../src/sim/config_run.ts";
import { configScenarioFromJson } from "../../src/sim/config_scenario.ts";
import type { ModeResult } from "../../src/sim/config_types.ts";

const here = new URL(".", import.meta.url);

async function example(name: string) {
  const text = await Deno.readTextFile(new URL(`../../examples/scenarios/${name}`, here));
  const scenario = configScenarioFromJson(JSON.parse(text));
  const effective = effectiveConfiguration(bootstrapConfiguration(), {
    serverConcurrencyLimit: scenario.serverConcurrencyLimit,
  });
  return { scenario, effective };
}

const level = (mode: ModeResult, name: string) => mode.levels.find((l) => l.name === name)!;
const client = (mode: ModeResult, name: string) => mode.clients.find((c) => c.name === name)!;

Deno.test("budgets: a noisy neighbour on one holder, mice on three others", async () => {
  const { scenario, effective } = await example("budgets_noisy_neighbour.json");
  const result = await runConfigScenario(scenario, effective);
  const { exact, budgets } = result.budgets!;
  for (const mode of [exact, budgets]) {
    for (const l of mode.levels) {
      assert.ok(l.peakSeatsInUse <= l.maxCurrentLimit, `${l.name}: ${JSON.stringify(l)}`);
    }
  }
  const used = level(budgets, "global-default"), exactUsed = level(exact, "global-default");
  assert.ok(used.peakSeatsInUse > used.nominalLimit, "borrowing works across the holders");
  assert.ok(
    used.meanSeatsInUse >= 0.85 * exactUsed.meanSeatsInUse,
    `budgets used ${used.meanSeatsInUse} seats on average, exact ${exactUsed.meanSeatsInUse}`,
  );
  for (const mouse of ["mouse-1", "mouse-2", "mouse-3"]) {
    const m = client(budgets, mouse);
    assert.equal(m.rejected["time-out"] + m.rejected["queue-full"], 0, mouse);
    assert.ok(m.dispatched >= client(exact, mouse).dispatched, `${mouse} served as much`);
    assert.ok(m.waitMs.p99 <= client(exact, mouse).waitMs.p99, `${mouse} waited no longer`);
  }
  // Deterministic: the same run again gives the same numbers.
  assert.deepEqual((await runConfigScenario(scenario, effective)).budgets, result.budgets);
});

Deno.test("budgets: saturating demand spread unevenly over 4 holders uses 90% of what exact does", async () => {
  const clients = [40, 20, 10, 5].map((threads, i) => ({
    name: `tenant-${i}`,
    user: `tenant-${i}`,
    groups: ["system:authenticated"],
    path: "/api/v1/namespaces/default/configmaps",
    threads,
    execMs: 100,
    thinkMs: 1,
    holder: i,
  }));
  const scenario = configScenarioFromJson({
    config: [],
    serverConcurrencyLimit: 49,
    durationMs: 60_000,
    holders: { count: 4, periodMs: 1_000, leaseMs: 5_000, storeLatencyMs: 2 },
    clients,
  });
  const effective = effectiveConfiguration(bootstrapConfiguration(), {
    serverConcurrencyLimit: 49,
  });
  const { exact, budgets } = (await runConfigScenario(scenario, effective)).budgets!;
  const used = level(budgets, "global-default"), exactUsed = level(exact, "global-default");
  assert.ok(used.peakSeatsInUse <= used.maxCurrentLimit);
  assert.ok(
    used.meanSeatsInUse >= 0.9 * exactUsed.meanSeatsInUse,
    `budgets ${used.meanSeatsInUse}, exact ${exactUsed.meanSeatsInUse}`,
  );
  // Every tenant is served: none starves behind the biggest.
  for (const c of budgets.clients) assert.ok(c.dispatched > 0, c.name);
});
