import assert from "node:assert/strict";
import { type DecodedObject, decodeManifest, decodeValues } from "../../src/config/manifest.ts";
import { loadConfiguration, parseConfiguration } from "../../src/config/load.ts";
import { ConfigurationError } from "../../src/config/field_errors.ts";
import { bootstrapConfiguration } from "../../src/config/bootstrap.ts";

const V1 = "flowcontrol.apiserver.k8s.io/v1";

/** A valid FlowSchema manifest of 16 lines (its `metadata.name` is on line 4). */
function fsYaml(name: string, apiVersion = V1): string {
  return `apiVersion: ${apiVersion}
kind: FlowSchema
metadata:
  name: ${name}
spec:
  priorityLevelConfiguration:
    name: global-default
  matchingPrecedence: 500
  rules:
  - subjects:
    - kind: Group
      group:
        name: system:authenticated
    nonResourceRules:
    - verbs: ["get"]
      nonResourceURLs: ["/healthz"]
`;
}

/** A valid Limited PriorityLevelConfiguration object. */
function plObject(name: string, limited: Record<string, unknown> = {}, apiVersion = V1) {
  return {
    apiVersion,
    kind: "PriorityLevelConfiguration",
    metadata: { name },
    spec: { type: "Limited", limited: { limitResponse: { type: "Reject" }, ...limited } },
  };
}

function fsObject(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: V1,
    kind: "FlowSchema",
    metadata: { name },
    spec: { priorityLevelConfiguration: { name: "global-default" }, ...spec },
  };
}

const fixture = (name: string) => Deno.readTextFile(new URL(`./fixtures/${name}`, import.meta.url));

/** Kind, name, version and location of each decoded object, and the errors. */
function summary(text: string, source: string) {
  const { objects, errors } = decodeManifest(text, source);
  const at = (d: DecodedObject) =>
    [d.location.document, d.location.item ?? "-", d.location.line ?? "-"].join(":");
  return {
    errors,
    objects: objects.map((d) =>
      `${d.version} ${d.object.kind}/${d.object.metadata.name} @${at(d)}`
    ),
  };
}

Deno.test("multi-document YAML skips empty and comment-only documents", () => {
  const text = "# leading comment\n---\n" + fsYaml("a") + "---\n---\n# only a comment\n---\n" +
    fsYaml("b") + "...\n";
  const { objects, errors } = decodeManifest(text, "multi.yaml");
  assert.deepEqual(errors, []);
  // A comment before the first `---` opens no document; documents 2 (empty) and 3
  // (comment-only) are skipped but still counted.
  assert.deepEqual(objects.map((d) => d.location), [
    { source: "multi.yaml", document: 1, line: 3 },
    { source: "multi.yaml", document: 4, line: 23 },
  ]);
  const a = objects[0]!;
  assert.equal(a.version, "v1");
  assert.deepEqual(a.object, {
    apiVersion: V1,
    kind: "FlowSchema",
    metadata: { name: "a" },
    spec: {
      priorityLevelConfiguration: { name: "global-default" },
      matchingPrecedence: 500,
      rules: [{
        subjects: [{ kind: "Group", group: { name: "system:authenticated" } }],
        nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
      }],
    },
  });
  assert.deepEqual(decodeManifest("", "empty.yaml"), { objects: [], errors: [] });
  assert.deepEqual(decodeManifest("# a\n---\n# b\n", "c.yaml"), { objects: [], errors: [] });
});

Deno.test("JSON input: a single object and a kind: List", () => {
  assert.deepEqual(summary(JSON.stringify(plObject("p")), "pl.json"), {
    errors: [],
    objects: ["v1 PriorityLevelConfiguration/p @1:-:1"],
  });
  const list = { apiVersion: "v1", kind: "List", items: [plObject("p"), fsObject("f")] };
  assert.deepEqual(summary(JSON.stringify(list, null, 2), "list.json"), {
    errors: [],
    objects: ["v1 PriorityLevelConfiguration/p @1:0:5", "v1 FlowSchema/f @1:1:20"],
  });
});

Deno.test("kind: List mixes kinds; typed lists' items inherit apiVersion and kind", async () => {
  const text = await fixture("lists.yaml");
  assert.deepEqual(summary(text, "lists.yaml"), {
    errors: [],
    objects: [
      "v1beta3 PriorityLevelConfiguration/p @1:0:5",
      "v1 FlowSchema/f @1:1:12",
      "v1beta3 FlowSchema/a @2:0:22",
      "v1beta2 PriorityLevelConfiguration/q @3:0:28",
    ],
  });
  const { objects } = decodeManifest(text, "lists.yaml");
  assert.deepEqual(objects[1]!.location, { source: "lists.yaml", document: 1, item: 1, line: 12 });
  assert.ok(objects.every((d) => d.object.apiVersion === V1));
  assert.deepEqual(objects[3]!.object.spec, {
    type: "Limited",
    limited: { nominalConcurrencyShares: 9, lendablePercent: 0, limitResponse: { type: "Reject" } },
  });
});

Deno.test("a kubectl get -o yaml dump loads; status and managedFields are dropped", async () => {
  const text = await fixture("kubectl_dump.yaml");
  const config = loadConfiguration({ manifests: [{ name: "dump.yaml", text }] });
  const all = [...config.flowSchemas, ...config.priorityLevels];
  assert.deepEqual(all.map((o) => `${o.kind}/${o.metadata.name}`), [
    "FlowSchema/exempt",
    "FlowSchema/global-default",
    "PriorityLevelConfiguration/exempt",
    "PriorityLevelConfiguration/global-default",
  ]);
  assert.deepEqual(config.flowSchemas[1]!.metadata, {
    name: "global-default",
    uid: "6c1f2d9b-8e3a-4f57-b1c2-93a4e5d6f7a8",
    generation: 2,
    annotations: { "apf.kubernetes.io/autoupdate-spec": "true" },
  });
  // status, managedFields, resourceVersion and creationTimestamp are gone; specs equal the
  // (defaulted) bootstrap objects.
  const boot = bootstrapConfiguration();
  const bootAll = [...boot.flowSchemas, ...boot.priorityLevels];
  for (const o of all) {
    assert.equal(o.apiVersion, V1);
    assert.deepEqual(Object.keys(o).sort(), ["apiVersion", "kind", "metadata", "spec"]);
    assert.deepEqual(Object.keys(o.metadata).sort(), ["annotations", "generation", "name", "uid"]);
    const want = bootAll.find((b) => b.kind === o.kind && b.metadata.name === o.metadata.name);
    assert.deepEqual(o.spec, want?.spec, `${o.kind}/${o.metadata.name}`);
  }
  assert.deepEqual(config.priorityLevels[1]!.spec.limited, {
    nominalConcurrencyShares: 20,
    lendablePercent: 50,
    limitResponse: { type: "Queue", queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
  });
});

Deno.test("unknown kinds and apiVersions are reported with document and line", () => {
  const text = fsYaml("a") + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
  assert.deepEqual(decodeManifest(text, "c.yaml").errors, [
    'c.yaml: document 2, line 18: unsupported kind "ConfigMap" (apiVersion "v1"): ' +
    "expected FlowSchema, PriorityLevelConfiguration, or a List of them",
  ]);
  const expected = "expected flowcontrol.apiserver.k8s.io/v1, v1beta3, v1beta2 or v1beta1";
  const wrong = fsYaml("b") + "---\n" + fsYaml("a", "flowcontrol.apiserver.k8s.io/v2") +
    "---\n" + fsYaml("c", "apps/v1") + "---\nkind: FlowSchema\nmetadata: {name: d}\n";
  const { objects, errors } = decodeManifest(wrong, "v.yaml");
  assert.deepEqual(objects.map((d) => d.object.metadata.name), ["b"]);
  assert.deepEqual(errors, [
    `v.yaml: document 2, line 18: FlowSchema: unsupported apiVersion ` +
    `"flowcontrol.apiserver.k8s.io/v2": ${expected}`,
    `v.yaml: document 3, line 35: FlowSchema: unsupported apiVersion "apps/v1": ${expected}`,
    `v.yaml: document 4, line 52: FlowSchema: unsupported apiVersion "": ${expected}`,
  ]);
});

Deno.test("non-object documents, bad items and nested lists are errors", async () => {
  const text = await fixture("not_objects.yaml");
  assert.deepEqual(decodeManifest(text, "n.yaml").errors, [
    "n.yaml: document 1, line 1: expected an object with apiVersion and kind",
    "n.yaml: document 2, line 3: expected an object with apiVersion and kind",
    "n.yaml: document 3, item 0, line 9: lists cannot be nested",
    "n.yaml: document 3, item 1, line 12: lists cannot be nested",
    "n.yaml: document 3, item 2, line 14: expected an object with apiVersion and kind",
    "n.yaml: document 4, line 16: List.items must be a list",
  ]);
  assert.deepEqual(decodeValues(["x", null]).errors, [
    "<objects>: document 1: expected an object with apiVersion and kind",
    "<objects>: document 2: expected an object with apiVersion and kind",
  ]);
});

Deno.test("malformed YAML is reported with document and line; other documents decode", () => {
  const pl = JSON.stringify(plObject("p")) + "\n";
  const text = pl + "---\nkind: FlowSchema\nmetadata:\n  name: a\n bad: x\n---\n" + fsYaml("b");
  const { objects, errors } = decodeManifest(text, "bad.yaml");
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /^bad\.yaml: document 2, line 6: invalid YAML: \S/);
  assert.deepEqual(objects.map((d) => [d.object.metadata.name, d.location.document]), [
    ["p", 1],
    ["b", 3],
  ]);
});

Deno.test("duplicate names are refused, naming both locations", () => {
  const dupAcross = parseConfiguration({
    manifests: [
      { name: "one.yaml", text: fsYaml("a") },
      { name: "two.yaml", text: "# x\n" + fsYaml("b") + "---\n" + fsYaml("a") },
    ],
  });
  assert.deepEqual(dupAcross, {
    ok: false,
    errors: [
      "two.yaml: document 2, line 19: duplicate FlowSchema/a: " +
      "already defined at one.yaml: document 1, line 1",
    ],
  });
  const list = { apiVersion: "v1", kind: "List", items: [plObject("p"), plObject("p")] };
  assert.deepEqual(
    parseConfiguration({ manifests: [{ name: "l.json", text: JSON.stringify(list) }] }),
    {
      ok: false,
      errors: [
        "l.json: document 1, item 1, line 1: duplicate PriorityLevelConfiguration/p: " +
        "already defined at l.json: document 1, item 0, line 1",
      ],
    },
  );
  assert.equal(parseConfiguration({ objects: [fsObject("x"), plObject("x")] }).ok, true);
});

Deno.test("unknown fields are reported at their path", () => {
  const fs = fsObject("f", {
    x: 1,
    rules: [{ subjects: [{ kind: "User", user: { name: "u", y: true } }], verbs: [] }],
  });
  const pl = plObject("p", { limitResponse: { type: "Queue", queuing: { queues: 4, z: 0 } } });
  assert.deepEqual(decodeValues([fs, pl]).errors, [
    'FlowSchema/f: spec.rules[0].subjects[0].user.y: unknown field "y"',
    'FlowSchema/f: spec.rules[0].verbs: unknown field "verbs"',
    'FlowSchema/f: spec.x: unknown field "x"',
    'PriorityLevelConfiguration/p: spec.limited.limitResponse.queuing.z: unknown field "z"',
  ]);
});

Deno.test("wrong JSON types and out-of-range integers are field errors", () => {
  const { objects, errors } = decodeValues([
    fsObject("f", { matchingPrecedence: "5" }),
    plObject("p", { nominalConcurrencyShares: 1.5, lendablePercent: 2147483648 }),
    fsObject("g", { matchingPrecedence: -2147483649, distinguisherMethod: "ByUser" }),
  ]);
  assert.deepEqual(objects, []);
  assert.deepEqual(errors, [
    'FlowSchema/f: spec.matchingPrecedence: Invalid value: "5": must be a number',
    "PriorityLevelConfiguration/p: spec.limited.nominalConcurrencyShares: Invalid value: 1.5: " +
    "must be an integer",
    "PriorityLevelConfiguration/p: spec.limited.lendablePercent: Invalid value: 2147483648: " +
    "must be a 32-bit integer",
    "FlowSchema/g: spec.matchingPrecedence: Invalid value: -2147483649: must be a 32-bit integer",
    'FlowSchema/g: spec.distinguisherMethod: Invalid value: "ByUser": must be an object',
  ]);
});

Deno.test("JSON null for optional fields means absent", () => {
  const text = JSON.stringify({
    ...fsObject("f", { matchingPrecedence: null, distinguisherMethod: null, rules: null }),
    metadata: { name: "f", uid: null, annotations: null, labels: null },
    status: null,
  });
  const { objects, errors } = decodeManifest(text, "null.json");
  assert.deepEqual(errors, []);
  assert.deepEqual(objects[0]!.object, {
    apiVersion: V1,
    kind: "FlowSchema",
    metadata: { name: "f" },
    spec: { priorityLevelConfiguration: { name: "global-default" }, matchingPrecedence: 1000 },
  });
});

Deno.test("a missing required enum is an unsupported empty value", () => {
  const fs = fsObject("f", { rules: [{ subjects: [{ group: { name: "g" } }] }] });
  assert.deepEqual(decodeValues([fs, { ...plObject("p"), spec: {} }]).errors, [
    'FlowSchema/f: spec.rules[0].subjects[0].kind: Unsupported value: "": ' +
    'supported values: "Group", "ServiceAccount", "User"',
    'PriorityLevelConfiguration/p: spec.type: Unsupported value: "": ' +
    'supported values: "Exempt", "Limited"',
  ]);
});

Deno.test("errors are collected across objects and the configuration is refused whole", () => {
  const input = {
    manifests: [{ name: "ok.yaml", text: fsYaml("good") }],
    objects: [
      fsObject("bad-fs", { matchingPrecedence: 20000 }),
      plObject("bad-pl", { lendablePercent: 101 }),
      plObject("fine"),
    ],
  };
  const expected = [
    "FlowSchema/bad-fs: spec.matchingPrecedence: Invalid value: 20000: " +
    "must not be greater than 10000",
    "PriorityLevelConfiguration/bad-pl: spec.limited.lendablePercent: Invalid value: 101: " +
    "must be between 0 and 100, inclusive",
  ];
  assert.deepEqual(parseConfiguration(input), { ok: false, errors: expected });
  assert.throws(() => loadConfiguration(input), (e: unknown) => {
    assert.ok(e instanceof ConfigurationError);
    assert.deepEqual(e.errors, expected);
    assert.equal(e.message, `Cannot load configuration: 2 errors:\n${expected.join("\n")}`);
    return true;
  });
  // Decoding and validation errors of different objects are reported together.
  const mixed = parseConfiguration({
    manifests: [{ name: "m.yaml", text: "kind: Secret\n" }],
    objects: [fsObject("x", { matchingPrecedence: "1" })],
  });
  assert.deepEqual(mixed.ok ? [] : mixed.errors, [
    'm.yaml: document 1, line 1: unsupported kind "Secret" (apiVersion ""): ' +
    "expected FlowSchema, PriorityLevelConfiguration, or a List of them",
    'FlowSchema/x: spec.matchingPrecedence: Invalid value: "1": must be a number',
  ]);
});

Deno.test("v1beta3, v1beta2 and v1beta1 objects are converted to v1", () => {
  const beta = (v: string) => `${V1}beta${v}`;
  const { objects, errors } = decodeValues([
    plObject("b1", { assuredConcurrencyShares: 11, lendablePercent: 5 }, beta("1")),
    plObject("b2", { assuredConcurrencyShares: 0 }, beta("2")),
    plObject("b3", { nominalConcurrencyShares: 0 }, beta("3")),
    plObject("v1", { nominalConcurrencyShares: 0 }),
    { ...fsObject("f"), apiVersion: beta("1") },
  ]);
  assert.deepEqual(errors, []);
  assert.deepEqual(objects.map((d) => `${d.object.apiVersion} ${d.version}`), [
    `${V1} v1beta1`,
    `${V1} v1beta2`,
    `${V1} v1beta3`,
    `${V1} v1`,
    `${V1} v1beta1`,
  ]);
  // 0 means "unset" (30) before v1; v1 keeps an explicit 0.
  const shares = objects.map((d) => "type" in d.object.spec && d.object.spec.limited);
  assert.deepEqual(shares.map((l) => l && l.nominalConcurrencyShares), [11, 30, 30, 0, false]);
  assert.deepEqual(objects[0]!.object.spec, {
    type: "Limited",
    limited: {
      nominalConcurrencyShares: 11,
      lendablePercent: 5,
      limitResponse: { type: "Reject" },
    },
  });
  // The renamed field does not exist in v1.
  assert.deepEqual(decodeValues([plObject("p", { assuredConcurrencyShares: 5 })]).errors, [
    'PriorityLevelConfiguration/p: spec.limited.assuredConcurrencyShares: unknown field "assuredConcurrencyShares"',
  ]);
  // Validation names the field the way the manifest's version spells it; zero is allowed in every
  // version (the gate went GA in 1.30), so a negative value is the one refused.
  assert.deepEqual(
    parseConfiguration({ objects: [plObject("p", { assuredConcurrencyShares: -1 }, beta("2"))] }),
    {
      ok: false,
      errors: [
        "PriorityLevelConfiguration/p: spec.limited.assuredConcurrencyShares: Invalid value: -1: " +
        "must be a non-negative integer",
      ],
    },
  );
});

Deno.test("v1beta1/v1beta2 have no nominalConcurrencyShares; type errors name their own field", () => {
  const beta2 = `${V1}beta2`;
  assert.deepEqual(decodeValues([plObject("p", { nominalConcurrencyShares: 7 }, beta2)]).errors, [
    'PriorityLevelConfiguration/p: spec.limited.nominalConcurrencyShares: unknown field "nominalConcurrencyShares"',
  ]);
  assert.deepEqual(decodeValues([plObject("p", { assuredConcurrencyShares: "x" }, beta2)]).errors, [
    'PriorityLevelConfiguration/p: spec.limited.assuredConcurrencyShares: Invalid value: "x": must be a number',
  ]);
});

Deno.test("YAML 1.1 as kubectl reads it: yes/no booleans and << merge keys", () => {
  const text = `apiVersion: ${V1}
kind: FlowSchema
metadata: {name: f}
spec:
  priorityLevelConfiguration: {name: global-default}
  rules:
  - subjects: [{kind: Group, group: {name: g}}]
    resourceRules:
    - &base {verbs: ["get"], apiGroups: [""], resources: ["pods"], clusterScope: yes}
    - <<: *base
      resources: ["nodes"]
`;
  const { objects, errors } = decodeManifest(text, "f.yaml");
  assert.deepEqual(errors, []);
  const spec = objects[0]!.object.spec as { rules: { resourceRules: unknown[] }[] };
  assert.deepEqual(spec.rules[0]!.resourceRules, [
    { verbs: ["get"], apiGroups: [""], resources: ["pods"], clusterScope: true },
    { verbs: ["get"], apiGroups: [""], resources: ["nodes"], clusterScope: true },
  ]);
});

Deno.test("a typed list holds only its own kind", () => {
  const text = `apiVersion: ${V1}
kind: PriorityLevelConfigurationList
items:
- kind: FlowSchema
  metadata: {name: f}
`;
  assert.deepEqual(decodeManifest(text, "l.yaml").errors, [
    'l.yaml: document 1, item 0, line 4: a PriorityLevelConfigurationList can only hold PriorityLevelConfiguration objects, got "FlowSchema"',
  ]);
});

Deno.test("every problem of an object is reported, the field that did not decode and the rest (as Kubernetes reports every field error)", () => {
  const text = `apiVersion: ${V1}
kind: FlowSchema
metadata: { name: bad }
spec:
  priorityLevelConfiguration: { name: "" }
  matchingPrecedence: 20000
  distinguisherMethod: { type: ByNothing }
  rules: []
---
apiVersion: ${V1}
kind: PriorityLevelConfiguration
metadata: { name: pl }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    lendablePercent: 101
    limitResponse: { type: Drop, queuing: { queues: 0 } }
`;
  const result = parseConfiguration({ manifests: [{ name: "apf.yaml", text }] });
  assert.equal(result.ok, false);
  assert.deepEqual(!result.ok && result.errors, [
    'FlowSchema/bad: spec.distinguisherMethod.type: Unsupported value: "ByNothing": supported values: "ByNamespace", "ByUser"',
    'PriorityLevelConfiguration/pl: spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"',
    "FlowSchema/bad: spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000",
    "FlowSchema/bad: spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
    "PriorityLevelConfiguration/pl: spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
  ]);
  // Neither object joins a configuration; what was repaired stays apart.
  const decoded = decodeManifest(text, "apf.yaml");
  assert.deepEqual(decoded.objects, []);
  assert.deepEqual(decoded.partial?.map((d) => d.repaired), [
    ["spec.distinguisherMethod"],
    ["spec.limited.limitResponse"],
  ]);
});

Deno.test("a missing spec or limitResponse is Go's zero value, validated as such", () => {
  const v1 = "flowcontrol.apiserver.k8s.io/v1";
  const errors = (object: Record<string, unknown>) => {
    const result = parseConfiguration({ objects: [object] });
    return result.ok ? [] : result.errors;
  };
  assert.deepEqual(errors({ apiVersion: v1, kind: "FlowSchema", metadata: { name: "f" } }), [
    "FlowSchema/f: spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
  ]);
  assert.deepEqual(
    errors({ apiVersion: v1, kind: "PriorityLevelConfiguration", metadata: { name: "p" } }),
    [
      'PriorityLevelConfiguration/p: spec.type: Unsupported value: "": supported values: "Exempt", "Limited"',
    ],
  );
  assert.deepEqual(
    errors({
      apiVersion: v1,
      kind: "PriorityLevelConfiguration",
      metadata: { name: "p" },
      spec: { type: "Limited", limited: {} },
    }),
    [
      'PriorityLevelConfiguration/p: spec.limited.limitResponse.type: Unsupported value: "": supported values: "Queue", "Reject"',
    ],
  );
});
