/**
 * How long a demand shift takes to move the budgets, on the real clock: two
 * {@linkcode BudgetHolder}s (period 200 ms) over a {@linkcode RedisBudgetStore}
 * on a `redis-server` this script starts on a free loopback port. Holder A
 * floods `global-default` (64 loops, each holding its seat 10 ms) while B is
 * idle; then B floods too; then A stops. Sampling both holders' `budgets()`
 * every 10 ms, it reports how long after B starts its capacity first reaches
 * an equal share (half the level), and how long after A stops B has the
 * whole level (the level's limit) and 90% of it, in ms and in periods,
 * and how long A takes to give its seats back (capacity at most 10% of what
 * it held). Trials start afresh (new holders, `FLUSHALL`).
 *
 * Run: `deno run --allow-run --allow-net=127.0.0.1 --allow-read --allow-env=LOG_TOKENS,LOG_STREAM --allow-sys=loadavg bench/budget_shift_bench.ts [trials=5]`
 *
 * @module
 */

import { resolveConfiguration } from "../mod.ts";
import { redisCli, startRedis } from "../tests/_helpers/redis_server.ts";
import type { SeatRequest } from "../mod.ts";
import { BudgetHolder } from "../src/budgets/holder.ts";
import { RedisBudgetStore } from "../src/redis/redis_budget_store.ts";

const TRIALS = Number(Deno.args[0] ?? 5);
const PERIOD_MS = 200;
const LOOPS = 64;
const HOLD_MS = 10;
const STEADY_MS = 3_000;
const AFTER_MS = 3_000; // the phases end before the first borrowing adjustment (10 s)
const LEVEL = "global-default";
const request: SeatRequest = {
  priorityLevel: LEVEL,
  flowSchema: LEVEL,
  flowHash: { hi: 12345, lo: 67890 },
};
const config = resolveConfiguration(undefined, { serverConcurrencyLimit: 600 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${x.toFixed(0)} ms (${(x / PERIOD_MS).toFixed(1)} periods)`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `LOOPS` loops on `holder` until `running()` is false. */
function flood(holder: BudgetHolder, running: () => boolean): Promise<void[]> {
  return Promise.all(Array.from({ length: LOOPS }, async () => {
    while (running()) {
      const a = await holder.acquire(request);
      await sleep(HOLD_MS);
      if (a.admitted) a.seat.release();
    }
  }));
}

const budget = (h: BudgetHolder) => h.budgets().find((b) => b.level === LEVEL)!;

async function trial(port: number) {
  await redisCli(redis, "FLUSHALL");
  const url = `redis://127.0.0.1:${port}`;
  const stores = [new RedisBudgetStore(url), new RedisBudgetStore(url)];
  const [a, b] = stores.map((store, i) =>
    new BudgetHolder(config, { store, id: `h${i}`, periodMs: PERIOD_MS })
  ) as [BudgetHolder, BudgetHolder];
  await Promise.all([a.ready(), b.ready()]);
  let aRunning = true;
  let bRunning = false;
  const aDone = flood(a, () => aRunning);
  await sleep(STEADY_MS);
  const before = { a: budget(a), b: budget(b) };
  // The first shift: B floods too; it should get an equal share (half the level).
  bRunning = true;
  const bDone = flood(b, () => bRunning);
  const join = await watch(a, b);
  // The second: A stops; B should get the whole level.
  aRunning = false;
  const handover = await watch(a, b);
  const after = { a: budget(a), b: budget(b) };
  bRunning = false;
  await Promise.all([aDone, bDone]);
  a.close();
  b.close();
  await Promise.all(stores.map((s) => s.close()));
  const half = Math.floor(before.a.limit / 2);
  return {
    before,
    after,
    bHalf: join.firstAt((s) => s.b >= half),
    bFull: handover.firstAt((s) => s.b >= before.a.limit),
    b90: handover.firstAt((s) => s.b >= 0.9 * before.a.limit),
    aGone: handover.firstAt((s) => s.a <= 0.1 * before.a.capacity),
    trace: [...join.trace, "| A stops:", ...handover.trace],
  };
}

/** Samples both holders' capacities every 10 ms for `AFTER_MS`. */
async function watch(a: BudgetHolder, b: BudgetHolder) {
  const shiftAt = performance.now();
  const samples: { t: number; a: number; b: number; bTarget: number }[] = [];
  while (performance.now() - shiftAt < AFTER_MS) {
    samples.push({
      t: performance.now() - shiftAt,
      a: budget(a).capacity,
      b: budget(b).capacity,
      bTarget: budget(b).target,
    });
    await sleep(10);
  }
  return {
    firstAt: (ok: (s: typeof samples[number]) => boolean) => samples.find(ok)?.t ?? NaN,
    trace: samples.filter((_, i) => i % 20 === 0 && i < 100).map((s) =>
      `${Math.round(s.t)}ms A${s.a}/B${s.b}(t${s.bTarget})`
    ),
  };
}

// A redis-server on a free loopback port, without persistence (tests/_helpers/redis_server.ts).
const redis = await startRedis();
const port = redis.port;
try {
  console.log(
    `${TRIALS} trials, period ${PERIOD_MS} ms, ${LOOPS} loops holding a seat ${HOLD_MS} ms, ` +
      `A floods ${STEADY_MS} ms then B floods; samples every 10 ms`,
  );
  const results: Awaited<ReturnType<typeof trial>>[] = [];
  for (let t = 0; t < TRIALS; t++) {
    const r = await trial(port);
    results.push(r);
    const show = (b: { capacity: number; target: number; limit: number }) =>
      `cap ${b.capacity} target ${b.target} limit ${b.limit}`;
    console.log(
      `trial ${t + 1}: before A ${show(r.before.a)}, B ${show(r.before.b)}; ` +
        `after A ${show(r.after.a)}, B ${show(r.after.b)}; ` +
        `B has half the level in ${ms(r.bHalf)} once it floods too; once A stops, ` +
        `B has the whole level in ${ms(r.bFull)}, 90% in ${ms(r.b90)}; ` +
        `A at <=10% in ${r.aGone.toFixed(0)} ms` +
        ` | loadavg ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`,
    );
    console.log(`  trace: ${r.trace.join(" ")}`);
  }
  const m = (f: (r: typeof results[number]) => number) => median(results.map(f));
  console.log(
    `median: B has half the level in ${ms(m((r) => r.bHalf))} once it floods too; ` +
      `the whole level in ${ms(m((r) => r.bFull))} once A stops (90% in ${
        ms(m((r) => r.b90))
      }), A at <=10% in ${m((r) => r.aGone).toFixed(0)} ms`,
  );
} finally {
  await redis.stop();
}
