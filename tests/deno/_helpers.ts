/** Helpers of the gateway tests: a test upstream on loopback, sleeps, configurations. */

import assert from "node:assert/strict";
import {
  type EffectiveConfiguration,
  effectiveConfiguration,
  loadConfiguration,
  systemClock,
} from "../../mod.ts";
import { mergeWithBootstrap } from "../../src/config/mod.ts";

/** Resolves after `ms` on the system clock. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => systemClock.setTimer(ms, resolve));
}

/** A test upstream on 127.0.0.1 that counts its concurrency. */
export interface TestUpstream {
  url: string;
  /** Requests being handled now. */
  readonly active: number;
  /** The most handled at once. */
  readonly maxActive: number;
  /** Requests handled, ever. */
  readonly handled: number;
  /** Every request received, in order. */
  readonly received: Request[];
  close(): Promise<void>;
}

/**
 * Starts an upstream whose handler is `handle` (default: sleeps `sleepMs`, then answers
 * `ok <path>`), counting how many requests it handles at once.
 */
export function testUpstream(
  options: { sleepMs?: number; handle?: (req: Request) => Response | Promise<Response> } = {},
): TestUpstream {
  let active = 0, maxActive = 0, handled = 0;
  const received: Request[] = [];
  const handle = options.handle ?? (async (req: Request) => {
    await sleep(options.sleepMs ?? 0);
    return new Response(`ok ${new URL(req.url).pathname}`);
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    received.push(req);
    active++;
    maxActive = Math.max(maxActive, active);
    try {
      return await handle(req);
    } finally {
      active--;
      handled++;
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
    get handled() {
      return handled;
    },
    received,
    close: () => server.shutdown(),
  };
}

/** A port on 127.0.0.1 where nobody listens (bound, then closed). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * The mandatory objects plus `manifest`, at `serverConcurrencyLimit`: small
 * levels whose limits are easy to reason about.
 */
export function smallConfig(
  manifest: string,
  serverConcurrencyLimit: number,
): EffectiveConfiguration {
  const user = loadConfiguration({ manifests: [{ name: "test", text: manifest }] });
  const merged = mergeWithBootstrap(user, { mandatoryOnly: true }).configuration;
  return effectiveConfiguration(merged, { serverConcurrencyLimit });
}

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

/** Percentile `p` (0..1) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
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
