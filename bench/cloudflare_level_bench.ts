/**
 * Decisions per second against one priority-level Durable Object in
 * workerd (Miniflare): one RPC per operation, batched RPC, and WebSocket
 * batches, in interleaved rounds in one run. A decision is one acquire
 * answered (all admitted here) and its seat released.
 *
 * Run: `deno run -A bench/cloudflare_level_bench.ts [rounds=3]`
 *
 * @module
 */

import { byUserSchema, queuingLevel } from "../tests/cloudflare/_manifests.ts";
import { startWorker } from "../tests/cloudflare/_miniflare.ts";

const rounds = Number(Deno.args[0] ?? 3);
const level =
  queuingLevel("bench", { shares: 100, queues: 128, handSize: 6, queueLengthLimit: 50 }) +
  byUserSchema("bench", 1000, "system:authenticated");

await using worker = await startWorker({
  entry: new URL("./cloudflare_bench_worker.ts", import.meta.url),
  durableObjects: { APF_LEVELS: "PriorityLevelObject", APF_CONTROLLER: "ControllerObject" },
  bindings: { APF_CONFIG: level, APF_SERVER_CONCURRENCY: "10000", APF_MANDATORY_ONLY: "true" },
});

const variants: Array<[string, string]> = [
  ["rpc: 1 RPC per operation, 16 loops", "/rpc?n=4000&k=16"],
  ["batched RPC: 100 per call, 4 loops", "/batch?n=100000&size=100&k=4"],
  ["WebSocket: 100 ops per frame", "/ws?n=100000&size=100"],
  ["WebSocket: 1,000 ops per frame", "/ws?n=300000&size=1000"],
];

// Warm-up: create the objects, compile the paths.
for (const [, path] of variants) await (await worker.fetch(path.replace(/n=\d+/, "n=2000"))).text();

const results = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  for (const [name, path] of variants) {
    const t0 = performance.now();
    const res = await worker.fetch(path);
    const body = await res.json() as { admitted: number; ms: number };
    const wallMs = performance.now() - t0;
    const rate = body.admitted / (wallMs / 1000);
    (results.get(name) ?? results.set(name, []).get(name)!).push(rate);
    console.log(
      `round ${r + 1}  ${name.padEnd(40)} ${body.admitted} decisions in ${wallMs.toFixed(0)} ms` +
        ` (worker ${body.ms} ms): ${Math.round(rate).toLocaleString("en-US")}/s`,
    );
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log("\n| variant | decisions/s per round | median |\n|---|---|---|");
for (const [name, rates] of results) {
  const fmt = (x: number) => Math.round(x).toLocaleString("en-US");
  console.log(`| ${name} | ${rates.map(fmt).join(", ")} | ${fmt(median(rates))} |`);
}
