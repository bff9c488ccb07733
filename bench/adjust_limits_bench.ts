/**
 * Borrowing adjustment benchmark: the cost of one
 * `EmbeddedCoordinator.adjustLimits()` (`docs/semantics.md` §6: fold each
 * level's seat demand into its statistics, allocate current limits, apply
 * them), on the built-in configuration (8 levels) and on 100 limited levels
 * that lend and borrow. Run with `deno task bench bench/adjust_limits_bench.ts`.
 *
 * The coordinators run on a fake clock moving 10 s per adjustment, as the
 * real timer would. `deno bench` reports means, so the file also prints,
 * when it loads, the median of 101 interleaved batches of 200 adjustments.
 */

import {
  bootstrapConfiguration,
  effectiveConfiguration,
  EmbeddedCoordinator,
  FakeEventClock,
} from "../mod.ts";
import { configOf, limited } from "../tests/_helpers/coordinator_config.ts";

const LEVELS = 100;

/** 100 queuing levels of varied shares, lending 0–90% and borrowing up to 50–200% of nominal. */
function hundredLevels() {
  return configOf(
    5000,
    Array.from({ length: LEVELS }, (_, i) =>
      limited(`level-${i}`, {
        shares: 1 + (i * 7) % 40,
        lendablePercent: (i * 10) % 100,
        borrowingLimitPercent: 50 + (i % 4) * 50,
        queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 },
      })),
  );
}

/** An adjustment of a coordinator with some demand on a third of its levels. */
function adjuster(config: ReturnType<typeof hundredLevels>): () => void {
  const clock = new FakeEventClock();
  const c = new EmbeddedCoordinator(config, { clock });
  // Hold a few seats so the levels' demand statistics are not all zero.
  for (const [i, pl] of config.priorityLevels.entries()) {
    if (i % 3 !== 0 || pl.currentLimit === 0) continue;
    for (let k = 0; k < Math.min(pl.currentLimit, 3); k++) {
      void c.acquire({
        priorityLevel: pl.name,
        flowSchema: "bench",
        flowHash: pl.queuing !== undefined && pl.queuing !== null && pl.queuing.queues > 1
          ? { hi: i, lo: k }
          : null,
      });
    }
  }
  return () => {
    clock.advance(10_000);
    c.adjustLimits();
  };
}

const variants: [string, () => void][] = [
  ["built-in configuration (8 levels)", adjuster(effectiveConfiguration(bootstrapConfiguration()))],
  [`${LEVELS} limited levels (+ exempt, catch-all)`, adjuster(hundredLevels())],
];

for (const [name, fn] of variants) Deno.bench(name, { group: "adjustLimits" }, fn);

/** Median µs per adjustment: 101 batches of 200, the variants taking turns. */
function medians(fns: (() => void)[]): number[] {
  const batches = 101, perBatch = 200;
  for (const fn of fns) for (let i = 0; i < 1000; i++) fn();
  const samples = fns.map(() => new Float64Array(batches));
  for (let b = 0; b < batches; b++) {
    fns.forEach((fn, k) => {
      const t0 = performance.now();
      for (let i = 0; i < perBatch; i++) fn();
      samples[k]![b] = ((performance.now() - t0) * 1000) / perBatch;
    });
  }
  return samples.map((s) => s.sort()[batches >> 1]!);
}

const us = medians(variants.map(([, fn]) => fn));
console.log("median per adjustLimits() (101 interleaved batches of 200):");
variants.forEach(([name], k) => console.log(`| ${name} | ${us[k]!.toFixed(1)} µs |`));
