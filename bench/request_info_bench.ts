/**
 * RequestInfo benchmarks: describe() on warm resolvers, for the request shapes
 * an API server sees most (target: under 1 µs each). Run with
 * `deno bench bench/request_info_bench.ts`.
 */

import { type RequestInfo, RequestInfoResolver } from "../src/classify/request_info.ts";

const kubernetes = new RequestInfoResolver();
const shop = new RequestInfoResolver({
  routes: [
    { pattern: "/v1/health", resource: "health" },
    {
      pattern: "/v1/tenants/:tenant/orders/:id?",
      resource: "orders",
      apiGroup: "shop",
      apiVersion: "v1",
      namespaceParam: "tenant",
      nameParam: "id",
    },
  ],
});

// Keeps results observable so the work cannot be optimised away.
let sink: RequestInfo | undefined;

Deno.bench("GET /api/v1/namespaces/default/pods (list)", { group: "describe" }, () => {
  sink = kubernetes.describe("GET", "/api/v1/namespaces/default/pods");
});

Deno.bench(
  "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1",
  { group: "describe", baseline: true },
  () => {
    sink = kubernetes.describe(
      "GET",
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1",
    );
  },
);

Deno.bench("GET /healthz (non-resource)", { group: "describe" }, () => {
  sink = kubernetes.describe("GET", "/healthz");
});

Deno.bench("PUT /api/v1/nodes/n1/status", { group: "describe" }, () => {
  sink = kubernetes.describe("PUT", "/api/v1/nodes/n1/status");
});

Deno.bench("GET /v1/tenants/acme/orders/42 (second route)", { group: "describe" }, () => {
  sink = shop.describe("GET", "/v1/tenants/acme/orders/42");
});

Deno.bench(
  "GET /api/v1/pods?watch=1&fieldSelector=spec.nodeName=n1 (watch with selector)",
  { group: "describe" },
  () => {
    sink = kubernetes.describe("GET", "/api/v1/pods", "watch=1&fieldSelector=spec.nodeName%3Dn1");
  },
);

globalThis.addEventListener("unload", () => {
  if (sink === undefined) throw new Error("Cannot report: no benchmark ran");
});
