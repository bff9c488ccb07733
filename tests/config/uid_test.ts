import assert from "node:assert/strict";
import { bootstrapConfiguration } from "../../src/config/bootstrap.ts";
import { effectiveConfiguration } from "../../src/config/effective.ts";
import { objectUid } from "../../src/config/uid.ts";
import { parseConfiguration } from "../../src/config/load.ts";

Deno.test("objects without a uid get a stable UUID derived from kind and name", () => {
  const uid = objectUid("FlowSchema", "global-default");
  assert.match(uid, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(objectUid("FlowSchema", "global-default"), uid);
  assert.notEqual(objectUid("PriorityLevelConfiguration", "global-default"), uid);
  assert.notEqual(objectUid("FlowSchema", "catch-all"), uid);
});

Deno.test("the effective configuration carries metadata.uid, or the derived one", () => {
  const config = bootstrapConfiguration();
  config.flowSchemas[0]!.metadata.uid = "5d3c7f0e-0000-4000-8000-000000000001";
  const eff = effectiveConfiguration(config);
  const byName = new Map(eff.flowSchemas.map((fs) => [fs.name, fs.uid]));
  assert.equal(
    byName.get(config.flowSchemas[0]!.metadata.name),
    "5d3c7f0e-0000-4000-8000-000000000001",
  );
  assert.equal(byName.get("global-default"), objectUid("FlowSchema", "global-default"));
  for (const pl of eff.priorityLevels) {
    assert.equal(pl.uid, objectUid("PriorityLevelConfiguration", pl.name));
  }
  const gd = eff.priorityLevels.find((pl) => pl.name === "global-default")!;
  assert.deepEqual(gd.queuing, { queues: 128, handSize: 6, queueLengthLimit: 50 });
  assert.equal(eff.priorityLevels.find((pl) => pl.name === "catch-all")!.queuing, undefined);
});

Deno.test("a metadata.uid that a response header cannot carry is refused with the configuration", () => {
  const object = (kind: string, uid: string) => ({
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind,
    metadata: { name: "team", uid },
    spec: kind === "FlowSchema"
      ? { priorityLevelConfiguration: { name: "global-default" } }
      : { type: "Limited", limited: { limitResponse: { type: "Reject" } } },
  });
  const message = "must not hold a NUL, CR or LF, nor a character beyond U+00FF: " +
    "it is sent as a response header's value";
  const bad = parseConfiguration({
    manifests: [],
    objects: [
      object("FlowSchema", "x\r\nSet-Cookie: a=b"),
      object("PriorityLevelConfiguration", "team\u20ac"),
    ],
  });
  assert.deepEqual(bad.ok ? [] : bad.errors, [
    `FlowSchema/team: metadata.uid: Invalid value: "x\\r\\nSet-Cookie: a=b": ${message}`,
    `PriorityLevelConfiguration/team: metadata.uid: Invalid value: "team\u20ac": ${message}`,
  ]);
  // A UUID, anything else a header carries (blanks around it are trimmed when it is set), or
  // none at all (a uid derived from the name) is fine.
  for (const uid of ["5d3c7f0e-0000-4000-8000-000000000001", " team v2\t", "caf\xe9", ""]) {
    const ok = parseConfiguration({
      manifests: [],
      objects: [object("FlowSchema", uid), object("PriorityLevelConfiguration", uid)],
    });
    assert.ok(ok.ok, `${JSON.stringify(uid)}: ${ok.ok ? "" : ok.errors.join("; ")}`);
  }
});
