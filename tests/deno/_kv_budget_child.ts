/**
 * A budget holder in a process of its own, for `kv_budget_holder_test.ts`:
 * opens the KV file given, floods level `work`, and prints one line per
 * event until its standard input closes, then stops, closes and exits 0.
 *
 *   deno run --unstable-kv --allow-read=DIR --allow-write=DIR tests/deno/_kv_budget_child.ts FILE ID
 *
 * Lines (times are wall-clock ms, {@linkcode wallTime}):
 * `ready`, `+ <t>` a seat taken, `- <t>` a seat about to be released,
 * `b <t> <claim> <capacity> <leaseEndsAt>` the level's budget (every 20 ms).
 */

import { BudgetHolder } from "../../src/budgets/holder.ts";
import { KvBudgetStore } from "../../src/deno/kv_budget_store.ts";
import { CONFIG, flood, LEVEL, sleep, TIMINGS, wallTime } from "./_kv_flood.ts";

const [path, id] = Deno.args;
if (path === undefined || id === undefined) throw new Error("usage: _kv_budget_child.ts FILE ID");

const kv = await Deno.openKv(path);
const holder = new BudgetHolder(CONFIG, {
  store: new KvBudgetStore(kv),
  id,
  ...TIMINGS,
  onStoreError: (e) => console.error(`${id}: store error:`, e),
});
await holder.ready();
console.log("ready");
const load = flood(holder, 20, {
  onAdmit: () => console.log(`+ ${wallTime()}`),
  onRelease: () => console.log(`- ${wallTime()}`),
});
let done = false;
const reporting = (async () => {
  while (!done) {
    const b = holder.budgets().find((l) => l.level === LEVEL)!;
    console.log(`b ${wallTime()} ${b.claim} ${b.capacity} ${b.leaseEndsAt ?? "null"}`);
    await sleep(20);
  }
})();

// Standard input closes: the test is done with this process.
for await (const _ of Deno.stdin.readable) {
  // Nothing is sent; only the end counts.
}
done = true;
await reporting;
const stopping = load.stop();
holder.close();
await stopping;
kv.close();
console.error(`${id}: ${load.admitted} admitted, ${JSON.stringify(holder.stats)}`);
