/**
 * The indexed classifier against a model: a plain walk over
 * `effective.flowSchemas` in matching order with `matchFlowSchema`
 * (tests/classify/_linear_walk.ts). For random FlowSchema sets and random
 * requests, both must pick the same schema, level and rule match, and the
 * same flow.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { Classifier } from "../../src/classify/classifier.ts";
import { flowHash } from "../../src/classify/flow_hash.ts";
import type { UserInfo } from "../../src/classify/identity.ts";
import { describeRequest, type RequestInfo } from "../../src/classify/request_info.ts";
import {
  type EffectiveConfiguration,
  effectiveConfiguration,
  type FlowSchema,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type ResourcePolicyRule,
  type Subject,
} from "../../src/config/mod.ts";
import { linearClassify } from "./_linear_walk.ts";

// Small vocabularies, so that schemas and requests collide often.
const USERS = ["alice", "bob", "*", "system:serviceaccount:ns1:sa1", "system:serviceaccount:a:b:c"];
const GROUPS = ["g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9", "*"];
const NAMESPACES = ["ns1", "ns2", "kube-system", "a", "a:b", ""];
const SA_NAMES = ["sa1", "sa2", "b:c", "c", "*", ""];
const VERBS = ["get", "list", "create", "*"];
const API_GROUPS = ["", "apps", "*"];
const RESOURCES = ["pods", "pods/status", "nodes", "leases", "*"];
const URLS = [
  "/healthz",
  "/healthz/*",
  "/api",
  "/api/*",
  "/apis/*",
  "/",
  "*",
  "/a/b",
  "/a/b/*",
  "/a*",
];
const PATHS = ["/healthz", "/healthz/etcd", "/api", "/api/v1", "/apis/apps/v1", "/", "", "/a/b"]
  .concat(["/a/b/c", "/ab", "/a/", "/x", "/*"]);

/** A list that is sometimes exactly `["*"]` and otherwise literals (`*` among others is literal). */
const strings = (values: string[]): fc.Arbitrary<string[]> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(["*"]).map((all) => [...all]) },
    { weight: 4, arbitrary: fc.uniqueArray(fc.constantFrom(...values), { maxLength: 3 }) },
  );

/**
 * Subjects. `broad` favours subjects most users have (`*`, system:authenticated),
 * so that many schemas remain candidates by subject and the namespace,
 * resource, verb or path decides; otherwise subjects are spread over many names.
 */
const subject = (broad: boolean): fc.Arbitrary<Subject> =>
  fc.oneof(
    fc.constantFrom(...USERS).map((name): Subject => ({ kind: "User", user: { name } })),
    {
      weight: broad ? 4 : 1,
      arbitrary: fc.constantFrom("*", "system:authenticated").map((name): Subject => ({
        kind: "Group",
        group: { name },
      })),
    },
    {
      weight: broad ? 1 : 4,
      arbitrary: fc.constantFrom(...GROUPS).map((name): Subject => ({
        kind: "Group",
        group: { name },
      })),
    },
    fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...SA_NAMES)).map((
      [namespace, name],
    ): Subject => ({ kind: "ServiceAccount", serviceAccount: { namespace, name } })),
    // Malformed subjects: they match nobody, except a `*` account without a
    // namespace, whose prefix every user name starts with.
    fc.constant({ kind: "User" } as Subject),
    fc.constant({ kind: "Robot", group: { name: "*" } } as unknown as Subject),
    fc.constantFrom("*", "sa1").map((name) =>
      ({ kind: "ServiceAccount", serviceAccount: { name } }) as unknown as Subject
    ),
  );

const resourceRule: fc.Arbitrary<ResourcePolicyRule> = fc.record({
  verbs: strings(VERBS),
  apiGroups: strings(API_GROUPS),
  resources: strings(RESOURCES),
  clusterScope: fc.boolean(),
  namespaces: strings(NAMESPACES.filter((n) => n !== "")),
});

const nonResourceRule: fc.Arbitrary<NonResourcePolicyRule> = fc.record({
  verbs: strings(VERBS),
  nonResourceURLs: fc.oneof(
    fc.constant("*").map((all) => [all]),
    fc.uniqueArray(fc.constantFrom(...URLS), { minLength: 1, maxLength: 3 }),
  ),
});

const rules = (broad: boolean): fc.Arbitrary<PolicyRulesWithSubjects> =>
  fc.record({
    subjects: fc.array(subject(broad), { minLength: 1, maxLength: 4 }),
    resourceRules: fc.array(resourceRule, { maxLength: 3 }),
    nonResourceRules: fc.array(nonResourceRule, { maxLength: 2 }),
  }, { requiredKeys: ["subjects"] });

const LEVELS = ["exempt", "catch-all", "queued", "single", "rejected", "missing"];

interface SchemaSpec {
  precedence: number;
  level: string;
  distinguisher: "ByUser" | "ByNamespace" | undefined;
  rules: PolicyRulesWithSubjects[];
}

const schemaSpec = (broad: boolean): fc.Arbitrary<SchemaSpec> =>
  fc.record({
    precedence: fc.integer({ min: 1, max: 12 }),
    level: fc.constantFrom(...LEVELS),
    distinguisher: fc.constantFrom(undefined, "ByUser" as const, "ByNamespace" as const),
    rules: fc.array(rules(broad), { maxLength: 3 }),
  });

function limited(name: string, queues: number | null): PriorityLevelConfiguration {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name },
    spec: {
      type: "Limited",
      limited: {
        limitResponse: queues === null
          ? { type: "Reject" }
          : { type: "Queue", queuing: { queues, handSize: 1, queueLengthLimit: 10 } },
      },
    },
  };
}

function configuration(specs: SchemaSpec[]): EffectiveConfiguration {
  const flowSchemas = specs.map((s, i): FlowSchema => {
    const fs: FlowSchema = {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "FlowSchema",
      // Names in an order unrelated to position, so that ties in precedence go by name.
      metadata: { name: `fs-${(i * 7919) % 1000}` },
      spec: {
        priorityLevelConfiguration: { name: s.level },
        matchingPrecedence: s.precedence,
        rules: s.rules,
      },
    };
    if (s.distinguisher !== undefined) fs.spec.distinguisherMethod = { type: s.distinguisher };
    return fs;
  });
  return effectiveConfiguration({
    flowSchemas,
    priorityLevels: [limited("queued", 8), limited("single", 1), limited("rejected", null)],
  });
}

const user: fc.Arbitrary<UserInfo> = fc.record({
  name: fc.constantFrom(
    ...USERS.filter((u) => u !== "*"),
    "carol",
    "system:serviceaccount:ns1:sa2",
    "system:serviceaccount:ns1:",
    "system:serviceaccount:kube-system:x",
    "system:serviceaccount:a:b",
    "system:serviceaccount::sa1",
    "*",
  ),
  // Up to 14 groups (repeats allowed): past 8 non-empty lists the walk goes through a bitset.
  groups: fc.array(fc.constantFrom(...GROUPS, "system:authenticated"), { maxLength: 14 }),
});

const request: fc.Arbitrary<RequestInfo> = fc.oneof(
  fc.record({
    verb: fc.constantFrom(...VERBS, "watch"),
    apiGroup: fc.constantFrom(...API_GROUPS),
    namespace: fc.constantFrom(...NAMESPACES),
    resource: fc.constantFrom("pods", "nodes", "leases", "*"),
    subresource: fc.constantFrom("", "", "status", "log"),
  }).map((r): RequestInfo => ({
    isResourceRequest: true,
    path: "/api/v1/x",
    apiPrefix: "api",
    apiVersion: "v1",
    name: "",
    parts: [],
    ...r,
  })),
  fc.record({ verb: fc.constantFrom(...VERBS, "post"), path: fc.constantFrom(...PATHS) }).map((
    r,
  ): RequestInfo => ({
    isResourceRequest: false,
    apiPrefix: "",
    apiGroup: "",
    apiVersion: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
    parts: [],
    ...r,
  })),
);

function agreesWithTheWalk(broad: boolean) {
  fc.assert(
    fc.property(
      // Up to 80 schemas, so that walks through the bitset cross word boundaries.
      fc.array(schemaSpec(broad), { maxLength: 80, size: "max" }),
      fc.array(fc.tuple(user, request), { minLength: 1, maxLength: 40 }),
      (specs, requests) => {
        const effective = configuration(specs);
        const classifier = new Classifier(effective);
        for (const [u, ri] of requests) {
          const want = linearClassify(effective, u, ri);
          const got = classifier.classify(u, ri);
          assert.equal(got.flowSchema, want.schema);
          assert.equal(got.priorityLevel.name, want.schema.priorityLevel);
          assert.deepEqual(got.match, want.match);
          if (got.flowHash !== null) {
            assert.ok(Object.isFrozen(got.flowHash));
            assert.deepEqual(got.flowHash, flowHash(got.flowSchema.name, got.distinguisher));
          }
        }
      },
    ),
    { numRuns: 300 },
  );
}

Deno.test("the indexed classifier picks what a walk over every FlowSchema picks (varied subjects)", () => {
  agreesWithTheWalk(false);
});

Deno.test("the indexed classifier picks what a walk over every FlowSchema picks (shared subjects)", () => {
  agreesWithTheWalk(true);
});

/** A request like `ri` but for one attribute matching may read, changed to `value`. */
function nearRequest(ri: RequestInfo, field: number, value: string): RequestInfo {
  const out = { ...ri, parts: [...ri.parts] };
  switch (field) {
    case 0:
      out.verb = value;
      break;
    case 1:
      out.path = value;
      break;
    case 2:
      out.apiGroup = value;
      break;
    case 3:
      out.resource = value;
      break;
    case 4:
      out.subresource = value;
      break;
    case 5:
      out.namespace = value;
      break;
    default:
      out.isResourceRequest = !ri.isResourceRequest;
  }
  return out;
}

Deno.test("the classifier's last classification: requests alike in a row, and near ones, classify as a walk does", () => {
  fc.assert(
    fc.property(
      fc.array(schemaSpec(true), { maxLength: 40, size: "max" }),
      fc.array(fc.tuple(user, request), { minLength: 1, maxLength: 4 }),
      // Each step: which of the pool, and whether to change one attribute of it, or its groups.
      fc.array(
        fc.tuple(
          fc.nat(),
          fc.option(
            fc.tuple(
              fc.integer({ min: 0, max: 9 }),
              fc.constantFrom(...VERBS, ...PATHS, ...NAMESPACES, ...RESOURCES, ...GROUPS, "status"),
            ),
          ),
        ),
        { minLength: 1, maxLength: 40 },
      ),
      (specs, pool, steps) => {
        const effective = configuration(specs);
        const classifier = new Classifier(effective);
        for (const [pick, change] of steps) {
          const [u0, ri0] = pool[pick % pool.length]!;
          // A copy each time: equal values in new objects, as a server's next request brings.
          let u: UserInfo = { name: u0.name, groups: [...u0.groups] };
          let ri: RequestInfo = { ...ri0, parts: [...ri0.parts] };
          if (change !== null) {
            const [field, value] = change;
            if (field === 7) u = { name: value, groups: u.groups };
            else if (field === 8) u = { name: u.name, groups: [...u.groups.slice(1), value] };
            else if (field === 9) u = { name: u.name, groups: u.groups.slice(0, -1) };
            else ri = nearRequest(ri, field, value);
          }
          const want = linearClassify(effective, u, ri);
          const got = classifier.classify(u, ri);
          assert.equal(got.flowSchema, want.schema);
          assert.equal(got.priorityLevel.name, want.schema.priorityLevel);
          assert.deepEqual(got.match, want.match);
          const level = got.priorityLevel;
          const hashed = level.type === "Limited" && (level.queuing?.queues ?? 0) > 1;
          const method = want.schema.distinguisher;
          const distinguisher = !hashed
            ? ""
            : method === "ByUser"
            ? u.name
            : method === "ByNamespace"
            ? ri.namespace
            : "";
          assert.equal(got.distinguisher, distinguisher);
          assert.deepEqual(
            got.flowHash,
            hashed ? flowHash(got.flowSchema.name, distinguisher) : null,
          );
        }
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("the classifier's last classification: what a caller changes afterwards is not remembered", () => {
  const effective = configuration([
    {
      precedence: 1,
      level: "queued",
      distinguisher: "ByUser",
      rules: [{
        subjects: [{ kind: "Group", group: { name: "g1" } }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      }],
    },
  ]);
  const classifier = new Classifier(effective);
  const ri = describeRequest("GET", "/x");
  assert.equal(ri.isResourceRequest, false);
  const u: UserInfo = { name: "alice", groups: ["g1"] };
  const first = classifier.classify(u, ri);
  assert.equal(first.priorityLevel.name, "queued");
  // The caller changes the classification it got, and the user's groups in place.
  first.distinguisher = "mallory";
  first.match!.rule = 7;
  u.groups[0] = "g2";
  const second = classifier.classify(u, ri);
  assert.equal(second.flowSchema.name, "catch-all");
  u.groups[0] = "g1";
  const third = classifier.classify(u, ri);
  assert.equal(third.flowSchema, first.flowSchema);
  const fourth = classifier.classify({ name: "alice", groups: ["g1"] }, { ...ri });
  assert.equal(fourth.distinguisher, "alice");
  assert.deepEqual(fourth.match, { rule: 0, subject: 0, kind: "nonResourceRules", index: 0 });
  assert.notEqual(fourth, third);
  assert.notEqual(fourth.match, third.match);
});
