/**
 * Simulator benchmark: one simulated minute of a priority level
 * overloaded 10x by 1,000 flows, run end to end by `simulate` on the fake
 * clock. Target: well under a second of real time. Run with
 * `deno task bench bench/simulate_bench.ts`.
 *
 * The load, closed-loop like Kubernetes' QueueSet tests (`docs/semantics.md` §10.1):
 *
 * - the level: 100 seats, 128 queues of at most 50 requests, hand size 6;
 * - 1,000 clients, each a distinct flow with 2 threads; each call holds one
 *   seat for 20 ms of execution, then its thread thinks 20 ms;
 * - demand: unconstrained, a thread would hold its seat 20 / (20 + 20) = 1/2
 *   of the time, so 1,000 · 2 · 1/2 = 1,000 seats are asked for: 10x the 100
 *   seats. Served, the level completes 100 / 20 ms = 5,000 calls/s, and fair
 *   queuing gives each flow 5 calls/s;
 * - calls: a thread's cycle is then 2,000 threads / 5,000 calls/s = 0.4 s, so
 *   150 calls last a minute; each thread makes 160, so every thread stays
 *   busy for the whole minute (320,000 calls, the last 20,000 drained after
 *   it, as `simulate` runs until every call is done);
 * - rejections: none are expected: at most 2,000 calls are outstanding, and
 *   the queues hold 128 · 50 = 6,400, so the overload shows as waiting (about
 *   1,800 requests queued throughout), not as `queue-full`. `simulate` ends a
 *   thread at its first rejection, so a load that overflows the queues
 *   shrinks until it fits them.
 *
 * When the file loads it runs the scenario once and prints what happened,
 * so that the numbers show the load was real.
 */

import { type Scenario, scenarioFromJson } from "../src/sim/mod.ts";
import { simulate } from "../src/sim/run.ts";

const CLIENTS = 1000;
const MASK = (1n << 64n) - 1n;

const scenario: Scenario = scenarioFromJson({
  name: "one-minute overload, 1000 flows, 10x capacity",
  priorityLevel: {
    type: "Limited",
    concurrencyLimit: 100,
    queuing: { queues: 128, queueLengthLimit: 50, handSize: 6 },
  },
  durationMs: 60_000,
  clients: Array.from({ length: CLIENTS }, (_, i) => ({
    name: `flow-${i}`,
    // Multiplying by an odd constant mod 2^64 is a bijection: 1,000 distinct, spread hashes.
    flowHash: String((BigInt(i + 1) * 0x9e3779b97f4a7c15n) & MASK),
    threads: 2,
    calls: 160,
    execMs: 20,
    thinkMs: 20,
    initialSeats: 1,
    finalSeats: 0,
  })),
});

{
  const t0 = performance.now();
  const run = simulate(scenario);
  const wallMs = performance.now() - t0;
  let dispatched = 0, executingSeats = 0;
  const rejected = { "queue-full": 0, "concurrency-limit": 0, "time-out": 0, cancelled: 0 };
  for (const c of run.result.clients) {
    dispatched += c.dispatched;
    executingSeats += c.averageSeats[0]!;
    for (const reason of Object.keys(rejected) as (keyof typeof rejected)[]) {
      rejected[reason] += c.rejected[reason];
    }
  }
  const demand = run.result.seatDemand;
  console.log(
    [
      `${scenario.name}: first run (cold JIT) took ${wallMs.toFixed(0)} ms`,
      `  dispatched ${dispatched}, rejected ${JSON.stringify(rejected)}, stranded ${run.stranded}`,
      `  seats executing over the minute, average: ${executingSeats.toFixed(2)} of 100`,
      `  seat demand (in use + waiting) over the minute: average ${demand.average.toFixed(0)}, ` +
      `high watermark ${demand.highWatermark}`,
      `  real time per dispatched call: ${(wallMs * 1e6 / dispatched).toFixed(0)} ns`,
    ].join("\n"),
  );
}

Deno.bench(scenario.name, { n: 10, warmup: 2 }, () => {
  simulate(scenario);
});
