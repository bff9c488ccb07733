/**
 * The built-in configuration of Kubernetes'
 * `pkg/apis/flowcontrol/bootstrap/default.go` (`docs/semantics.md` §8): the
 * mandatory objects (`exempt`, `catch-all`) every server imagines when they
 * are missing, and the suggested
 * objects a kube-apiserver creates. All carry `apf.kubernetes.io/autoupdate-spec: "true"`.
 *
 * Every call returns fresh objects, so callers may change what they get.
 *
 * @module
 */

import { AUTO_UPDATE_ANNOTATION, CATCH_ALL, EXEMPT } from "./constants.ts";
import {
  FLOWCONTROL_V1,
  type FlowControlConfiguration,
  type FlowDistinguisherMethodType,
  type FlowSchema,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type PriorityLevelConfigurationSpec,
  type Subject,
} from "./types.ts";

const MASTERS = "system:masters";
const NODES = "system:nodes";
const AUTHENTICATED = "system:authenticated";
const UNAUTHENTICATED = "system:unauthenticated";
const CONTROLLER_MANAGER = "system:kube-controller-manager";
const SCHEDULER = "system:kube-scheduler";
const SERVICE_ACCOUNTS = "system:serviceaccounts";
const KUBE_SYSTEM = "kube-system";
const COORDINATION = "coordination.k8s.io";

const group = (name: string): Subject => ({ kind: "Group", group: { name } });
const user = (name: string): Subject => ({ kind: "User", user: { name } });
const serviceAccount = (namespace: string, name: string): Subject => ({
  kind: "ServiceAccount",
  serviceAccount: { namespace, name },
});

/** One rule set matching every request of `subjects`. */
function everything(subjects: Subject[]): PolicyRulesWithSubjects {
  return {
    subjects,
    resourceRules: [{
      verbs: ["*"],
      apiGroups: ["*"],
      resources: ["*"],
      clusterScope: true,
      namespaces: ["*"],
    }],
    nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
  };
}

function metadata(name: string) {
  return { name, annotations: { [AUTO_UPDATE_ANNOTATION]: "true" } };
}

function flowSchema(
  name: string,
  level: string,
  precedence: number,
  distinguisher: FlowDistinguisherMethodType | undefined,
  rules: PolicyRulesWithSubjects,
): FlowSchema {
  const fs: FlowSchema = {
    apiVersion: FLOWCONTROL_V1,
    kind: "FlowSchema",
    metadata: metadata(name),
    spec: {
      priorityLevelConfiguration: { name: level },
      matchingPrecedence: precedence,
      rules: [rules],
    },
  };
  if (distinguisher !== undefined) fs.spec.distinguisherMethod = { type: distinguisher };
  return fs;
}

function level(name: string, spec: PriorityLevelConfigurationSpec): PriorityLevelConfiguration {
  return {
    apiVersion: FLOWCONTROL_V1,
    kind: "PriorityLevelConfiguration",
    metadata: metadata(name),
    spec,
  };
}

function queuing(
  name: string,
  shares: number,
  lendablePercent: number,
  queues: number,
  handSize: number,
): PriorityLevelConfiguration {
  return level(name, {
    type: "Limited",
    limited: {
      nominalConcurrencyShares: shares,
      lendablePercent,
      limitResponse: { type: "Queue", queuing: { queues, handSize, queueLengthLimit: 50 } },
    },
  });
}

/** The mandatory PriorityLevelConfigurations: `exempt` and `catch-all`. */
export function mandatoryPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    level(EXEMPT, { type: "Exempt", exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
    level(CATCH_ALL, {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: 5,
        lendablePercent: 0,
        limitResponse: { type: "Reject" },
      },
    }),
  ];
}

/** The mandatory FlowSchemas: `exempt` (precedence 1) and `catch-all` (10000). */
export function mandatoryFlowSchemas(): FlowSchema[] {
  return [
    flowSchema(EXEMPT, EXEMPT, 1, undefined, everything([group(MASTERS)])),
    flowSchema(
      CATCH_ALL,
      CATCH_ALL,
      10000,
      "ByUser",
      everything([group(UNAUTHENTICATED), group(AUTHENTICATED)]),
    ),
  ];
}

/** The suggested PriorityLevelConfigurations (`docs/semantics.md` §8.1). */
export function suggestedPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    queuing("system", 30, 33, 64, 6),
    queuing("node-high", 40, 25, 64, 6),
    queuing("leader-election", 10, 0, 16, 4),
    queuing("workload-high", 40, 50, 128, 6),
    queuing("workload-low", 100, 90, 128, 6),
    queuing("global-default", 20, 50, 128, 6),
  ];
}

/** The suggested FlowSchemas (`docs/semantics.md` §8.2). */
export function suggestedFlowSchemas(): FlowSchema[] {
  const everyone = [group(UNAUTHENTICATED), group(AUTHENTICATED)];
  const leaseVerbs = ["get", "create", "update"];
  return [
    flowSchema("probes", EXEMPT, 2, undefined, {
      subjects: everyone,
      nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz", "/readyz", "/livez"] }],
    }),
    flowSchema("system-leader-election", "leader-election", 100, "ByUser", {
      subjects: [user(CONTROLLER_MANAGER), user(SCHEDULER), serviceAccount(KUBE_SYSTEM, "*")],
      resourceRules: [{
        verbs: leaseVerbs,
        apiGroups: [COORDINATION],
        resources: ["leases"],
        clusterScope: false,
        namespaces: ["*"],
      }],
    }),
    flowSchema("system-node-high", "node-high", 400, "ByUser", {
      subjects: [group(NODES)],
      resourceRules: [
        {
          verbs: ["*"],
          apiGroups: [""],
          resources: ["nodes", "nodes/status"],
          clusterScope: true,
          namespaces: ["*"],
        },
        {
          verbs: ["*"],
          apiGroups: [COORDINATION],
          resources: ["leases"],
          clusterScope: false,
          namespaces: ["*"],
        },
      ],
    }),
    flowSchema("system-nodes", "system", 500, "ByUser", everything([group(NODES)])),
    flowSchema(
      "kube-controller-manager",
      "workload-high",
      800,
      "ByNamespace",
      everything([user(CONTROLLER_MANAGER)]),
    ),
    flowSchema(
      "kube-scheduler",
      "workload-high",
      800,
      "ByNamespace",
      everything([user(SCHEDULER)]),
    ),
    flowSchema(
      "kube-system-service-accounts",
      "workload-high",
      900,
      "ByNamespace",
      everything([serviceAccount(KUBE_SYSTEM, "*")]),
    ),
    flowSchema(
      "service-accounts",
      "workload-low",
      9000,
      "ByUser",
      everything([group(SERVICE_ACCOUNTS)]),
    ),
    flowSchema("global-default", "global-default", 9900, "ByUser", everything(everyone)),
  ];
}

/** The whole built-in configuration: mandatory plus suggested objects. */
export function bootstrapConfiguration(): FlowControlConfiguration {
  return {
    priorityLevels: [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()],
    flowSchemas: [...mandatoryFlowSchemas(), ...suggestedFlowSchemas()],
  };
}

/** Whether `name` is one of the mandatory object names (`exempt`, `catch-all`). */
export function isMandatoryName(name: string): boolean {
  return name === EXEMPT || name === CATCH_ALL;
}
