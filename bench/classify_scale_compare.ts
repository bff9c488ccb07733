/**
 * Before/after comparison of classification at scale, in interleaved rounds
 * in one process: the classifier of an older checkout ("before") and this
 * tree's ("after") take turns, batch by batch, on the same workloads
 * (bench/_classify_scale.ts), so a busy machine slows both alike. Prints the
 * median ns per operation of each case and the ratios the goals are stated
 * in. Run from the repository root:
 *
 * ```sh
 * git archive <base-commit> src | tar -x -C /tmp/apf-base
 * deno run --allow-read --allow-env=LOG_TOKENS,LOG_STREAM --v8-flags=--expose-gc \
 *   bench/classify_scale_compare.ts /tmp/apf-base [rounds]
 * ```
 *
 * The older classifier resolves its imports (`@noble/hashes`) through this
 * tree's import map. Without a directory (or with `""`), only "after" runs.
 */

import { Classifier } from "../mod.ts";
import { FLOW_CACHE_LIMIT, flowHash } from "../src/classify/mod.ts";
import { FlowCache } from "../src/classify/_flow_cache.ts";
import {
  type ClassifierLike,
  classifyAcquireRelease,
  classifyOne,
  classifyRoundRobin,
  classifyRoundRobinFresh,
  configuration,
  coordinators,
  heapGrowth,
  userAt,
  users,
} from "./_classify_scale.ts";
import type { EffectiveConfiguration } from "../mod.ts";

type Make = (effective: EffectiveConfiguration) => ClassifierLike;
type Hash = (flowSchemaName: string, distinguisher: string) => unknown;
type Batch = (n: number) => void | Promise<void>;

const [baseDir, roundsArg] = Deno.args;
const ROUNDS = Number(roundsArg ?? 21);
/** Each batch runs for about this long, so that slow and fast variants weigh alike. */
const BATCH_MS = 25;

const variants: [string, Make][] = [["after", (e) => new Classifier(e)]];
const hashes = new Map<string, Hash>([["after", flowHash]]);
if (baseDir !== undefined && baseDir !== "") {
  const root = `file://${Deno.realPathSync(baseDir)}/src/classify`;
  const old = await import(`${root}/classifier.ts`) as {
    Classifier: new (e: EffectiveConfiguration) => Classifier;
  };
  const oldHash = await import(`${root}/flow_hash.ts`) as { flowHash: Hash };
  variants.unshift(["before", (e) => new old.Classifier(e)]);
  hashes.set("before", oldHash.flowHash);
}

const set10k = users(10_000, 1000);
const set1m = users(1_000_000, 1000);

/** The 1,000-tenant configuration with one queue for the tenants: no flow hash at all. */
function withoutFlowHash(e: EffectiveConfiguration): EffectiveConfiguration {
  return {
    ...e,
    priorityLevels: e.priorityLevels.map((l) =>
      l.name === "tenants" ? { ...l, queuing: { ...l.queuing!, queues: 1 } } : l
    ),
  };
}

/** Case name → variant → batch. */
const cases: [string, Map<string, Batch>][] = [];
function addCase(name: string, make: (m: Make) => Batch) {
  cases.push([name, new Map(variants.map(([v, m]) => [v, make(m)]))]);
}
for (const tenants of [10, 100, 1000]) {
  for (const where of ["start", "end"] as const) {
    addCase(
      `classify, ${tenants} tenants, near the ${where}`,
      (m) => classifyOne(m(configuration(tenants)), userAt(tenants, where)),
    );
  }
}
for (const tenants of [10, 1000]) {
  const e = configuration(tenants);
  addCase(
    `classify + acquire + release, ${tenants} tenants, near the end`,
    (m) => classifyAcquireRelease(m(e), e, [userAt(tenants, "end")]),
  );
}
const e1000 = configuration(1000);
for (const [label, set] of [["10k", set10k], ["1M", set1m]] as const) {
  addCase(`classify, ${label} users round-robin, 1000 tenants`, (m) => {
    const run = classifyRoundRobin(m(e1000), set);
    run(set.length); // one pass first: what a cache can keep, it has
    return run;
  });
  if (label === "10k") {
    addCase("classify, 10k users round-robin, fresh name strings, 1000 tenants", (m) => {
      const run = classifyRoundRobinFresh(m(e1000), set);
      run(set.length);
      return run;
    });
  }
  addCase(`classify, ${label} users, 1000 tenants, level without flow hash`, (m) => {
    const run = classifyRoundRobin(m(withoutFlowHash(e1000)), set);
    run(set.length);
    return run;
  });
  addCase(`classify + acquire + release, ${label} users, 1000 tenants`, (m) => {
    const c = m(e1000);
    classifyRoundRobin(c, set)(set.length);
    return classifyAcquireRelease(c, e1000, set);
  });
}

{
  // SHA-256 alone, as a flow the cache does not hold costs: a new 36-byte flow id each time.
  const ids = set1m.map((u) => `${u.name}-of-tenant-00998`);
  cases.push([
    "flowHash of a new flow id (SHA-256 only)",
    new Map(variants.map(([v]) => {
      const hash = hashes.get(v)!;
      let next = 0;
      return [v, (n: number) => {
        for (let i = 0; i < n; i++) {
          hash("tenant-00998", ids[next]!);
          if (++next === ids.length) next = 0;
        }
      }];
    })),
  ]);
}

async function timed(batch: Batch, n: number): Promise<number> {
  const t0 = performance.now();
  await batch(n);
  return performance.now() - t0;
}

// Calibrate each batch to about BATCH_MS (this also warms every variant up).
const sizes = new Map<Batch, number>();
for (const [, byVariant] of cases) {
  for (const batch of byVariant.values()) {
    let n = 16;
    while (await timed(batch, n) < BATCH_MS / 4) n *= 4;
    sizes.set(batch, Math.max(1, Math.round(n * BATCH_MS / await timed(batch, n))));
  }
}

const samples = new Map<Batch, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [, byVariant] of cases) {
    const order = [...byVariant.values()];
    if (round % 2 === 1) order.reverse();
    for (const batch of order) {
      const n = sizes.get(batch)!;
      const ns = (await timed(batch, n)) * 1e6 / n;
      samples.set(batch, [...(samples.get(batch) ?? []), ns]);
    }
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const medians = new Map<string, Map<string, number>>();
console.log(`median ns/op of ${ROUNDS} interleaved rounds (batches of ~${BATCH_MS} ms):`);
console.log(["case", ...variants.map(([v]) => v), "after/before"].join(" | "));
for (const [name, byVariant] of cases) {
  const row = new Map([...byVariant].map(([v, b]) => [v, median(samples.get(b)!)]));
  medians.set(name, row);
  const cells = variants.map(([v]) => row.get(v)!.toFixed(0));
  const ratio = row.has("before") ? (row.get("after")! / row.get("before")!).toFixed(3) : "";
  console.log([name, ...cells, ratio].join(" | "));
}

const ratio = (a: string, b: string, v: string) =>
  (medians.get(a)!.get(v)! / medians.get(b)!.get(v)!).toFixed(2);
console.log("\nratios (goal: ≤ 2x for 1000 vs 10 tenants; ≤ 1.3x for 1M vs 10k users):");
for (const [v] of variants) {
  for (const where of ["start", "end"]) {
    console.log(
      `${v}: classify 1000 vs 10 tenants, near the ${where}: ${
        ratio(
          `classify, 1000 tenants, near the ${where}`,
          `classify, 10 tenants, near the ${where}`,
          v,
        )
      }x`,
    );
  }
  console.log(`${v}: classify + acquire + release 1000 vs 10 tenants: ${
    ratio(
      "classify + acquire + release, 1000 tenants, near the end",
      "classify + acquire + release, 10 tenants, near the end",
      v,
    )
  }x`);
  console.log(`${v}: classify, 1M vs 10k users: ${
    ratio(
      "classify, 1M users round-robin, 1000 tenants",
      "classify, 10k users round-robin, 1000 tenants",
      v,
    )
  }x`);
  console.log(`${v}: classify + acquire + release, 1M vs 10k users: ${
    ratio(
      "classify + acquire + release, 1M users, 1000 tenants",
      "classify + acquire + release, 10k users, 1000 tenants",
      v,
    )
  }x`);
}

for (const c of coordinators) c.close();
cases.length = 0; // let the workloads' classifiers and caches go before measuring the heap

console.log("\nheap kept after 2 passes over 1,000,000 users at 1,000 tenant schemas:");
for (const [v, make] of variants) {
  let keep: ClassifierLike | undefined;
  const grown = heapGrowth(() => {
    keep = make(e1000);
    classifyRoundRobin(keep, set1m)(2 * set1m.length);
  });
  console.log(
    grown === undefined
      ? `${v}: run with --v8-flags=--expose-gc`
      : `${v}: ${(grown / 2 ** 20).toFixed(1)} MiB`,
  );
  keep = undefined;
}

// The bound itself: one cache filled to FLOW_CACHE_LIMIT - 1 entries over 1,000 schemas.
console.log(`\nafter: a full flow cache (${FLOW_CACHE_LIMIT - 1} entries):`);
const names = set1m.slice(0, FLOW_CACHE_LIMIT).map((u) => `${u.name}-of-tenant-00042`);
for (
  const [label, name] of [
    ["distinguishers kept alive elsewhere", (i: number) => names[i]!],
    ["fresh 22-character distinguishers", (i: number) => ` ${names[i]}`.slice(1)],
    [
      "fresh 256-character two-byte distinguishers",
      (i: number) => `é${i}${"€".repeat(256)}`.slice(0, 256),
    ],
  ] as const
) {
  let cache: FlowCache | undefined;
  const grown = heapGrowth(() => {
    cache = new FlowCache(FLOW_CACHE_LIMIT);
    for (let i = 0; i < FLOW_CACHE_LIMIT - 1; i++) cache.get(i % 1000, "tenant-00042", name(i));
  });
  if (grown !== undefined) {
    console.log(
      `${label}: ${(grown / 2 ** 20).toFixed(2)} MiB, ${(grown / cache!.size).toFixed(0)} B/entry`,
    );
  }
  cache = undefined;
}
