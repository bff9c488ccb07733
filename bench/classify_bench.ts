/**
 * Classification benchmarks against the built-in configuration:
 * a node heartbeat, a service-account list, an anonymous health probe and a
 * user in a custom namespace, each a warm flow, repeated (each request like
 * the last one) and the four in turn (each unlike the last). Run with
 * `deno task bench`.
 *
 * With `--v8-flags=--expose-gc` (the bench task sets it) the file also prints
 * the heap growth over 200,000 repeated classifications: warm flows must not
 * keep allocating memory that survives a collection.
 */

import {
  bootstrapConfiguration,
  Classifier,
  effectiveConfiguration,
  normalizeUser,
  RequestInfoResolver,
} from "../mod.ts";

const classifier = new Classifier(effectiveConfiguration(bootstrapConfiguration()));
const resolver = new RequestInfoResolver();

const cases = {
  "node heartbeat (PUT lease, system:node:n1)": {
    user: normalizeUser({ name: "system:node:n1", groups: ["system:nodes"] }),
    method: "PUT",
    path: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
    query: "",
  },
  "service-account list (GET pods, default:builder)": {
    user: normalizeUser({
      name: "system:serviceaccount:default:builder",
      groups: ["system:serviceaccounts", "system:serviceaccounts:default"],
    }),
    method: "GET",
    path: "/api/v1/namespaces/default/pods",
    query: "limit=500",
  },
  "anonymous health probe (GET /healthz)": {
    user: normalizeUser(undefined),
    method: "GET",
    path: "/healthz",
    query: "",
  },
  "user in a custom namespace (GET configmaps, alice)": {
    user: normalizeUser({ name: "alice", groups: ["team-a"] }),
    method: "GET",
    path: "/api/v1/namespaces/team-a/configmaps/settings",
    query: "",
  },
};

for (const [name, c] of Object.entries(cases)) {
  const ri = resolver.describe(c.method, c.path, c.query);
  classifier.classify(c.user, ri); // warm the flow
  Deno.bench(`classify: ${name}`, { group: "classify" }, () => {
    classifier.classify(c.user, ri);
  });
  Deno.bench(`describe + classify: ${name}`, { group: "describe+classify" }, () => {
    classifier.classify(c.user, resolver.describe(c.method, c.path, c.query));
  });
}

// Each request unlike the one before: the classifier's last classification never applies.
const inTurn = Object.values(cases).map((c) => ({
  user: c.user,
  ri: resolver.describe(c.method, c.path, c.query),
}));
let turn = 0;
Deno.bench("classify: the four in turn, each unlike the last", { group: "classify" }, () => {
  const c = inTurn[turn++ & 3]!;
  classifier.classify(c.user, c.ri);
});

const gc = (globalThis as { gc?: () => void }).gc;
if (gc !== undefined) {
  const all = Object.values(cases).map((c) => ({
    user: c.user,
    ri: resolver.describe(c.method, c.path, c.query),
  }));
  const run = (n: number) => {
    for (let i = 0; i < n; i++) {
      const c = all[i % all.length]!;
      classifier.classify(c.user, c.ri);
    }
  };
  run(50_000);
  gc();
  const before = Deno.memoryUsage().heapUsed;
  run(200_000);
  gc();
  const after = Deno.memoryUsage().heapUsed;
  console.log(`heap growth after 200,000 warm classifications: ${after - before} bytes`);
}
