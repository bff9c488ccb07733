import assert from "node:assert/strict";
import { Classifier, FLOW_CACHE_LIMIT } from "../../src/classify/classifier.ts";
import { flowHashToBigInt } from "../../src/classify/flow_hash.ts";
import { normalizeUser, type UserInfo } from "../../src/classify/identity.ts";
import { describeRequest } from "../../src/classify/request_info.ts";
import {
  bootstrapConfiguration,
  effectiveConfiguration,
  type FlowControlConfiguration,
  loadConfiguration,
  mergeWithBootstrap,
} from "../../src/config/mod.ts";

const builtin = new Classifier(effectiveConfiguration(bootstrapConfiguration()));
const SA_GROUPS = (
  ns: string,
) => ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"];

/** Method for a KEP-logged verb; watches add `?watch=true`. */
function request(verb: string, path: string) {
  const method = {
    get: "GET",
    list: "GET",
    watch: "GET",
    create: "POST",
    update: "PUT",
    patch: "PATCH",
    delete: "DELETE",
  }[verb]!;
  return describeRequest(method, verb === "watch" ? `${path}?watch=true` : path);
}

// KEP-1040 "Observed Requests", classified under the built-in configuration:
// [verb, path, user, groups, FlowSchema, priority level, distinguisher]
const OBSERVED: [string, string, string, string[], string, string, string][] = [
  [
    "list",
    "/apis/admissionregistration.k8s.io/v1beta1/mutatingwebhookconfigurations",
    "system:apiserver",
    ["system:masters"],
    "exempt",
    "exempt",
    "",
  ],
  ["watch", "/api/v1/services", "system:apiserver", ["system:masters"], "exempt", "exempt", ""],
  [
    "get",
    "/api/v1/namespaces/default/services/kubernetes",
    "system:apiserver",
    ["system:masters"],
    "exempt",
    "exempt",
    "",
  ],
  [
    "create",
    "/apis/authentication.k8s.io/v1/tokenreviews",
    "system:kube-controller-manager",
    ["system:authenticated"],
    "kube-controller-manager",
    "workload-high",
    "",
  ],
  [
    "create",
    "/apis/authorization.k8s.io/v1beta1/subjectaccessreviews",
    "system:serviceaccount:example-com:network-apiserver",
    SA_GROUPS("example-com"),
    "service-accounts",
    "workload-low",
    "system:serviceaccount:example-com:network-apiserver",
  ],
  [
    "get",
    "/openapi/v2",
    "system:admin",
    ["system:masters", "system:authenticated"],
    "exempt",
    "exempt",
    "",
  ],
  [
    "list",
    "/apis/network.example.com/v1alpha1/namespaces/default/networkattachments",
    "system:admin",
    ["system:masters", "system:authenticated"],
    "exempt",
    "exempt",
    "",
  ],
  [
    "patch",
    "/api/v1/nodes/127.0.0.1/status",
    "system:node:127.0.0.1",
    ["system:nodes", "system:authenticated"],
    "system-node-high",
    "node-high",
    "system:node:127.0.0.1",
  ],
  [
    "update",
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/127.0.0.1",
    "system:node:127.0.0.1",
    ["system:nodes", "system:authenticated"],
    "system-node-high",
    "node-high",
    "system:node:127.0.0.1",
  ],
  [
    "list",
    "/apis/coordination.k8s.io/v1/leases",
    "system:kube-controller-manager",
    ["system:authenticated"],
    "kube-controller-manager",
    "workload-high",
    "",
  ],
  [
    "watch",
    "/apis/coordination.k8s.io/v1beta1/leases",
    "system:kube-controller-manager",
    ["system:authenticated"],
    "kube-controller-manager",
    "workload-high",
    "",
  ],
  [
    "update",
    "/apis/apps/v1/namespaces/kube-system/deployments/kube-dns/status",
    "system:serviceaccount:kube-system:deployment-controller",
    SA_GROUPS("kube-system"),
    "kube-system-service-accounts",
    "workload-high",
    "kube-system",
  ],
  [
    "list",
    "/api/v1/namespaces/example-com/pods",
    "system:serviceaccount:example-com:default",
    SA_GROUPS("example-com"),
    "service-accounts",
    "workload-low",
    "system:serviceaccount:example-com:default",
  ],
  [
    "update",
    "/apis/etcd.database.coreos.com/v1beta2/namespaces/example-com/etcdclusters/the-etcd-cluster",
    "system:serviceaccount:example-com:default",
    SA_GROUPS("example-com"),
    "service-accounts",
    "workload-low",
    "system:serviceaccount:example-com:default",
  ],
  [
    "create",
    "/api/v1/namespaces/example-com/pods/the-etcd-cluster-mxcxvgbcfg/binding",
    "system:kube-scheduler",
    ["system:authenticated"],
    "kube-scheduler",
    "workload-high",
    "example-com",
  ],
  [
    "list",
    "/api/v1/nodes",
    "system:serviceaccount:kube-system:pod-garbage-collector",
    SA_GROUPS("kube-system"),
    "kube-system-service-accounts",
    "workload-high",
    "",
  ],
  [
    "get",
    "/api",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    SA_GROUPS("kube-system"),
    "kube-system-service-accounts",
    "workload-high",
    "",
  ],
  [
    "get",
    "/apis/coordination.k8s.io/v1beta1",
    "system:serviceaccount:kube-system:generic-garbage-collector",
    SA_GROUPS("kube-system"),
    "kube-system-service-accounts",
    "workload-high",
    "",
  ],
  [
    "list",
    "/apis/storage.k8s.io/v1/storageclasses",
    "system:kube-scheduler",
    ["system:authenticated"],
    "kube-scheduler",
    "workload-high",
    "",
  ],
  [
    "watch",
    "/api/v1/services",
    "system:kube-scheduler",
    ["system:authenticated"],
    "kube-scheduler",
    "workload-high",
    "",
  ],
  [
    "update",
    "/api/v1/namespaces/kube-system/pods/kube-dns-5f7bc9fd5c-2bsz8/status",
    "system:kube-scheduler",
    ["system:authenticated"],
    "kube-scheduler",
    "workload-high",
    "kube-system",
  ],
  [
    "create",
    "/apis/events.k8s.io/v1beta1/namespaces/example-com/events",
    "system:kube-scheduler",
    ["system:authenticated"],
    "kube-scheduler",
    "workload-high",
    "example-com",
  ],
  [
    "patch",
    "/api/v1/namespaces/default/pods/bb1-66bdc74b9c-bgm47/status",
    "system:node:127.0.0.1",
    ["system:nodes", "system:authenticated"],
    "system-nodes",
    "system",
    "system:node:127.0.0.1",
  ],
  [
    "list",
    "/apis/network.example.com/v1alpha1/subnets",
    "system:serviceaccount:example-com:kos-controller-manager",
    SA_GROUPS("example-com"),
    "service-accounts",
    "workload-low",
    "system:serviceaccount:example-com:kos-controller-manager",
  ],
  [
    "update",
    "/apis/network.example.com/v1alpha1/namespaces/default/subnets/sn-1",
    "system:serviceaccount:example-com:kos-controller-manager",
    SA_GROUPS("example-com"),
    "service-accounts",
    "workload-low",
    "system:serviceaccount:example-com:kos-controller-manager",
  ],
];

Deno.test("KEP-1040 observed requests classify as under the built-in configuration", () => {
  for (const [verb, path, name, groups, fs, pl, distinguisher] of OBSERVED) {
    const ri = request(verb, path);
    assert.equal(ri.verb, verb, path);
    const c = builtin.classify({ name, groups }, ri);
    assert.deepEqual([c.flowSchema.name, c.priorityLevel.name, c.distinguisher], [
      fs,
      pl,
      distinguisher,
    ], `${verb} ${path} by ${name}`);
    assert.equal(c.flowHash === null, pl === "exempt", path);
  }
});

Deno.test("probes: anonymous and authenticated health checks are exempt; POST is not", () => {
  const anonymous = normalizeUser(undefined);
  for (const path of ["/healthz", "/readyz", "/livez", "/healthz/etcd"]) {
    const c = builtin.classify(anonymous, describeRequest("GET", path));
    assert.deepEqual([c.flowSchema.name, c.priorityLevel.name, c.flowHash], [
      "probes",
      "exempt",
      null,
    ], path);
  }
  const post = builtin.classify(anonymous, describeRequest("POST", "/healthz"));
  assert.equal(post.flowSchema.name, "global-default");
  assert.equal(
    builtin.classify(anonymous, describeRequest("GET", "/healthzx")).flowSchema.name,
    "global-default",
  );
});

Deno.test("the flow hash is SHA-256 based and golden (Kubernetes' hashFlowID)", () => {
  const alice = builtin.classify(
    normalizeUser({ name: "alice" }),
    describeRequest("GET", "/api/v1/namespaces/a/pods"),
  );
  assert.deepEqual([alice.flowSchema.name, alice.distinguisher], ["global-default", "alice"]);
  assert.equal(flowHashToBigInt(alice.flowHash!), 17644606172554983095n);
  assert.deepEqual(alice.flowHash, { hi: 0xf4de3bd4, lo: 0x2ccdf6b7 });
  const sa = builtin.classify(
    { name: "system:serviceaccount:default:x", groups: SA_GROUPS("default") },
    describeRequest("GET", "/api/v1/namespaces/default/pods"),
  );
  assert.deepEqual([sa.flowSchema.name, flowHashToBigInt(sa.flowHash!)], [
    "service-accounts",
    9267409685745014192n,
  ]);
  // Warm flows come from the cache: the same value again.
  assert.equal(
    builtin.classify(normalizeUser({ name: "alice" }), describeRequest("GET", "/version")).flowHash,
    alice.flowHash,
  );
});

Deno.test("first match wins in precedence-then-name order; the match is explained", () => {
  const c = builtin.classify({
    name: "system:kube-controller-manager",
    groups: ["system:authenticated"],
  }, describeRequest("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm"));
  assert.deepEqual([c.flowSchema.name, c.priorityLevel.name, c.distinguisher], [
    "system-leader-election",
    "leader-election",
    "system:kube-controller-manager",
  ]);
  assert.deepEqual(c.match, { rule: 0, subject: 0, kind: "resourceRules", index: 0 });
});

function classifierFor(yaml: string, options: { mandatoryOnly?: boolean } = {}) {
  const user: FlowControlConfiguration = loadConfiguration({
    manifests: [{ name: "t.yaml", text: yaml }],
  });
  return new Classifier(effectiveConfiguration(mergeWithBootstrap(user, options).configuration));
}

const TENANTS = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: single}
spec:
  type: Limited
  limited:
    limitResponse: {type: Queue, queuing: {queues: 1, handSize: 1}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: single}
spec:
  priorityLevelConfiguration: {name: single}
  matchingPrecedence: 50
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: User, user: {name: carol}}]
    nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
`;

Deno.test("no distinguisher or hash for levels with one queue, Reject levels and exempt levels", () => {
  const classifier = classifierFor(TENANTS);
  const c = classifier.classify(normalizeUser({ name: "carol" }), describeRequest("GET", "/x"));
  assert.deepEqual([c.flowSchema.name, c.distinguisher, c.flowHash], ["single", "", null]);
  const mandatory = classifierFor(TENANTS, { mandatoryOnly: true });
  const rejected = mandatory.classify(
    normalizeUser({ name: "dave" }),
    describeRequest("GET", "/x"),
  );
  assert.deepEqual([
    rejected.flowSchema.name,
    rejected.priorityLevel.name,
    rejected.distinguisher,
    rejected.flowHash,
  ], [
    "catch-all",
    "catch-all",
    "",
    null,
  ]);
});

Deno.test("a user in no group falls back to catch-all without a rule match", () => {
  const groupless: UserInfo = { name: "ghost", groups: [] };
  const c = classifierFor(TENANTS, { mandatoryOnly: true }).classify(
    groupless,
    describeRequest("GET", "/x"),
  );
  assert.deepEqual([c.flowSchema.name, c.match], ["catch-all", null]);
});

Deno.test("the flow cache stays bounded under many distinct users", () => {
  const ri = describeRequest("GET", "/api/v1/pods");
  for (let i = 0; i < FLOW_CACHE_LIMIT + 10; i++) {
    const c = builtin.classify({ name: `user-${i}`, groups: ["system:authenticated"] }, ri);
    assert.equal(c.distinguisher, `user-${i}`);
  }
  // Still correct after the cache was cleared.
  assert.equal(
    flowHashToBigInt(builtin.classify(normalizeUser({ name: "alice" }), ri).flowHash!),
    17644606172554983095n,
  );
});

Deno.test("declared REST routes get resource semantics and ByNamespace fairness per tenant", () => {
  const classifier = classifierFor(`apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: tenants}
spec:
  priorityLevelConfiguration: {name: workload-low}
  matchingPrecedence: 100
  distinguisherMethod: {type: ByNamespace}
  rules:
  - subjects: [{kind: Group, group: {name: system:authenticated}}]
    resourceRules: [{verbs: ["get", "list"], apiGroups: ["shop"], resources: ["orders"], namespaces: ["*"]}]
`);
  const routes = [{
    pattern: "/v1/tenants/:tenant/orders/:id?",
    apiGroup: "shop",
    resource: "orders",
    namespaceParam: "tenant",
    nameParam: "id",
  }];
  const user = normalizeUser({ name: "u1" });
  const acme = classifier.classify(
    user,
    describeRequest("GET", "/v1/tenants/acme/orders/42", { routes }),
  );
  assert.deepEqual([acme.flowSchema.name, acme.distinguisher], ["tenants", "acme"]);
  const list = classifier.classify(
    user,
    describeRequest("GET", "/v1/tenants/globex/orders", { routes }),
  );
  assert.deepEqual([list.flowSchema.name, list.distinguisher], ["tenants", "globex"]);
  assert.notEqual(list.flowHash, acme.flowHash);
  // Unmatched paths stay non-resource requests.
  const other = classifier.classify(
    user,
    describeRequest("GET", "/v1/tenants/acme/invoices", { routes }),
  );
  assert.equal(other.flowSchema.name, "global-default");
});
