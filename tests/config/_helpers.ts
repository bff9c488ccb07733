/** Builders of manifest-shaped objects for the configuration tests. */

import { parseConfiguration } from "../../src/config/load.ts";

/** Any JSON-ish object. */
export type Obj = Record<string, unknown>;

/** A valid v1 FlowSchema; `spec` fields override the defaults given here. */
export function flowSchema(name: string, spec: Obj = {}, metadata: Obj = {}): Obj {
  return {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name, ...metadata },
    spec: {
      priorityLevelConfiguration: { name: "global-default" },
      matchingPrecedence: 500,
      rules: [{
        subjects: [{ kind: "Group", group: { name: "system:authenticated" } }],
        resourceRules: [{
          verbs: ["get"],
          apiGroups: [""],
          resources: ["pods"],
          namespaces: ["*"],
        }],
      }],
      ...spec,
    },
  };
}

/** A FlowSchema with one rule set, for rule-level tests. */
export function withRule(rule: Obj): Obj {
  return flowSchema("fs", { rules: [rule] });
}

/** A valid queuing Limited level; `limited` fields override. */
export function limitedLevel(
  name: string,
  limited: Obj = {},
  apiVersion = "v1",
  metadata: Obj = {},
): Obj {
  return {
    apiVersion: `flowcontrol.apiserver.k8s.io/${apiVersion}`,
    kind: "PriorityLevelConfiguration",
    metadata: { name, ...metadata },
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: 10,
        limitResponse: {
          type: "Queue",
          queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 },
        },
        ...limited,
      },
    },
  };
}

/** A level with a given queuing configuration. */
export function queuingLevel(queuing: Obj): Obj {
  return limitedLevel("pl", { limitResponse: { type: "Queue", queuing } });
}

/** Errors of a configuration made of `objects` (empty when valid). */
export function errorsOf(...objects: Obj[]): string[] {
  const result = parseConfiguration({ objects });
  return result.ok ? [] : result.errors;
}
