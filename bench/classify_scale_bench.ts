/**
 * Classification as the number of FlowSchemas and of users grows: the
 * built-in configuration plus 10, 100 or 1,000 per-tenant FlowSchemas, a
 * user of the first tenant (near the start of matching order) or the last
 * (near the end: only `service-accounts`, `global-default` and `catch-all`
 * follow); classify + acquire + release on an embedded coordinator; and
 * 10,000 against 1,000,000 distinct users taken round-robin at 1,000 schemas.
 * Run with `deno task bench bench/classify_scale_bench.ts`.
 *
 * Goals: classifying at 1,000 schemas costs at most 2x what it costs at 10;
 * 1,000,000 distinct users at most 1.3x what 10,000 cost; the flow cache's
 * memory is bounded whatever the number of schemas. With
 * `--v8-flags=--expose-gc` (the bench task sets it) the file also prints the
 * heap the classifier keeps after classifying 1,000,000 users at 1,000
 * schemas. Before/after comparisons in interleaved rounds:
 * bench/classify_scale_compare.ts.
 */

import { Classifier } from "../mod.ts";
import {
  classifyAcquireRelease,
  classifyOne,
  classifyRoundRobin,
  configuration,
  coordinators,
  heapGrowth,
  userAt,
  users,
} from "./_classify_scale.ts";

// First, on a heap that holds nothing else yet: what a classifier keeps after
// classifying a million distinct users twice (its flow cache).
const million = users(1_000_000, 1000);
let kept: Classifier | undefined;
const grown = heapGrowth(() => {
  kept = new Classifier(configuration(1000));
  classifyRoundRobin(kept, million)(2 * million.length);
});
if (grown !== undefined) {
  console.log(
    `heap kept by a classifier with 1,000 tenant schemas after 2 passes over 1,000,000 users: ${
      (grown / 2 ** 20).toFixed(1)
    } MiB`,
  );
}
kept = undefined;

for (const tenants of [10, 100, 1000]) {
  const classifier = new Classifier(configuration(tenants));
  for (const where of ["start", "end"] as const) {
    const run = classifyOne(classifier, userAt(tenants, where));
    Deno.bench(`classify: ${tenants} tenant schemas, match near the ${where}`, {
      group: `classify near the ${where}`,
      baseline: tenants === 10,
    }, () => run(1));
  }
}

for (const tenants of [10, 1000]) {
  const effective = configuration(tenants);
  const run = classifyAcquireRelease(new Classifier(effective), effective, [
    userAt(tenants, "end"),
  ]);
  Deno.bench(`classify + acquire + release: ${tenants} tenant schemas, near the end`, {
    group: "classify + acquire + release",
    baseline: tenants === 10,
  }, async () => {
    await run(1);
  });
}

const classifier = new Classifier(configuration(1000));
for (const set of [users(10_000, 1000), million]) {
  const count = set.length;
  const run = classifyRoundRobin(classifier, set);
  run(count); // one pass: what the cache can keep, it has
  Deno.bench(`classify: ${count.toLocaleString("en")} distinct users, 1,000 tenant schemas`, {
    group: "distinct users",
    baseline: count === 10_000,
  }, () => run(1));
}

globalThis.addEventListener("unload", () => {
  for (const c of coordinators) c.close();
});
