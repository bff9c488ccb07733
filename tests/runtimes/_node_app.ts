/**
 * An app behind apf() that makes requests queue, for the Node run of
 * `node_test.ts`: bundled, then run by `node`, it prints what it saw as JSON.
 */

import { Hono } from "hono";
import { apf } from "../../src/hono/mod.ts";

const config = `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: one }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 100
    lendablePercent: 0
    limitResponse: { type: Queue, queuing: { queues: 1, handSize: 1, queueLengthLimit: 10 } }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: everyone }
spec:
  priorityLevelConfiguration: { name: one }
  matchingPrecedence: 100
  rules:
    - subjects: [{ kind: Group, group: { name: system:unauthenticated } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
`;

const limiter = apf({ config, mandatoryOnly: true, serverConcurrencyLimit: 2 });
let active = 0, maxActive = 0;
const app = new Hono().use(limiter).get("/work", async (c) => {
  active++;
  maxActive = Math.max(maxActive, active);
  await new Promise((r) => setTimeout(r, 20));
  active--;
  return c.text("done");
});
const statuses = await Promise.all(
  Array.from({ length: 6 }, async () => (await app.request("/work")).status),
);
const level = limiter.snapshot()!.levels.find((l) => l.name === "one")!;
limiter.close();
console.log(JSON.stringify({
  node: globalThis.process?.versions?.node,
  statuses,
  maxActive,
  limit: level.currentLimit,
  seatsInUse: level.queueSet.seatsInUse,
}));
