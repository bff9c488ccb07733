/**
 * The snippet of `docs/observing.md`, "Metrics and debug dumps": Kubernetes'
 * metrics, and the admin routes that serve them with the dumps. What it
 * takes as given comes from `_context.ts`.
 *
 *   APF_ADMIN_TOKEN=0123456789abcdef deno run --allow-env examples/library/metrics.ts
 *   APF_ADMIN_TOKEN=0123456789abcdef npx -y deno@2 run --allow-env examples/library/metrics.ts
 *
 * @module
 */

import { effective } from "./_context.ts";
import { EmbeddedCoordinator, FlowcontrolMetrics } from "@apf/edge";
import { apfAdminRoutes, bearerToken } from "@apf/edge/hono";

const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
  snapshot: () => coordinator.snapshot(),
});
const coordinator = new EmbeddedCoordinator(effective, { metrics });
metrics.expose(); // Prometheus text format 0.0.4
// GET /metrics and the three dumps, for any source with snapshot() and metrics:
const admin = apfAdminRoutes(
  { snapshot: (options) => coordinator.snapshot(options), metrics },
  { authorize: bearerToken(Deno.env.get("APF_ADMIN_TOKEN")) }, // throws when unset or short
);

console.log((await admin.request("/metrics")).status); // 403: no token
coordinator.close();
