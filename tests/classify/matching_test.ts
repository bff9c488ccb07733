import assert from "node:assert/strict";
import type {
  FlowSchema,
  NonResourcePolicyRule,
  ResourcePolicyRule,
  Subject,
} from "../../src/config/mod.ts";
import { compileFlowSchema, matchFlowSchema, subjectMatches } from "../../src/classify/matching.ts";
import type { UserInfo } from "../../src/classify/identity.ts";
import type { RequestInfo } from "../../src/classify/request_info.ts";

function resource(fields: Partial<RequestInfo>): RequestInfo {
  return {
    isResourceRequest: true,
    path: "/api/v1/x",
    verb: "get",
    apiPrefix: "api",
    apiGroup: "",
    apiVersion: "v1",
    namespace: "",
    resource: "pods",
    subresource: "",
    name: "",
    parts: [],
    ...fields,
  };
}

function nonResource(path: string, verb = "get"): RequestInfo {
  return resource({
    isResourceRequest: false,
    path,
    verb,
    apiPrefix: "",
    apiVersion: "",
    resource: "",
  });
}

const user = (name: string, ...groups: string[]): UserInfo => ({ name, groups });
const anyone: Subject = { kind: "Group", group: { name: "*" } };

function schema(
  rules: {
    subjects?: Subject[];
    resourceRules?: ResourcePolicyRule[];
    nonResourceRules?: NonResourcePolicyRule[];
  }[],
): FlowSchema {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name: "fs" },
    spec: {
      priorityLevelConfiguration: { name: "pl" },
      rules: rules.map((r) => ({ subjects: r.subjects ?? [anyone], ...r })),
    },
  };
}

function matches(rule: ResourcePolicyRule, ri: RequestInfo): boolean {
  return matchFlowSchema(compileFlowSchema(schema([{ resourceRules: [rule] }])), user("u"), ri) !==
    undefined;
}

function urlMatches(url: string, path: string, verbs = ["*"], verb = "get"): boolean {
  const fs = compileFlowSchema(schema([{ nonResourceRules: [{ verbs, nonResourceURLs: [url] }] }]));
  return matchFlowSchema(fs, user("u"), nonResource(path, verb)) !== undefined;
}

Deno.test("User and Group subjects, with * matching everyone", () => {
  const u = user("alice", "dev");
  assert.equal(subjectMatches({ kind: "User", user: { name: "alice" } }, u), true);
  assert.equal(subjectMatches({ kind: "User", user: { name: "Alice" } }, u), false);
  assert.equal(subjectMatches({ kind: "User", user: { name: "*" } }, u), true);
  assert.equal(subjectMatches({ kind: "Group", group: { name: "dev" } }, u), true);
  assert.equal(subjectMatches({ kind: "Group", group: { name: "ops" } }, u), false);
  // Group * matches even a user with no groups.
  assert.equal(subjectMatches({ kind: "Group", group: { name: "*" } }, user("nobody")), true);
  // A kind whose member is missing never matches.
  assert.equal(subjectMatches({ kind: "User" }, u), false);
  assert.equal(subjectMatches({ kind: "Robot" } as unknown as Subject, u), false);
});

Deno.test("ServiceAccount subjects match on the user name only", () => {
  const sa = (namespace: string, name: string): Subject => ({
    kind: "ServiceAccount",
    serviceAccount: { namespace, name },
  });
  const u = user(
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccounts",
  );
  assert.equal(subjectMatches(sa("kube-system", "deployment-controller"), u), true);
  assert.equal(subjectMatches(sa("kube-system", "*"), u), true);
  assert.equal(subjectMatches(sa("kube-system", "deployment"), u), false);
  assert.equal(subjectMatches(sa("kube-system", "deployment-controller-x"), u), false);
  assert.equal(subjectMatches(sa("kube", "*"), u), false);
  assert.equal(
    subjectMatches(sa("kube-system", "*"), user("system:serviceaccount:kube-system-2:x")),
    false,
  );
  // Name * matches any remainder, even an empty one.
  assert.equal(
    subjectMatches(sa("kube-system", "*"), user("system:serviceaccount:kube-system:")),
    true,
  );
  // Groups do not make a service account: only the user name counts.
  assert.equal(
    subjectMatches(sa("kube-system", "*"), user("alice", "system:serviceaccounts:kube-system")),
    false,
  );
});

Deno.test("resource rules: verbs, groups and resources with lone-* wildcards", () => {
  const rule: ResourcePolicyRule = {
    verbs: ["get", "list"],
    apiGroups: ["", "apps"],
    resources: ["pods"],
    namespaces: ["*"],
  };
  assert.equal(matches(rule, resource({ namespace: "a" })), true);
  assert.equal(matches(rule, resource({ namespace: "a", verb: "watch" })), false);
  assert.equal(matches(rule, resource({ namespace: "a", apiGroup: "batch" })), false);
  assert.equal(matches(rule, resource({ namespace: "a", apiGroup: "apps", verb: "list" })), true);
  assert.equal(matches(rule, resource({ namespace: "a", resource: "services" })), false);
  // Matching is exact and case-sensitive.
  assert.equal(matches({ ...rule, verbs: ["GET"] }, resource({ namespace: "a" })), false);
  const all: ResourcePolicyRule = {
    verbs: ["*"],
    apiGroups: ["*"],
    resources: ["*"],
    namespaces: ["*"],
  };
  assert.equal(
    matches(
      all,
      resource({ namespace: "a", verb: "deletecollection", apiGroup: "x.io", resource: "things" }),
    ),
    true,
  );
});

Deno.test("resource rules: pods does not match pods/status and vice versa", () => {
  const base = { verbs: ["*"], apiGroups: ["*"], namespaces: ["*"] };
  const status = resource({ namespace: "a", resource: "pods", subresource: "status" });
  assert.equal(matches({ ...base, resources: ["pods"] }, status), false);
  assert.equal(matches({ ...base, resources: ["pods/status"] }, status), true);
  assert.equal(
    matches({ ...base, resources: ["pods/status"] }, resource({ namespace: "a" })),
    false,
  );
  assert.equal(matches({ ...base, resources: ["*"] }, status), true);
});

Deno.test("resource rules: namespace-less requests need clusterScope; * never matches them", () => {
  const rule = (clusterScope: boolean, namespaces?: string[]): ResourcePolicyRule => ({
    verbs: ["*"],
    apiGroups: ["*"],
    resources: ["*"],
    clusterScope,
    ...(namespaces && { namespaces }),
  });
  const clusterWide = resource({ verb: "list" }); // GET /api/v1/pods
  assert.equal(matches(rule(false, ["*"]), clusterWide), false);
  assert.equal(matches(rule(true), clusterWide), true);
  assert.equal(matches(rule(true), resource({ namespace: "a" })), false);
  assert.equal(matches(rule(true, ["*"]), resource({ namespace: "a" })), true);
  assert.equal(matches(rule(false, ["a", "b"]), resource({ namespace: "b" })), true);
  assert.equal(matches(rule(false, ["a", "b"]), resource({ namespace: "c" })), false);
});

Deno.test("non-resource URLs: exact, prefix and /* forms (Kubernetes' rule.go)", () => {
  assert.equal(urlMatches("/healthz", "/healthz"), true);
  assert.equal(urlMatches("/healthz", "/healthz/"), true);
  assert.equal(urlMatches("/healthz", "/healthz/etcd"), true);
  assert.equal(urlMatches("/healthz", "/healthzx"), false);
  assert.equal(urlMatches("/apis/*", "/apis/"), true);
  assert.equal(urlMatches("/apis/*", "/apis/apps/v1"), true);
  assert.equal(urlMatches("/apis/*", "/apis"), false);
  assert.equal(urlMatches("/", "/anything/at/all"), true);
  assert.equal(urlMatches("/metrics/", "/metrics/x"), true);
  assert.equal(urlMatches("/metrics/", "/metrics"), false);
  assert.equal(urlMatches("*", "/whatever"), true);
});

Deno.test("non-resource verbs are lower-cased methods: post only matches *", () => {
  assert.equal(urlMatches("/x", "/x", ["get"], "get"), true);
  assert.equal(urlMatches("/x", "/x", ["get"], "head"), false);
  assert.equal(urlMatches("/x", "/x", ["create"], "post"), false);
  assert.equal(urlMatches("/x", "/x", ["*"], "post"), true);
});

Deno.test("resource requests never look at non-resource rules, and vice versa", () => {
  const fs = compileFlowSchema(schema([{
    resourceRules: [{
      verbs: ["*"],
      apiGroups: ["*"],
      resources: ["*"],
      clusterScope: true,
      namespaces: ["*"],
    }],
  }]));
  assert.notEqual(matchFlowSchema(fs, user("u"), resource({})), undefined);
  assert.equal(matchFlowSchema(fs, user("u"), nonResource("/healthz")), undefined);
  const nr = compileFlowSchema(
    schema([{ nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }] }]),
  );
  assert.equal(matchFlowSchema(nr, user("u"), resource({})), undefined);
});

Deno.test("a rule matches only when a subject and a rule both match; the match says which", () => {
  const fs = compileFlowSchema(schema([
    {
      subjects: [{ kind: "User", user: { name: "bob" } }],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    },
    {
      subjects: [{ kind: "User", user: { name: "x" } }, { kind: "Group", group: { name: "dev" } }],
      nonResourceRules: [
        { verbs: ["get"], nonResourceURLs: ["/a"] },
        { verbs: ["get"], nonResourceURLs: ["/b"] },
      ],
    },
  ]));
  assert.deepEqual(matchFlowSchema(fs, user("alice", "dev"), nonResource("/b")), {
    rule: 1,
    subject: 1,
    kind: "nonResourceRules",
    index: 1,
  });
  assert.equal(matchFlowSchema(fs, user("alice", "ops"), nonResource("/b")), undefined);
  assert.equal(
    matchFlowSchema(compileFlowSchema(schema([])), user("bob"), nonResource("/")),
    undefined,
  );
});
