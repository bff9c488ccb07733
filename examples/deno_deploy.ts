/**
 * APF on Deno Deploy: the whole app is one file. The isolates of the
 * deployment share each level's seats through Deno KV: each isolate is a
 * budget holder that decides its requests itself, on its share of the
 * seats, and the shares follow the isolates' demand (one KV read and one
 * write per level per second and isolate, none per request). An isolate
 * that goes away gives its seats back about 11 s after the others last saw
 * its line change (its 5 s lease, as long again for its last requests to
 * end, and a tenth of both for clocks that run at slightly different rates).
 * Configuration is inline, so nothing is read from disk.
 *
 *   deno run --unstable-kv --allow-net --allow-env=LOG_TOKENS,LOG_STREAM,PORT,APF_KV_PATH examples/deno_deploy.ts   # locally
 *   npx -y deno@2 run --unstable-kv --allow-net --allow-env=LOG_TOKENS,LOG_STREAM,PORT,APF_KV_PATH examples/deno_deploy.ts   # with only Node and npm
 *   deployctl deploy --entrypoint=examples/deno_deploy.ts
 *
 * Two local processes sharing the seats through one KV file:
 *
 *   PORT=8001 APF_KV_PATH=/tmp/apf.sqlite deno run --unstable-kv --allow-net --allow-read=/tmp --allow-write=/tmp --allow-env=LOG_TOKENS,LOG_STREAM,PORT,APF_KV_PATH examples/deno_deploy.ts
 *   PORT=8002 APF_KV_PATH=/tmp/apf.sqlite deno run --unstable-kv --allow-net --allow-read=/tmp --allow-write=/tmp --allow-env=LOG_TOKENS,LOG_STREAM,PORT,APF_KV_PATH examples/deno_deploy.ts
 *
 * or, with only Node and npm:
 *
 *   PORT=8001 APF_KV_PATH=/tmp/apf.sqlite npx -y deno@2 run --unstable-kv --allow-net --allow-read=/tmp --allow-write=/tmp --allow-env=LOG_TOKENS,LOG_STREAM,PORT,APF_KV_PATH examples/deno_deploy.ts
 *   PORT=8002 APF_KV_PATH=/tmp/apf.sqlite npx -y deno@2 run --unstable-kv --allow-net --allow-read=/tmp --allow-write=/tmp --allow-env=LOG_TOKENS,LOG_STREAM,PORT,APF_KV_PATH examples/deno_deploy.ts
 *
 * (The YAML parser reads two environment variables; Deno Deploy grants them,
 * and sets neither `PORT` nor `APF_KV_PATH`: there, `Deno.openKv()` is the
 * deployment's KV. Locally, without `APF_KV_PATH` it is a file in Deno's
 * cache.)
 *
 * @module
 */

import { Hono } from "hono";
import { BudgetHolder, resolveConfiguration } from "@apf/edge";
import { apf, type ApfEnv } from "@apf/edge/hono";
import { KvBudgetStore } from "@apf/edge/deno";

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

// One effective configuration for both: the holder holds budgets for the levels apf() classifies into.
const configuration = resolveConfiguration(config, {
  mandatoryOnly: true,
  serverConcurrencyLimit: 50,
});
// Locally, APF_KV_PATH names the KV file the processes share (Deno Deploy sets none). Processes
// started together may find the new file locked for a moment: KvBudgetStore.openKv tries again.
const store = new KvBudgetStore(await KvBudgetStore.openKv(Deno.env.get("APF_KV_PATH")));
const coordinator = new BudgetHolder(configuration, { store });

const app = new Hono<ApfEnv>();
app.use(apf({
  config: configuration,
  coordinator,
  // Deno Deploy puts the client's address in X-Forwarded-For; one flow per visitor.
  identify: (request) => {
    const visitor = request.headers.get("X-Forwarded-For")?.split(",")[0]?.trim();
    return visitor ? { name: `ip:${visitor}`, groups: ["system:unauthenticated"] } : undefined;
  },
}));
app.get("/", (c) => c.text(`Hello from ${c.get("apf").classification.priorityLevel.name}!\n`));

Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000) }, app.fetch);
