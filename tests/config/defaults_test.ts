import assert from "node:assert/strict";
import { parseConfiguration } from "../../src/config/load.ts";
import type { FlowControlConfiguration } from "../../src/config/types.ts";
import { flowSchema, limitedLevel, type Obj } from "./_helpers.ts";

function load(...objects: Obj[]): FlowControlConfiguration {
  const result = parseConfiguration({ objects });
  if (!result.ok) throw new Error(result.errors.join("\n"));
  return result.configuration;
}

const ANNOTATION = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";

Deno.test("matchingPrecedence defaults to 1000 when absent or 0", () => {
  const absent = flowSchema("a");
  delete (absent.spec as Obj).matchingPrecedence;
  const { flowSchemas } = load(
    absent,
    flowSchema("b", { matchingPrecedence: 0 }),
    flowSchema("c", { matchingPrecedence: 7 }),
  );
  assert.deepEqual(flowSchemas.map((fs) => fs.spec.matchingPrecedence), [1000, 1000, 7]);
  assert.equal(flowSchemas[0]!.spec.distinguisherMethod, undefined);
});

Deno.test("Limited defaults: shares 30 when absent (0 kept), lendable 0, borrowing unset", () => {
  const { priorityLevels } = load(
    limitedLevel("absent", { nominalConcurrencyShares: undefined }),
    limitedLevel("zero", { nominalConcurrencyShares: 0 }),
  );
  const [absent, zero] = priorityLevels.map((pl) => pl.spec.limited!);
  assert.equal(absent!.nominalConcurrencyShares, 30);
  assert.equal(zero!.nominalConcurrencyShares, 0);
  assert.equal(absent!.lendablePercent, 0);
  assert.equal("borrowingLimitPercent" in absent!, false);
});

Deno.test("queuing defaults: 0 or absent queues/handSize/queueLengthLimit become 64/8/50", () => {
  const { priorityLevels } = load(
    limitedLevel("a", { limitResponse: { type: "Queue", queuing: {} } }),
    limitedLevel("b", {
      limitResponse: { type: "Queue", queuing: { queues: 0, handSize: 0, queueLengthLimit: 0 } },
    }),
    limitedLevel("c", {
      limitResponse: { type: "Queue", queuing: { queues: 16, handSize: 4, queueLengthLimit: 10 } },
    }),
  );
  const queuing = priorityLevels.map((pl) => pl.spec.limited!.limitResponse.queuing);
  assert.deepEqual(queuing, [
    { queues: 64, handSize: 8, queueLengthLimit: 50 },
    { queues: 64, handSize: 8, queueLengthLimit: 50 },
    { queues: 16, handSize: 4, queueLengthLimit: 10 },
  ]);
});

Deno.test("Exempt defaults: shares and lendable 0", () => {
  const { priorityLevels } = load({
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name: "exempt" },
    spec: { type: "Exempt", exempt: {} },
  });
  assert.deepEqual(priorityLevels[0]!.spec.exempt, {
    nominalConcurrencyShares: 0,
    lendablePercent: 0,
  });
});

Deno.test("v1beta3: zero shares mean 30 unless the round-trip annotation is present", () => {
  const { priorityLevels } = load(
    limitedLevel("plain", { nominalConcurrencyShares: 0 }, "v1beta3"),
    limitedLevel("omitted", { nominalConcurrencyShares: undefined }, "v1beta3"),
    limitedLevel("kept", { nominalConcurrencyShares: 0 }, "v1beta3", {
      annotations: { [ANNOTATION]: "" },
    }),
    limitedLevel("five", { nominalConcurrencyShares: 5 }, "v1beta3", {
      annotations: { [ANNOTATION]: "true", x: "y" },
    }),
  );
  assert.deepEqual(priorityLevels.map((pl) => pl.spec.limited!.nominalConcurrencyShares), [
    30,
    30,
    0,
    5,
  ]);
  // The annotation exists only on the v1beta3 wire form; every object is v1 once loaded.
  assert.equal(priorityLevels[2]!.metadata.annotations, undefined);
  assert.deepEqual(priorityLevels[3]!.metadata.annotations, { x: "y" });
  assert.ok(priorityLevels.every((pl) => pl.apiVersion === "flowcontrol.apiserver.k8s.io/v1"));
});

Deno.test("v1beta1 and v1beta2: assuredConcurrencyShares is read as nominal shares, 0 means 30", () => {
  const { priorityLevels } = load(
    limitedLevel(
      "b1",
      { nominalConcurrencyShares: undefined, assuredConcurrencyShares: 7 },
      "v1beta1",
    ),
    limitedLevel(
      "b2",
      { nominalConcurrencyShares: undefined, assuredConcurrencyShares: 0 },
      "v1beta2",
    ),
  );
  assert.deepEqual(priorityLevels.map((pl) => pl.spec.limited!.nominalConcurrencyShares), [7, 30]);
});
