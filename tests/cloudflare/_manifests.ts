/** Small APF manifests for the Cloudflare tests. */

/** Options of {@linkcode queuingLevel}. */
export interface QueuingLevelOptions {
  shares?: number;
  lendablePercent?: number;
  queues?: number;
  handSize?: number;
  queueLengthLimit?: number;
}

/** A Limited, queuing PriorityLevelConfiguration (uid `<name>-uid`). */
export function queuingLevel(name: string, options: QueuingLevelOptions = {}): string {
  return `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: ${name}, uid: ${name}-uid }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: ${options.shares ?? 50}
    lendablePercent: ${options.lendablePercent ?? 0}
    limitResponse:
      type: Queue
      queuing: { queues: ${options.queues ?? 8}, handSize: ${
    options.handSize ?? 2
  }, queueLengthLimit: ${options.queueLengthLimit ?? 5} }
---`;
}

/** A FlowSchema sending `group` to level `name`, one flow per user. */
export function byUserSchema(name: string, precedence: number, group: string): string {
  return `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: ${name} }
spec:
  priorityLevelConfiguration: { name: ${name} }
  matchingPrecedence: ${precedence}
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects: [{ kind: Group, group: { name: "${group}" } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
---`;
}
