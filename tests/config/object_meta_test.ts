/**
 * The metadata checks of both kinds (`src/config/object_meta.ts`), with
 * apimachinery's messages: labels, annotations, unknown metadata fields and
 * the `ObjectMeta` fields a server sets.
 */

import assert from "node:assert/strict";
import { labelKeyErrors, labelValueErrors } from "../../src/config/object_meta.ts";
import { errorsOf, flowSchema, limitedLevel } from "./_helpers.ts";

const KEY_MESSAGE = "must consist of alphanumeric characters, '-', '_' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex " +
  "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MESSAGE = "a valid label must be an empty string or consist of alphanumeric " +
  "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

Deno.test("label keys: an optional DNS subdomain prefix and a name of at most 63 bytes (IsLabelKey)", () => {
  for (const ok of ["app", "App.Name_1", "example.com/MyName", "a/b", "x".repeat(63)]) {
    assert.deepEqual(labelKeyErrors(ok), [], ok);
  }
  assert.deepEqual(labelKeyErrors("bad key!"), [`name part ${KEY_MESSAGE}`]);
  assert.deepEqual(labelKeyErrors(""), ["name part must be non-empty", `name part ${KEY_MESSAGE}`]);
  assert.deepEqual(labelKeyErrors("x".repeat(64)), ["name part must be no more than 63 bytes"]);
  assert.deepEqual(labelKeyErrors("/name"), ["prefix part must be non-empty"]);
  assert.deepEqual(labelKeyErrors("Example.com/name"), [
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. " +
    "'example.com', regex used for validation is " +
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
  assert.deepEqual(labelKeyErrors("a/b/c"), [
    `a valid label key ${KEY_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
  ]);
});

Deno.test("label values: empty, or at most 63 bytes of the key's characters (IsLabelValue)", () => {
  for (const ok of ["", "v", "My_value-1.2", "x".repeat(63)]) {
    assert.deepEqual(labelValueErrors(ok), [], ok);
  }
  assert.deepEqual(labelValueErrors("bad value!"), [VALUE_MESSAGE]);
  assert.deepEqual(labelValueErrors("x".repeat(64)), ["must be no more than 63 bytes"]);
  // Bytes, not characters: 32 two-byte characters are 64 bytes.
  assert.deepEqual(labelValueErrors("é".repeat(32)), [
    "must be no more than 63 bytes",
    VALUE_MESSAGE,
  ]);
});

Deno.test("an object's labels and annotations are checked as ValidateObjectMeta checks them", () => {
  assert.deepEqual(
    errorsOf(flowSchema("fs", {}, {
      labels: { "bad key!": "ok", fine: "bad value!" },
      annotations: { "/bad": "x", "Example.com/Any-Case": "kept" },
    })),
    [
      `FlowSchema/fs: metadata.labels: Invalid value: "bad key!": name part ${KEY_MESSAGE}`,
      `FlowSchema/fs: metadata.labels: Invalid value: "bad value!": ${VALUE_MESSAGE}`,
      'FlowSchema/fs: metadata.annotations: Invalid value: "/bad": prefix part must be non-empty',
    ],
  );
  assert.deepEqual(
    errorsOf(limitedLevel("pl", {}, "v1", { annotations: { big: "x".repeat(256 * 1024) } })),
    ["PriorityLevelConfiguration/pl: metadata.annotations: Too long: may not be more than 262144 bytes"],
  );
});

Deno.test("metadata: a field ObjectMeta lacks is unknown; those a server sets are dropped", () => {
  assert.deepEqual(errorsOf(flowSchema("fs", {}, { bogus: 1 })), [
    'FlowSchema/fs: metadata.bogus: unknown field "bogus"',
  ]);
  assert.deepEqual(
    errorsOf(flowSchema("fs", {}, {
      resourceVersion: "42",
      creationTimestamp: "2026-11-29T00:00:00Z",
      managedFields: [{ manager: "kubectl" }],
      finalizers: [],
      generateName: "fs-",
    })),
    [],
  );
});
