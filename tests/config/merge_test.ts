import assert from "node:assert/strict";
import { autoUpdates, mergeWithBootstrap } from "../../src/config/merge.ts";
import { parseConfiguration } from "../../src/config/load.ts";
import type {
  FlowControlConfiguration,
  PriorityLevelConfiguration,
} from "../../src/config/types.ts";
import { flowSchema, limitedLevel, type Obj } from "./_helpers.ts";

const AUTO = "apf.kubernetes.io/autoupdate-spec";

function load(...objects: Obj[]): FlowControlConfiguration {
  const result = parseConfiguration({ objects });
  if (!result.ok) throw new Error(result.errors.join("\n"));
  return result.configuration;
}

function level(
  config: FlowControlConfiguration,
  name: string,
): PriorityLevelConfiguration | undefined {
  return config.priorityLevels.find((pl) => pl.metadata.name === name);
}

Deno.test("an empty user configuration gives the mandatory and suggested objects", () => {
  const { configuration, notes } = mergeWithBootstrap({ flowSchemas: [], priorityLevels: [] });
  assert.deepEqual(configuration.priorityLevels.map((pl) => pl.metadata.name), [
    "exempt",
    "catch-all",
    "system",
    "node-high",
    "leader-election",
    "workload-high",
    "workload-low",
    "global-default",
  ]);
  assert.equal(configuration.flowSchemas.length, 11);
  assert.deepEqual(notes, []);
});

Deno.test("--mandatory-only starts from exempt and catch-all alone", () => {
  const user = load(
    limitedLevel("mine"),
    flowSchema("mine-fs", { priorityLevelConfiguration: { name: "mine" } }),
  );
  const { configuration } = mergeWithBootstrap(user, { mandatoryOnly: true });
  assert.deepEqual(configuration.priorityLevels.map((pl) => pl.metadata.name), [
    "exempt",
    "catch-all",
    "mine",
  ]);
  assert.deepEqual(configuration.flowSchemas.map((fs) => fs.metadata.name), [
    "exempt",
    "catch-all",
    "mine-fs",
  ]);
});

Deno.test("a user object replaces the same-named suggested object", () => {
  const user = load(limitedLevel("global-default", { nominalConcurrencyShares: 77 }));
  const { configuration, notes } = mergeWithBootstrap(user);
  assert.equal(level(configuration, "global-default")!.spec.limited!.nominalConcurrencyShares, 77);
  assert.equal(
    configuration.priorityLevels.filter((pl) => pl.metadata.name === "global-default").length,
    1,
  );
  assert.deepEqual(notes, []);
});

Deno.test("autoupdate-spec: true re-applies the suggested spec; false keeps the user's", () => {
  const user = load(
    limitedLevel("global-default", { nominalConcurrencyShares: 77 }, "v1", {
      annotations: { [AUTO]: "true" },
    }),
    limitedLevel("workload-low", { nominalConcurrencyShares: 77 }, "v1", {
      annotations: { [AUTO]: "false" },
      generation: 1,
    }),
  );
  const { configuration, notes } = mergeWithBootstrap(user);
  assert.equal(level(configuration, "global-default")!.spec.limited!.nominalConcurrencyShares, 20);
  assert.equal(level(configuration, "workload-low")!.spec.limited!.nominalConcurrencyShares, 77);
  assert.deepEqual(notes, [
    "PriorityLevelConfiguration/global-default: spec replaced by the suggested spec (auto-update)",
  ]);
});

Deno.test("autoupdate-spec absent or unparseable: auto-update only while generation is 1", () => {
  const mk = (annotations: Record<string, string> | undefined, generation: number | undefined) =>
    ({
      metadata: {
        name: "x",
        ...(annotations && { annotations }),
        ...(generation && { generation }),
      },
    }) as unknown as PriorityLevelConfiguration;
  assert.equal(autoUpdates(mk(undefined, 1)), true);
  assert.equal(autoUpdates(mk(undefined, 2)), false);
  assert.equal(autoUpdates(mk(undefined, undefined)), false);
  assert.equal(autoUpdates(mk({ [AUTO]: "maybe" }, 1)), true);
  assert.equal(autoUpdates(mk({ [AUTO]: "maybe" }, 3)), false);
  // Go's strconv.ParseBool spellings.
  for (const t of ["1", "t", "T", "TRUE", "true", "True"]) {
    assert.equal(autoUpdates(mk({ [AUTO]: t }, 5)), true, t);
  }
  for (const f of ["0", "f", "F", "FALSE", "false", "False"]) {
    assert.equal(autoUpdates(mk({ [AUTO]: f }, 1)), false, f);
  }
});

Deno.test("mandatory objects keep their fixed spec; the exempt level keeps the admin's spec.exempt", () => {
  const user = load({
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name: "exempt", uid: "u-1" },
    spec: { type: "Exempt", exempt: { nominalConcurrencyShares: 40, lendablePercent: 10 } },
  });
  const { configuration } = mergeWithBootstrap(user);
  const exempt = level(configuration, "exempt")!;
  assert.deepEqual(exempt.spec, {
    type: "Exempt",
    exempt: { nominalConcurrencyShares: 40, lendablePercent: 10 },
  });
  assert.equal(exempt.metadata.uid, "u-1");
});

Deno.test("auto-updated objects that are no longer suggested are removed", () => {
  const stale = flowSchema("endpoint-controller", {
    priorityLevelConfiguration: { name: "workload-high" },
  }, {
    annotations: { [AUTO]: "true" },
  });
  const kept = flowSchema("mine", {}, { annotations: { [AUTO]: "false" } });
  const { configuration, notes } = mergeWithBootstrap(load(stale, kept));
  const names = configuration.flowSchemas.map((fs) => fs.metadata.name);
  assert.equal(names.includes("endpoint-controller"), false);
  assert.equal(names.includes("mine"), true);
  assert.deepEqual(notes, [
    "FlowSchema/endpoint-controller: removed: auto-updated object that is no longer suggested",
  ]);
});

Deno.test("merging leaves its input unchanged", () => {
  const user = load(
    limitedLevel("global-default", { nominalConcurrencyShares: 77 }, "v1", {
      annotations: { [AUTO]: "true" },
    }),
  );
  const before = structuredClone(user);
  mergeWithBootstrap(user);
  assert.deepEqual(user, before);
});
