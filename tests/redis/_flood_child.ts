/**
 * One process of the multi-process Redis test: a budget holder on the
 * server at `url`; once it is ready it prints `ready` and reads from its
 * standard input when to start (wall clock, ms), floods the level `work`
 * from then for `durationMs`, and prints one line of JSON: each admission's
 * interval of holding its seat (wall clock, measured inside the true one:
 * from after the grant to before the release).
 *
 * Run: `deno run --import-map=dev/import_map.json --allow-net=127.0.0.1 tests/redis/_flood_child.ts <url> <id> <durationMs>`
 */

import { BudgetHolder } from "../../src/budgets/holder.ts";
import { systemClock } from "../../src/fairqueuing/clock.ts";
import { RedisBudgetStore } from "../../src/redis/mod.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { sleep } from "../_helpers/real_time.ts";

/** The level `work` of 6 seats, queuing (and the mandatory ones). */
export const FLOOD_CONFIG = configOf(12, [
  exempt(),
  limited("work", { shares: 5, queuing: { queues: 16, handSize: 2, queueLengthLimit: 50 } }),
]);

/** What a child prints. */
export interface ChildReport {
  /** The holder's id. */
  id: string;
  /** `[from, to]` of each admission, wall clock in ms (sub-millisecond). */
  intervals: [number, number][];
}

const wallNow = () => performance.timeOrigin + systemClock.now();

if (import.meta.main) {
  const [url, id, durationMs] = Deno.args;
  const store = new RedisBudgetStore(url!);
  const holder = new BudgetHolder(FLOOD_CONFIG, {
    store,
    id: id!,
    periodMs: 100,
    leaseMs: 400,
    drainMs: 200,
    driftMarginMs: 50,
    storeTimeoutMs: 300,
    policy: "closed",
  });
  await holder.ready();
  console.log("ready");
  const { value } = await Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader()
    .read();
  const startAt = Number(value);
  if (!Number.isFinite(startAt)) throw new Error(`no start time on stdin: ${value}`);
  await sleep(Math.max(0, startAt - wallNow()));
  const end = startAt + Number(durationMs);
  const intervals: [number, number][] = [];
  let flow = 0;
  const worker = async () => {
    while (wallNow() < end) {
      const admission = await holder.acquire({
        priorityLevel: "work",
        flowSchema: "fs",
        flowHash: { hi: 0, lo: flow++ },
        waitLimitMs: 5_000,
      });
      if (!admission.admitted) {
        await sleep(10);
        continue;
      }
      const from = wallNow();
      await sleep(20);
      intervals.push([from, wallNow()]);
      admission.seat.release();
    }
  };
  await Promise.all(Array.from({ length: 12 }, worker));
  const report: ChildReport = { id: id!, intervals };
  holder.close();
  await store.close();
  console.log(JSON.stringify(report));
}
