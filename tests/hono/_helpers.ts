/** Helpers for the Hono middleware tests. */

import type { Hono } from "hono";
import type { ApfEnv } from "../../src/hono/mod.ts";
import {
  type EffectiveConfiguration,
  effectiveConfiguration,
  loadConfiguration,
} from "../../mod.ts";
import { mergeWithBootstrap } from "../../src/config/mod.ts";

/**
 * Mandatory levels plus `tiny` (one seat, one queue of `queueLengthLimit`)
 * for group `dev`, ByUser; ServerCL 2 gives `tiny` and `catch-all` one seat each.
 */
export function tinyConfig(queueLengthLimit = 0): EffectiveConfiguration {
  const user = loadConfiguration({
    manifests: [{
      name: "tiny.yaml",
      text: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: tiny, uid: tiny-level-uid }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 5
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse:
      type: Queue
      queuing: { queues: 1, handSize: 1, queueLengthLimit: ${
        queueLengthLimit === 0 ? 1 : queueLengthLimit
      } }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: devs, uid: devs-schema-uid }
spec:
  priorityLevelConfiguration: { name: tiny }
  matchingPrecedence: 500
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects: [{ kind: Group, group: { name: dev } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
      resourceRules:
        - verbs: ["*"]
          apiGroups: ["*"]
          resources: ["*"]
          namespaces: ["*"]
          clusterScope: true
`,
    }],
  });
  const eff = effectiveConfiguration(
    mergeWithBootstrap(user, { mandatoryOnly: true }).configuration,
    { serverConcurrencyLimit: 2 },
  );
  if (queueLengthLimit === 0) {
    // Validation defaults 0 to 50; a level that rejects once its one seat is taken needs 0.
    eff.priorityLevels.find((pl) => pl.name === "tiny")!.queuing!.queueLengthLimit = 0;
  }
  return eff;
}

/** A promise with its resolver, to hold a handler open. */
export function gate(): { promise: Promise<void>; open: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { promise, open: () => resolve() };
}

/** Adds `GET /slow`, which answers only once the returned gate opens. */
export function slowRoute(app: Hono<ApfEnv>): { promise: Promise<void>; open: () => void } {
  const held = gate();
  app.get("/slow", async (c) => {
    await held.promise;
    return c.text("done");
  });
  return held;
}
