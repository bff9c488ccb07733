/**
 * APF on Deno Deploy: the whole app is one file. Each isolate runs its own
 * embedded coordinator (seats are per isolate until a shared coordinator is
 * configured). Configuration is inline, so nothing is read from disk.
 *
 *   deno run --allow-net --allow-env=LOG_TOKENS,LOG_STREAM examples/deno_deploy.ts   # locally
 *   deployctl deploy --entrypoint=examples/deno_deploy.ts
 *
 * (The YAML parser reads two environment variables; Deno Deploy grants them.)
 *
 * @module
 */

import { Hono } from "hono";
import { apf, type ApfEnv } from "@apf/edge/hono";

const config = `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: visitors }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 100
    limitResponse:
      type: Queue
      queuing: { queues: 64, handSize: 6, queueLengthLimit: 20 }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: visitors }
spec:
  priorityLevelConfiguration: { name: visitors }
  matchingPrecedence: 1000
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects: [{ kind: Group, group: { name: system:unauthenticated } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
`;

const app = new Hono<ApfEnv>();
app.use(apf({
  config,
  mandatoryOnly: true,
  serverConcurrencyLimit: 50,
  // Deno Deploy puts the client's address in X-Forwarded-For; one flow per visitor.
  identify: (request) => {
    const visitor = request.headers.get("X-Forwarded-For")?.split(",")[0]?.trim();
    return visitor ? { name: `ip:${visitor}`, groups: ["system:unauthenticated"] } : undefined;
  },
}));
app.get("/", (c) => c.text(`Hello from ${c.get("apf").classification.priorityLevel.name}!\n`));

Deno.serve(app.fetch);
