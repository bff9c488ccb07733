/**
 * A configuration with many FlowSchemas, for tests and benchmarks: the
 * built-in objects plus `count` per-tenant schemas. Tenant `i` matches the
 * group `tenant-i` (even `i`) or the user `owner-i` (odd `i`), on every
 * request, into a queuing level with flows by user. Tenants sit between the
 * built-in system schemas (≤ 900) and `service-accounts` (9000), in the order
 * of their numbers, so the last tenant is near the end of matching order
 * (only `service-accounts`, `global-default` and `catch-all` follow) and the
 * first tenant near the start.
 */

import {
  bootstrapConfiguration,
  type EffectiveConfiguration,
  effectiveConfiguration,
  type FlowSchema,
  type PriorityLevelConfiguration,
  type Subject,
} from "../../src/config/mod.ts";
import type { UserInfo } from "../../src/classify/identity.ts";

/** The name of tenant `i` (zero-padded, so names sort as numbers). */
export const tenantName = (i: number): string => `tenant-${String(i).padStart(5, "0")}`;

/** A user that tenant `i`'s schema matches (`n` tells users of one tenant apart). */
export function tenantUser(i: number, n = 0): UserInfo {
  return i % 2 === 0
    ? { name: `user-${n}-of-${tenantName(i)}`, groups: [tenantName(i), "system:authenticated"] }
    : { name: `owner-${i}`, groups: ["system:authenticated"] };
}

/** The built-in configuration plus `count` tenant FlowSchemas. */
export function tenantConfiguration(count: number): EffectiveConfiguration {
  const config = bootstrapConfiguration();
  const level: PriorityLevelConfiguration = {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name: "tenants" },
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: 30,
        limitResponse: {
          type: "Queue",
          queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 },
        },
      },
    },
  };
  const schemas = Array.from({ length: count }, (_, i): FlowSchema => {
    const subject: Subject = i % 2 === 0
      ? { kind: "Group", group: { name: tenantName(i) } }
      : { kind: "User", user: { name: `owner-${i}` } };
    return {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "FlowSchema",
      metadata: { name: tenantName(i) },
      spec: {
        priorityLevelConfiguration: { name: "tenants" },
        matchingPrecedence: 1000 + Math.floor((i * 7999) / Math.max(count, 1)),
        distinguisherMethod: { type: "ByUser" },
        rules: [{
          subjects: [subject],
          resourceRules: [{
            verbs: ["*"],
            apiGroups: ["*"],
            resources: ["*"],
            clusterScope: true,
            namespaces: ["*"],
          }],
          nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
        }],
      },
    };
  });
  return effectiveConfiguration({
    flowSchemas: [...config.flowSchemas, ...schemas],
    priorityLevels: [...config.priorityLevels, level],
  });
}
