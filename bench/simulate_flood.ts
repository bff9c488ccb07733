/**
 * A flood on the default configuration: `runConfigScenario` with
 * N closed-loop clients (one thread each, distinct users, all classified
 * `global-default`), 100 ms execution, 100 ms think time, simulated for D
 * ms; prints the real time, the calls simulated (dispatched + rejected) and
 * calls per real second.
 *
 * Run with `deno run --allow-read --allow-env=LOG_TOKENS,LOG_STREAM
 * bench/simulate_flood.ts [clients=10000] [durationMs=600000]`.
 */

import { bootstrapConfiguration, effectiveConfiguration } from "../mod.ts";
import { configScenarioFromJson, runConfigScenario } from "../src/sim/mod.ts";

const clients = Number(Deno.args[0] ?? 10_000);
const durationMs = Number(Deno.args[1] ?? 600_000);

const scenario = configScenarioFromJson({
  name: "flood",
  config: [],
  durationMs,
  clients: Array.from({ length: clients }, (_, i) => ({
    name: `c${i}`,
    user: `user-${i}`,
    groups: ["developers"],
    path: "/api/v1/namespaces/team/configmaps",
    threads: 1,
    execMs: 100,
    thinkMs: 100,
  })),
});
const effective = effectiveConfiguration(bootstrapConfiguration());

const t0 = performance.now();
const result = await runConfigScenario(scenario, effective);
const seconds = (performance.now() - t0) / 1000;

const levels = new Set(result.clients.map((c) => c.priorityLevel));
let dispatched = 0, rejected = 0;
for (const c of result.clients) {
  dispatched += c.dispatched;
  for (const n of Object.values(c.rejected)) rejected += n;
}
const calls = dispatched + rejected;
const fmt = (x: number) => Math.round(x).toLocaleString("en-US");
console.log(`clients ${fmt(clients)}, simulated ${durationMs / 1000} s, levels ${[...levels]}`);
console.log(`real time ${seconds.toFixed(2)} s`);
console.log(`calls ${fmt(calls)} (dispatched ${fmt(dispatched)}, rejected ${fmt(rejected)})`);
const reasons = result.levels.find((l) => l.name === "global-default")!.rejected;
console.log(`global-default rejections ${JSON.stringify(reasons)}`);
console.log(`calls per real second ${fmt(calls / seconds)}`);
console.log(`heap used ${(Deno.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`);
