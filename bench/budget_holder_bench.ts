/**
 * Decisions within a budget: acquire + release pairs per second of a
 * {@linkcode BudgetHolder} whose share covers the load, against the
 * {@linkcode EmbeddedCoordinator} on the same configuration, in interleaved
 * batches (the variants take turns, so a busy machine slows them alike);
 * prints the medians and the paired ratio (the median of each batch's
 * ratio). Both on the real clock, with their metrics attached, one request
 * at a time on `global-default` (built-in configuration, server limit 600).
 * The holder's store is in memory, settled every second as in production:
 * the point is the cost of a decision within the budget, with no I/O.
 *
 * Then, the store operations at steady state: four holders on one memory
 * store, each driving 1,000 pairs per period, count reads and writes per
 * holder per level per second.
 *
 * Run: `deno run --allow-read --allow-env=LOG_TOKENS,LOG_STREAM bench/budget_holder_bench.ts [batches=21]`
 *
 * @module
 */

import { bootstrapConfiguration, effectiveConfiguration, EmbeddedCoordinator } from "../mod.ts";
import type { Coordinator, SeatRequest } from "../mod.ts";
import { BudgetHolder } from "../src/budgets/holder.ts";
import type { Ledger } from "../src/budgets/ledger.ts";
import { MemoryBudgetStore } from "../src/budgets/memory_store.ts";
import type { BudgetStore, StoredLedger } from "../src/budgets/store.ts";
import { FlowcontrolMetrics } from "../src/observe/mod.ts";

const BATCHES = Number(Deno.args[0] ?? 21);
const PAIRS = 20_000;
const config = effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: 600 });
const request: SeatRequest = {
  priorityLevel: "global-default",
  flowSchema: "global-default",
  flowHash: { hi: 12345, lo: 67890 },
};

const metrics = new FlowcontrolMetrics();
const embedded = new EmbeddedCoordinator(config, { metrics });
const holder = new BudgetHolder(config, { store: new MemoryBudgetStore(), id: "bench" });
await holder.ready();
// The first settle had no demand: one request waiting makes the next one claim seats.
(await holder.acquire(request)).admitted;
while (holder.budgets().find((b) => b.level === "global-default")!.capacity === 0) {
  await new Promise((r) => setTimeout(r, 100));
}

async function pairs(c: Coordinator) {
  const start = performance.now();
  for (let i = 0; i < PAIRS; i++) {
    const a = await c.acquire(request);
    if (!a.admitted) throw new Error("Cannot bench: rejected");
    a.seat.release();
  }
  return PAIRS / ((performance.now() - start) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rates = { embedded: [] as number[], holder: [] as number[], ratio: [] as number[] };
for (let b = 0; b < BATCHES; b++) {
  // Alternate which goes first.
  const [first, second] = b % 2 === 0
    ? ["embedded", "holder"] as const
    : ["holder", "embedded"] as const;
  const r: Record<string, number> = {};
  for (const name of [first, second]) {
    r[name] = await pairs(name === "embedded" ? embedded : holder);
  }
  rates.embedded.push(r.embedded!);
  rates.holder.push(r.holder!);
  rates.ratio.push(r.holder! / r.embedded!);
}
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(
  `batches: ${BATCHES} x ${PAIRS} pairs, uncontended, global-default, real clock, metrics on`,
);
console.log(`embedded coordinator: ${fmt(median(rates.embedded))} pairs/s (median)`);
console.log(`budget holder:        ${fmt(median(rates.holder))} pairs/s (median)`);
console.log(`paired ratio holder/embedded: ${median(rates.ratio).toFixed(3)}x`);
embedded.close();
holder.close();

// ---- store operations at steady state -------------------------------------------------------

class CountingStore implements BudgetStore {
  inner = new MemoryBudgetStore();
  reads = 0;
  writes = 0;
  read(level: string): Promise<StoredLedger | null> {
    this.reads++;
    return this.inner.read(level);
  }
  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    this.writes++;
    return this.inner.write(level, expected, ledger);
  }
}
const store = new CountingStore();
const holders = [0, 1, 2, 3].map((i) => new BudgetHolder(config, { store, id: `h${i}` }));
await Promise.all(holders.map((h) => h.ready()));
const seconds = 5;
const stop = performance.now() + seconds * 1000;
const before = { reads: store.reads, writes: store.writes };
let decisions = 0;
await Promise.all(holders.map(async (h) => {
  while (performance.now() < stop) {
    for (let i = 0; i < 1_000; i++) {
      const a = await h.acquire(request);
      if (a.admitted) {
        a.seat.release();
        decisions++;
      }
    }
    await new Promise((r) => setTimeout(r, 1));
  }
}));
const levels = config.priorityLevels.filter((pl) => pl.type === "Limited").length;
const perHolderLevelSecond = (n: number) => n / holders.length / levels / seconds;
console.log(
  `4 holders, ${levels} limited levels, ${seconds} s, ${fmt(decisions / seconds)} decisions/s: ` +
    `${perHolderLevelSecond(store.reads - before.reads).toFixed(2)} reads and ` +
    `${perHolderLevelSecond(store.writes - before.writes).toFixed(2)} writes ` +
    `per holder per level per second`,
);
for (const h of holders) h.close();
