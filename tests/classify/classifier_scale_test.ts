/**
 * The indexed classifier against the plain walk (tests/classify/_linear_walk.ts)
 * on hand-made configurations: a thousand tenant FlowSchemas, and path
 * prefixes at the edge of what the index looks up.
 */

import assert from "node:assert/strict";
import { Classifier } from "../../src/classify/classifier.ts";
import type { UserInfo } from "../../src/classify/identity.ts";
import { describeRequest } from "../../src/classify/request_info.ts";
import {
  effectiveConfiguration,
  type FlowSchema,
  mandatoryPriorityLevels,
  type Subject,
} from "../../src/config/mod.ts";
import { linearClassify } from "./_linear_walk.ts";
import { tenantConfiguration, tenantName, tenantUser } from "./_tenants.ts";

Deno.test("1,000 tenant FlowSchemas: the index and the walk agree near the start and the end", () => {
  const effective = tenantConfiguration(1000);
  assert.equal(effective.flowSchemas.at(-4)!.name, tenantName(999));
  const classifier = new Classifier(effective);
  const users: UserInfo[] = [0, 1, 2, 500, 501, 998, 999].map((i) => tenantUser(i));
  users.push(
    { name: "system:serviceaccount:kube-system:x", groups: ["system:serviceaccounts"] },
    {
      name: "system:serviceaccount:t:x",
      groups: ["system:serviceaccounts", "system:authenticated"],
    },
    { name: "system:node:n1", groups: ["system:nodes", "system:authenticated"] },
    { name: "system:anonymous", groups: ["system:unauthenticated"] },
    { name: "ghost", groups: [] },
    { name: "owner-999", groups: [tenantName(0), tenantName(998)] },
  );
  const requests = [
    describeRequest("GET", "/api/v1/namespaces/t/pods"),
    describeRequest("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l"),
    describeRequest("GET", "/api/v1/nodes"),
    describeRequest("GET", "/healthz"),
    describeRequest("POST", "/x/y"),
  ];
  for (const u of users) {
    for (const ri of requests) {
      const want = linearClassify(effective, u, ri);
      const got = classifier.classify(u, ri);
      assert.equal(got.flowSchema.name, want.schema.name, `${u.name} ${ri.verb} ${ri.path}`);
      assert.deepEqual(got.match, want.match);
    }
  }
  assert.equal(
    classifier.classify(tenantUser(999), requests[0]!).flowSchema.name,
    tenantName(999),
  );
});

Deno.test("a path is looked up by every prefix, up to the longest one indexed", () => {
  const anyone: Subject = { kind: "Group", group: { name: "*" } };
  const schema = (name: string, urls: string[], precedence: number): FlowSchema => ({
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: "exempt" },
      matchingPrecedence: precedence,
      rules: [{ subjects: [anyone], nonResourceRules: [{ verbs: ["*"], nonResourceURLs: urls }] }],
    },
  });
  // Ten schemas for everyone, so that the path rather than the subject picks the candidates.
  const flowSchemas = Array.from({ length: 10 }, (_, i) => schema(`x-${i}`, ["/x"], 10 + i));
  flowSchemas.push(schema("deep", ["/a/b/*"], 50), schema("root", ["/*"], 60));
  const effective = effectiveConfiguration({
    flowSchemas,
    priorityLevels: mandatoryPriorityLevels(),
  });
  const classifier = new Classifier(effective);
  const anybody = { name: "u", groups: [] };
  for (const [path, want] of [["/a/b/c", "deep"], ["/a/b", "root"], ["/x/y", "x-0"]]) {
    const got = classifier.classify(anybody, describeRequest("GET", path!));
    assert.equal(got.flowSchema.name, want, path);
  }
});
