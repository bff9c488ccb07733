import assert from "node:assert/strict";
import { bootstrapConfiguration, isMandatoryName } from "../../src/config/bootstrap.ts";
import { defaultFlowSchema, defaultPriorityLevel } from "../../src/config/defaults.ts";
import { parseConfiguration } from "../../src/config/load.ts";

const referenceUrl = new URL(
  "../../../shared/reference/k8s-bootstrap-config.yaml",
  import.meta.url,
);
const fixtureUrl = new URL("./fixtures/k8s-bootstrap-config.yaml", import.meta.url);

Deno.test("the built-in objects equal the Kubernetes bootstrap manifests", async () => {
  const text = await Deno.readTextFile(fixtureUrl);
  const result = parseConfiguration({ manifests: [{ name: "k8s-bootstrap-config.yaml", text }] });
  if (!result.ok) throw new Error(result.errors.join("\n"));
  const builtin = bootstrapConfiguration();
  assert.deepEqual(
    result.configuration.priorityLevels,
    builtin.priorityLevels.map(defaultPriorityLevel),
  );
  const byName = <T extends { metadata: { name: string } }>(xs: T[]) =>
    Object.fromEntries(xs.map((x) => [x.metadata.name, x]));
  assert.deepEqual(
    byName(result.configuration.flowSchemas),
    byName(builtin.flowSchemas.map(defaultFlowSchema)),
  );
});

Deno.test("the fixture is a copy of the shared reference (when the reference is present)", async () => {
  let reference: string;
  try {
    reference = await Deno.readTextFile(referenceUrl);
  } catch {
    return; // CI clones only this repository
  }
  assert.equal(await Deno.readTextFile(fixtureUrl), reference);
});

Deno.test("the built-in configuration is valid and fresh on every call", () => {
  const a = bootstrapConfiguration();
  const result = parseConfiguration({ objects: [...a.priorityLevels, ...a.flowSchemas] });
  assert.equal(result.ok, true);
  a.priorityLevels[0]!.metadata.name = "changed";
  assert.equal(bootstrapConfiguration().priorityLevels[0]!.metadata.name, "exempt");
  assert.deepEqual(["exempt", "catch-all", "system"].map(isMandatoryName), [true, true, false]);
});
