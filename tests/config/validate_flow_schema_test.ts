import assert from "node:assert/strict";
import { mandatoryFlowSchemas } from "../../src/config/bootstrap.ts";
import { nonResourceURLProblem } from "../../src/config/validate_flow_schema.ts";
import { errorsOf, flowSchema, type Obj, withRule } from "./_helpers.ts";

const group = { kind: "Group", group: { name: "g" } };
const podsRule = { verbs: ["get"], apiGroups: [""], resources: ["pods"], namespaces: ["*"] };
const subdomainMessage = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric " +
  "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. " +
  "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelMessage = "a lowercase RFC 1123 label must consist of lower case alphanumeric " +
  "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  " +
  "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

Deno.test("a valid FlowSchema has no errors", () => {
  assert.deepEqual(errorsOf(flowSchema("fs")), []);
});

Deno.test("FlowSchema names must be DNS-1123 subdomains", () => {
  assert.deepEqual(errorsOf(flowSchema("Bad_Name")), [
    `FlowSchema/Bad_Name: metadata.name: Invalid value: "Bad_Name": ${subdomainMessage}`,
  ]);
  assert.deepEqual(errorsOf(flowSchema("")), [
    "FlowSchema/(unnamed): metadata.name: Required value: name or generateName is required",
  ]);
  const long = "a".repeat(254);
  assert.deepEqual(errorsOf(flowSchema(long)), [
    `FlowSchema/${long}: metadata.name: Invalid value: "${long}": must be no more than 253 characters`,
  ]);
  assert.deepEqual(errorsOf(flowSchema("a.b-c.d1")), []);
});

Deno.test("matchingPrecedence must lie in [1, 10000]; 0 defaults to 1000", () => {
  assert.deepEqual(errorsOf(flowSchema("fs", { matchingPrecedence: -1 })), [
    "FlowSchema/fs: spec.matchingPrecedence: Invalid value: -1: must be a positive value",
  ]);
  assert.deepEqual(errorsOf(flowSchema("fs", { matchingPrecedence: 10001 })), [
    "FlowSchema/fs: spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
  ]);
  assert.deepEqual(errorsOf(flowSchema("fs", { matchingPrecedence: 10000 })), []);
  assert.deepEqual(errorsOf(flowSchema("fs", { matchingPrecedence: 0 })), []);
});

Deno.test("only the schema named exempt may have matchingPrecedence 1", () => {
  assert.deepEqual(errorsOf(flowSchema("fs", { matchingPrecedence: 1 })), [
    "FlowSchema/fs: spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
  ]);
  assert.deepEqual(errorsOf(mandatoryFlowSchemas()[0] as unknown as Obj), []);
});

Deno.test("distinguisherMethod.type must be ByUser or ByNamespace", () => {
  assert.deepEqual(errorsOf(flowSchema("fs", { distinguisherMethod: { type: "ByGroup" } })), [
    'FlowSchema/fs: spec.distinguisherMethod.type: Unsupported value: "ByGroup": supported values: "ByNamespace", "ByUser"',
  ]);
  for (const type of ["ByUser", "ByNamespace"]) {
    assert.deepEqual(errorsOf(flowSchema("fs", { distinguisherMethod: { type } })), []);
  }
});

Deno.test("the priority level reference is required and must be a DNS-1123 subdomain", () => {
  assert.deepEqual(errorsOf(flowSchema("fs", { priorityLevelConfiguration: { name: "" } })), [
    "FlowSchema/fs: spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
  ]);
  assert.deepEqual(errorsOf(flowSchema("fs", { priorityLevelConfiguration: {} })).length, 1);
  assert.deepEqual(errorsOf(flowSchema("fs", { priorityLevelConfiguration: { name: "Level" } })), [
    `FlowSchema/fs: spec.priorityLevelConfiguration.name: Invalid value: "Level": ${subdomainMessage}`,
  ]);
});

Deno.test("a rule needs subjects and at least one resource or non-resource rule", () => {
  assert.deepEqual(errorsOf(withRule({ subjects: [], resourceRules: [podsRule] })), [
    "FlowSchema/fs: spec.rules[0].subjects: Required value: subjects must contain at least one value",
  ]);
  assert.deepEqual(errorsOf(withRule({ subjects: [group] })), [
    "FlowSchema/fs: spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
  ]);
  assert.deepEqual(
    errorsOf(withRule({ subjects: [group], resourceRules: [], nonResourceRules: [] })).length,
    1,
  );
  // No rules at all is valid: the schema matches nothing.
  assert.deepEqual(errorsOf(flowSchema("fs", { rules: [] })), []);
});

Deno.test("subjects are a union keyed by kind", () => {
  const check = (subject: Obj) =>
    errorsOf(withRule({ subjects: [subject], resourceRules: [podsRule] }));
  const at = "FlowSchema/fs: spec.rules[0].subjects[0]";
  assert.deepEqual(check({ kind: "User" }), [
    `${at}.user: Required value: user is required when subject kind is 'User'`,
  ]);
  assert.deepEqual(check({ kind: "Group" }), [
    `${at}.group: Required value: group is required when subject kind is 'Group'`,
  ]);
  assert.deepEqual(check({ kind: "ServiceAccount" }), [
    `${at}.serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'`,
  ]);
  assert.deepEqual(check({ kind: "User", user: { name: "u" }, group: { name: "g" } }), [
    `${at}.group: Forbidden: group is forbidden when subject kind is not 'Group'`,
  ]);
  assert.deepEqual(
    check({
      kind: "Group",
      group: { name: "g" },
      user: { name: "u" },
      serviceAccount: { namespace: "n", name: "s" },
    }),
    // As Kubernetes reports them: serviceAccount, then user.
    [
      `${at}.serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'`,
      `${at}.user: Forbidden: user is forbidden when subject kind is not 'User'`,
    ],
  );
  // The subject's own member first, then the members its kind forbids.
  assert.deepEqual(check({ kind: "User", user: { name: "" }, group: { name: "g" } }), [
    `${at}.user.name: Required value`,
    `${at}.group: Forbidden: group is forbidden when subject kind is not 'Group'`,
  ]);
  assert.deepEqual(check({ kind: "User", user: { name: "" } }), [
    `${at}.user.name: Required value`,
  ]);
  assert.deepEqual(check({ kind: "Group", group: { name: "" } }), [
    `${at}.group.name: Required value`,
  ]);
  assert.deepEqual(check({ kind: "Robot" }), [
    `${at}.kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"`,
  ]);
  // Any non-empty user or group name is allowed, including "*".
  assert.deepEqual(check({ kind: "User", user: { name: "*" } }), []);
  assert.deepEqual(check({ kind: "Group", group: { name: "Any Thing" } }), []);
});

Deno.test("service-account subjects need a valid namespace and name (name may be *)", () => {
  const check = (serviceAccount: Obj) =>
    errorsOf(
      withRule({
        subjects: [{ kind: "ServiceAccount", serviceAccount }],
        resourceRules: [podsRule],
      }),
    );
  const at = "FlowSchema/fs: spec.rules[0].subjects[0].serviceAccount";
  assert.deepEqual(check({ namespace: "kube-system", name: "*" }), []);
  assert.deepEqual(check({ namespace: "kube-system", name: "a.b-c" }), []);
  assert.deepEqual(check({ namespace: "kube-system", name: "" }), [`${at}.name: Required value`]);
  assert.deepEqual(check({ namespace: "kube-system", name: "Bad" }), [
    `${at}.name: Invalid value: "Bad": ${subdomainMessage}`,
  ]);
  assert.deepEqual(check({ namespace: "", name: "x" }), [
    `${at}.namespace: Required value: must specify namespace for service account`,
  ]);
  // There is no wildcard namespace, and namespaces are labels: no dots.
  assert.deepEqual(check({ namespace: "*", name: "x" }), [
    `${at}.namespace: Invalid value: "*": ${labelMessage}`,
  ]);
  // A valid subdomain with dots is told so (Kubernetes' IsDNS1123Label).
  assert.deepEqual(check({ namespace: "a.b", name: "x" }), [
    `${at}.namespace: Invalid value: "a.b": must not contain dots`,
  ]);
});

Deno.test("resource rules: verbs, apiGroups and resources are non-empty and * stands alone", () => {
  const check = (rule: Obj) =>
    errorsOf(withRule({ subjects: [group], resourceRules: [{ ...podsRule, ...rule }] }));
  const at = "FlowSchema/fs: spec.rules[0].resourceRules[0]";
  assert.deepEqual(check({ verbs: [] }), [
    `${at}.verbs: Required value: verbs must contain at least one value`,
  ]);
  assert.deepEqual(check({ verbs: ["*", "get"] }), [
    `${at}.verbs: Invalid value: ["*","get"]: if '*' is present, must not specify other verbs`,
  ]);
  assert.deepEqual(check({ verbs: ["get", "post"] }), [
    `${at}.verbs: Unsupported value: ["get","post"]: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"`,
  ]);
  assert.deepEqual(
    check({
      verbs: [
        "get",
        "list",
        "create",
        "update",
        "delete",
        "deletecollection",
        "patch",
        "watch",
        "proxy",
      ],
    }),
    [],
  );
  assert.deepEqual(check({ apiGroups: [] }), [
    `${at}.apiGroups: Required value: resource rules must supply at least one api group`,
  ]);
  assert.deepEqual(check({ apiGroups: ["*", "apps"] }), [
    `${at}.apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other api groups`,
  ]);
  assert.deepEqual(check({ apiGroups: ["", "apps", "Weird Group"] }), []);
  assert.deepEqual(check({ resources: [] }), [
    `${at}.resources: Required value: resource rules must supply at least one resource`,
  ]);
  assert.deepEqual(check({ resources: ["pods", "*"] }), [
    `${at}.resources: Invalid value: ["pods","*"]: if '*' is present, must not specify other resources`,
  ]);
  assert.deepEqual(check({ resources: ["pods/status", "Anything"] }), []);
});

Deno.test("resource rules: namespaces are required unless cluster scoped, * alone, else labels", () => {
  const check = (rule: Obj) =>
    errorsOf(withRule({ subjects: [group], resourceRules: [{ ...podsRule, ...rule }] }));
  const at = "FlowSchema/fs: spec.rules[0].resourceRules[0]";
  assert.deepEqual(check({ namespaces: [] }), [
    `${at}.namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace`,
  ]);
  assert.deepEqual(check({ namespaces: undefined, clusterScope: false }).length, 1);
  assert.deepEqual(check({ namespaces: [], clusterScope: true }), []);
  assert.deepEqual(check({ namespaces: ["*", "default"] }), [
    `${at}.namespaces: Invalid value: ["*","default"]: if '*' is present, must not specify other namespaces`,
  ]);
  assert.deepEqual(check({ namespaces: ["default", "Bad"] }), [
    `${at}.namespaces[1]: Invalid value: "Bad": each member of this list must be '*' or a DNS-1123 label; ${labelMessage}`,
  ]);
  assert.deepEqual(check({ namespaces: ["kube.system"] }), [
    `${at}.namespaces[0]: Invalid value: "kube.system": each member of this list must be '*' or a DNS-1123 label; must not contain dots`,
  ]);
  assert.deepEqual(check({ namespaces: ["default", "kube-system"], clusterScope: true }), []);
});

Deno.test("non-resource rules: verbs and URLs", () => {
  const check = (rule: Obj) =>
    errorsOf(
      withRule({
        subjects: [group],
        nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/x"], ...rule }],
      }),
    );
  const at = "FlowSchema/fs: spec.rules[0].nonResourceRules[0]";
  assert.deepEqual(check({ verbs: [] }), [
    `${at}.verbs: Required value: verbs must contain at least one value`,
  ]);
  assert.deepEqual(check({ verbs: ["post"] }).length, 1);
  assert.deepEqual(check({ verbs: ["*", "get"] }).length, 1);
  assert.deepEqual(check({ nonResourceURLs: [] }), [
    `${at}.nonResourceURLs: Required value: nonResourceURLs must contain at least one value`,
  ]);
  assert.deepEqual(check({ nonResourceURLs: ["*", "/x"] }), [
    `${at}.nonResourceURLs: Invalid value: ["*","/x"]: if '*' is present, must not specify other non-resource URLs`,
  ]);
  assert.deepEqual(check({ nonResourceURLs: ["/ok", "foo"] }), [
    `${at}.nonResourceURLs[1]: Invalid value: "foo": must start with slash`,
  ]);
  assert.deepEqual(check({ nonResourceURLs: ["*"] }), []);
});

Deno.test("non-resource URL forms follow Kubernetes", () => {
  for (const url of ["/", "/foo", "/apis/", "/healthz/*", "/*", "/a/b/c/*"]) {
    assert.equal(nonResourceURLProblem(url), undefined, url);
  }
  const invalid: [string, string][] = [
    ["", "must not be empty"],
    ["foo", "must start with slash"],
    ["//", "must not contain double slash"],
    ["/a//b", "must not contain double slash"],
    ["/a b", "must not contain white-space"],
    ["/healthz/*/foo", "wildcard can only do suffix matching"],
    ["/health*", "wildcard can only do suffix matching"],
    ["/*/*", "wildcard can only do suffix matching"],
  ];
  for (const [url, problem] of invalid) assert.equal(nonResourceURLProblem(url), problem, url);
});

Deno.test("mandatory FlowSchemas must keep their fixed spec", () => {
  const [exempt, catchAll] = mandatoryFlowSchemas() as unknown as Obj[];
  assert.deepEqual(errorsOf(exempt!, catchAll!), []);
  const changed = structuredClone(catchAll!) as { spec: { distinguisherMethod?: unknown } };
  delete changed.spec.distinguisherMethod;
  const errors = errorsOf(changed as Obj);
  assert.equal(errors.length, 1);
  assert.match(
    errors[0]!,
    /^FlowSchema\/catch-all: spec: Invalid value: .*: spec of 'catch-all' must equal the fixed value$/,
  );
  const moved = structuredClone(exempt!) as {
    spec: { priorityLevelConfiguration: { name: string } };
  };
  moved.spec.priorityLevelConfiguration.name = "global-default";
  assert.match(errorsOf(moved as Obj)[0]!, /spec of 'exempt' must equal the fixed value/);
  // Semantic equality: an omitted `clusterScope: false` or empty list equals the fixed value.
  const same = structuredClone(exempt!) as { metadata: Obj };
  same.metadata = { name: "exempt" };
  assert.deepEqual(errorsOf(same as Obj), []);
});

Deno.test("errors are collected, not first-only", () => {
  const errors = errorsOf(
    flowSchema("Bad", {
      matchingPrecedence: 20000,
      priorityLevelConfiguration: { name: "" },
      rules: [{ subjects: [] }],
    }),
    flowSchema("other", { matchingPrecedence: 1 }),
  );
  assert.equal(errors.length, 6);
  assert.ok(
    errors.every((e) => /^FlowSchema\/(Bad|other): [a-zA-Z.[\]0-9]+: /.test(e)),
    errors.join("\n"),
  );
});
