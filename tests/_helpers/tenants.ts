/**
 * A level `tenants` with one flow per user, as a manifest, and a flood of
 * one user's requests against a server that serves it.
 */

import assert from "node:assert/strict";
import { sleep } from "./real_time.ts";

/**
 * A level `tenants` (`shares` nominal shares, no lending or borrowing)
 * with a FlowSchema sending every user to it, one flow per user.
 */
export function tenantsManifest(
  options: {
    shares: number;
    queues?: number;
    handSize?: number;
    queueLengthLimit?: number;
    reject?: boolean;
  },
): string {
  const limitResponse = options.reject === true ? `{ type: Reject }` : `
      type: Queue
      queuing: { queues: ${options.queues ?? 64}, handSize: ${
    options.handSize ?? 4
  }, queueLengthLimit: ${options.queueLengthLimit ?? 4} }`;
  return `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: tenants, uid: tenants-uid }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: ${options.shares}
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: ${limitResponse}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: tenants, uid: tenants-fs-uid }
spec:
  priorityLevelConfiguration: { name: tenants }
  matchingPrecedence: 1000
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects:
        - { kind: Group, group: { name: system:authenticated } }
        - { kind: Group, group: { name: system:unauthenticated } }
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
      resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true }]
`;
}

/** What {@linkcode flood} did, and how to stop it. */
export interface Flood {
  /** Requests served (200) and refused (429 with Retry-After). */
  readonly served: number;
  readonly rejected: number;
  /** Stops the loops and waits for their last requests. */
  stop(): Promise<void>;
}

/**
 * `loops` closed loops of user `user` against `url` (level `tenants` of
 * {@linkcode tenantsManifest}): each 200 counts as served, each 429 (with
 * Retry-After) as rejected and pauses the loop 20 ms.
 */
export function flood(url: string, user: string, loops = 12): Flood {
  let running = true;
  const counts = { served: 0, rejected: 0 };
  const all = Array.from({ length: loops }, async () => {
    while (running) {
      const res = await fetch(url, { headers: { "X-Remote-User": user } });
      await res.body?.cancel();
      if (res.status === 429) {
        counts.rejected++;
        assert.ok(Number(res.headers.get("Retry-After")) >= 1);
        await sleep(20);
      } else {
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("X-Kubernetes-PF-PriorityLevel-UID"), "tenants-uid");
        counts.served++;
      }
    }
  });
  return {
    get served() {
      return counts.served;
    },
    get rejected() {
      return counts.rejected;
    },
    async stop() {
      running = false;
      await Promise.all(all);
    },
  };
}
