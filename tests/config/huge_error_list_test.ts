import assert from "node:assert/strict";
import { parseConfiguration } from "../../src/config/load.ts";

// Spreading a list into call arguments (`errors.push(...list)`) overflows the
// stack at about 100,000 elements; every error list must be appended in a loop.
const N = 200_000;

const level = (name: string) => ({
  apiVersion: "flowcontrol.apiserver.k8s.io/v1",
  kind: "PriorityLevelConfiguration",
  metadata: { name },
  spec: { type: "Exempt", exempt: {} },
});

Deno.test("parseConfiguration reports 200,000 duplicate objects without overflowing", () => {
  const result = parseConfiguration({ objects: Array.from({ length: N + 1 }, () => level("x")) });
  assert.equal(result.ok, false);
  const duplicates = result.ok ? [] : result.errors.filter((e) => e.includes(": duplicate "));
  assert.equal(duplicates.length, N);
});

Deno.test("parseConfiguration reports 200,000 invalid rules of one schema", () => {
  const flowSchema = {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: "many" },
    spec: {
      priorityLevelConfiguration: { name: "x" },
      matchingPrecedence: 500,
      rules: Array.from({ length: N }, () => ({ subjects: [] })),
    },
  };
  const result = parseConfiguration({ objects: [flowSchema] });
  assert.equal(result.ok, false);
  assert.ok(!result.ok && result.errors.length >= N, "one error per rule at least");
});

Deno.test("parseConfiguration reports 200,000 wrongly typed fields of one manifest", () => {
  const flowSchema = {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: "typed" },
    spec: {
      priorityLevelConfiguration: { name: "x" },
      rules: Array.from({ length: N }, () => 7),
    },
  };
  const result = parseConfiguration({ objects: [flowSchema] });
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.errors.length, N);
});
