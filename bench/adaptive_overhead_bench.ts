/**
 * What `serverConcurrencyLimit: "auto"` adds to each request, in process and
 * without wrk's noise: uncontended acquire + release pairs on the embedded
 * coordinator (built-in configuration, `global-default`, one flow, the real
 * `systemClock`), as `apf()` does them: `begin()`, then, with a learned
 * limit, `AdaptiveLimit.track()` on the seat (its time to the release is a
 * sample: two clock reads, the coordinator's seat demand, `record()`).
 *
 * - `static`: ServerCL 600, the seat released as it is;
 * - `auto`: an `AdaptiveLimit` (the controller's defaults) driving the coordinator, the seat tracked.
 *
 * The controller is first brought to its sampling phase (a window at the initial limit, then 50
 * samples for the minRTT), so `record()` takes its full path. Then interleaved batches (the order
 * reversed every other round); prints the median ns per pair of each and the median of the
 * rounds' differences.
 *
 * Run: `deno run --allow-read --allow-env=LOG_TOKENS,LOG_STREAM bench/adaptive_overhead_bench.ts [rounds=41] [pairs=20000]`.
 *
 * @module
 */

import {
  bootstrapConfiguration,
  effectiveConfiguration,
  EmbeddedCoordinator,
  type Seat,
  type SeatRequest,
  systemClock,
} from "../mod.ts";
import { AdaptiveLimit } from "../src/coordinator/adaptive_limit.ts";

const rounds = Number(Deno.args[0] ?? 41);
const pairs = Number(Deno.args[1] ?? 20_000);

const request: SeatRequest = {
  priorityLevel: "global-default",
  flowSchema: "global-default",
  flowHash: { hi: 0x9e3779b9, lo: 0x7f4a7c15 },
  distinguisher: "alice",
};

const staticCoordinator = new EmbeddedCoordinator(
  effectiveConfiguration(bootstrapConfiguration()),
);
const autoCoordinator = new EmbeddedCoordinator(
  effectiveConfiguration(bootstrapConfiguration()),
);
const adaptive = new AdaptiveLimit(autoCoordinator, {}, { clock: systemClock });

function seatOf(c: EmbeddedCoordinator): Seat {
  const a = c.begin(request);
  if (a instanceof Promise || !a.admitted) throw new Error("Cannot bench: the pair waited");
  return a.seat;
}

function batch(auto: boolean): number {
  const start = performance.now();
  if (auto) {
    for (let i = 0; i < pairs; i++) adaptive.track(seatOf(autoCoordinator)).release();
  } else {
    for (let i = 0; i < pairs; i++) seatOf(staticCoordinator).release();
  }
  return (performance.now() - start) * 1e6 / pairs;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
// To the sampling phase: timers run between batches.
const until = performance.now() + 10_000;
while (adaptive.snapshot().phase !== "sampling" && performance.now() < until) {
  batch(true);
  batch(false);
  await tick();
}
if (adaptive.snapshot().phase !== "sampling") throw new Error("Cannot bench: never sampling");

const ns = { static: [] as number[], auto: [] as number[], diff: [] as number[] };
for (let r = 0; r < rounds; r++) {
  let s: number, a: number;
  if (r % 2 === 0) {
    s = batch(false);
    a = batch(true);
  } else {
    a = batch(true);
    s = batch(false);
  }
  ns.static.push(s);
  ns.auto.push(a);
  ns.diff.push(a - s);
  await tick(); // the controller's window timer runs
}
function median(xs: number[]): number {
  const v = [...xs].sort((x, y) => x - y);
  const m = v.length >> 1;
  return v.length % 2 === 1 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}
const snap = adaptive.snapshot();
console.log(
  `pairs/batch ${pairs}, rounds ${rounds}: static ${median(ns.static).toFixed(0)} ns/pair, auto ${
    median(ns.auto).toFixed(0)
  } ns/pair, auto − static ${median(ns.diff).toFixed(0)} ns (median of the rounds' differences; ` +
    `range ${Math.min(...ns.diff).toFixed(0)} to ${Math.max(...ns.diff).toFixed(0)}); ` +
    `controller: ${snap.phase}, limit ${snap.limit}, ${snap.windows} windows`,
);
adaptive.close();
autoCoordinator.close();
staticCoordinator.close();
