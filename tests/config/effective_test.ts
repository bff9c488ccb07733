import assert from "node:assert/strict";
import { bootstrapConfiguration } from "../../src/config/bootstrap.ts";
import { effectiveConfiguration } from "../../src/config/effective.ts";
import { computeLevelLimits } from "../../src/config/limits.ts";
import { parseConfiguration } from "../../src/config/load.ts";
import { mergeWithBootstrap } from "../../src/config/merge.ts";
import type { FlowControlConfiguration } from "../../src/config/types.ts";
import { flowSchema, limitedLevel, type Obj } from "./_helpers.ts";

function load(...objects: Obj[]): FlowControlConfiguration {
  const result = parseConfiguration({ objects });
  if (!result.ok) throw new Error(result.errors.join("\n"));
  return result.configuration;
}

function byName<T extends { name: string }>(list: T[]): Record<string, T> {
  return Object.fromEntries(list.map((x) => [x.name, x]));
}

Deno.test("docs/semantics.md §6.3: the default configuration at ServerCL 600", () => {
  const eff = effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: 600 });
  assert.equal(eff.shareSum, 245);
  assert.equal(eff.nominalSum, 602);
  const levels = byName(eff.priorityLevels);
  const table: [string, number, number, number, number, number, number | undefined][] = [
    // name, NominalCL, LendableCL, minCL, maxCL, initial currentCL, maxSeats
    ["exempt", 0, 0, 0, 600, 0, undefined],
    ["catch-all", 13, 0, 13, 613, 13, undefined],
    ["system", 74, 24, 50, 674, 62, 12],
    ["node-high", 98, 25, 73, 698, 86, 15],
    ["leader-election", 25, 0, 25, 625, 25, 4],
    ["workload-high", 98, 49, 49, 698, 74, 15],
    ["workload-low", 245, 221, 24, 845, 135, 37],
    ["global-default", 49, 25, 24, 649, 37, 8],
  ];
  for (const [name, nominal, lendable, min, max, initial, maxSeats] of table) {
    const l = levels[name]!;
    assert.deepEqual(
      [l.nominal, l.lendable, l.min, l.max, l.initialCurrent, l.maxSeats, l.borrowing],
      [nominal, lendable, min, max, initial, maxSeats, 600],
      name,
    );
  }
  // The first allocation with zero demand: fairProp = 602 / 258.
  const current = Object.fromEntries(eff.priorityLevels.map((l) => [l.name, l.currentLimit]));
  assert.deepEqual(current, {
    "exempt": 0,
    "catch-all": 30,
    "system": 117,
    "node-high": 170,
    "leader-election": 58,
    "workload-high": 114,
    "workload-low": 56,
    "global-default": 56,
  });
});

Deno.test("docs/semantics.md §6.3: ServerCL 100 gives NominalCL 3/13/17/5/17/41/9", () => {
  const eff = effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: 100 });
  const nominal = eff.priorityLevels.filter((l) => l.name !== "exempt").map((l) => l.nominal);
  assert.deepEqual(nominal, [3, 13, 17, 5, 17, 41, 9]);
  assert.equal(eff.nominalSum, 105);
});

Deno.test("LendableCL and BorrowingCL round half away from zero; MaxCL uses the borrowing limit", () => {
  // 2 levels of 1 share at ServerCL 98: NominalCL 49 each, 49 * 50% = 24.5 -> 25.
  const levels = load(
    limitedLevel("a", {
      nominalConcurrencyShares: 1,
      lendablePercent: 50,
      borrowingLimitPercent: 150,
    }),
    limitedLevel("b", { nominalConcurrencyShares: 1, lendablePercent: 1 }),
  ).priorityLevels;
  const [a, b] = computeLevelLimits(levels, 98);
  assert.deepEqual([a!.nominal, a!.lendable, a!.borrowing, a!.min, a!.max], [49, 25, 74, 24, 123]);
  assert.deepEqual([b!.nominal, b!.lendable, b!.borrowing, b!.min, b!.max], [49, 0, 98, 49, 147]);
  assert.throws(() => computeLevelLimits(levels, 0), RangeError);
});

Deno.test("max seats: min(ceil(15% of NominalCL), NominalCL / handSize), at least 1", () => {
  const levels = load(
    limitedLevel("tiny", { nominalConcurrencyShares: 1 }),
    limitedLevel("wide", {
      nominalConcurrencyShares: 99,
      limitResponse: { type: "Queue", queuing: { queues: 64, handSize: 1 } },
    }),
    limitedLevel("reject", { nominalConcurrencyShares: 100, limitResponse: { type: "Reject" } }),
  ).priorityLevels;
  const [tiny, wide, reject] = computeLevelLimits(levels, 200);
  assert.equal(tiny!.nominal, 1);
  assert.equal(tiny!.maxSeats, 1); // floor(1 / 8) = 0, raised to 1
  assert.equal(wide!.nominal, 99);
  assert.equal(wide!.maxSeats, 15); // ceil(14.85)
  assert.equal(reject!.maxSeats, undefined);
});

Deno.test("a schema naming a mandatory level that is only imagined dangles, as in Kubernetes", () => {
  // Kubernetes digests the FlowSchemas against the given levels, then imagines the missing
  // mandatory ones (digestConfigObjects): the schema's level is not there yet.
  const eff = effectiveConfiguration(load(
    limitedLevel("mine"),
    flowSchema("to-catch-all", { priorityLevelConfiguration: { name: "catch-all" } }),
    flowSchema("to-mine", { priorityLevelConfiguration: { name: "mine" } }),
  ));
  assert.deepEqual(eff.dangling.map((fs) => fs.name), ["to-catch-all"]);
  assert.deepEqual(eff.flowSchemas.map((fs) => fs.name), ["exempt", "to-mine", "catch-all"]);
  assert.deepEqual(eff.priorityLevels.map((pl) => pl.name), ["mine", "exempt", "catch-all"]);
});

Deno.test("FlowSchemas sort by precedence then name; dangling schemas match nothing", () => {
  const user = load(
    flowSchema("zeta", { matchingPrecedence: 300 }),
    flowSchema("alpha", { matchingPrecedence: 300 }),
    flowSchema("first", { matchingPrecedence: 2 }),
    flowSchema("lost", { priorityLevelConfiguration: { name: "nowhere" } }),
  );
  const eff = effectiveConfiguration(mergeWithBootstrap(user).configuration);
  const order = eff.flowSchemas.map((fs) => fs.name);
  assert.deepEqual(order.slice(0, 5), [
    "exempt",
    "first",
    "probes",
    "system-leader-election",
    "alpha",
  ]);
  assert.equal(order.indexOf("zeta"), order.indexOf("alpha") + 1);
  assert.equal(order.at(-1), "catch-all");
  assert.equal(order.includes("lost"), false);
  assert.deepEqual(eff.dangling.map((fs) => [fs.name, fs.priorityLevel]), [["lost", "nowhere"]]);
  const kcm = eff.flowSchemas.find((fs) => fs.name === "kube-controller-manager")!;
  assert.deepEqual([kcm.precedence, kcm.priorityLevel, kcm.distinguisher], [
    800,
    "workload-high",
    "ByNamespace",
  ]);
  assert.equal(eff.flowSchemas[0]!.distinguisher, undefined);
});

Deno.test("missing mandatory objects are imagined: exempt first, catch-all last", () => {
  const user = load(
    limitedLevel("only", { nominalConcurrencyShares: 10 }),
    flowSchema("before-exempt", {
      matchingPrecedence: 2,
      priorityLevelConfiguration: { name: "only" },
    }),
  );
  const eff = effectiveConfiguration(user, { serverConcurrencyLimit: 150 });
  assert.deepEqual(eff.flowSchemas.map((fs) => fs.name), ["exempt", "before-exempt", "catch-all"]);
  assert.deepEqual(eff.priorityLevels.map((l) => [l.name, l.nominal]), [["only", 100], [
    "exempt",
    0,
  ], ["catch-all", 50]]);
  // With only two limited levels and no demand, they split nominalSum by their minimum limits.
  assert.deepEqual(eff.priorityLevels.map((l) => l.currentLimit), [100, 0, 50]);
});
