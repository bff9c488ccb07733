/**
 * The flowcontrol `v1` API objects (`flowcontrol.apiserver.k8s.io/v1`), as
 * hand-written interfaces. Field names, optionality and meaning follow the
 * Kubernetes API types; `staging/src/k8s.io/api/flowcontrol/v1/types.go` is
 * the reference (`docs/semantics.md` §1.1).
 *
 * @module
 */

/** The API group and version of every object this package produces. */
export const FLOWCONTROL_V1 = "flowcontrol.apiserver.k8s.io/v1" as const;

/** The subset of Kubernetes `ObjectMeta` that flow control reads. */
export interface ObjectMeta {
  /** The object's name: a DNS-1123 subdomain. */
  name: string;
  /** Unique id; reported in the `X-Kubernetes-PF-*-UID` response headers. */
  uid?: string;
  /** Spec generation; used by the bootstrap auto-update rule. */
  generation?: number;
  /** Annotations, notably `apf.kubernetes.io/autoupdate-spec`. */
  annotations?: Record<string, string>;
  /** Labels; carried along, never interpreted. */
  labels?: Record<string, string>;
}

/** A user subject: matches one user name, or `*` for every user. */
export interface UserSubject {
  /** The user name, or `*`. */
  name: string;
}

/** A group subject: matches members of one group, or `*` for everyone. */
export interface GroupSubject {
  /** The group name, or `*`. */
  name: string;
}

/** A service-account subject: one account, or `*` for every account of a namespace. */
export interface ServiceAccountSubject {
  /** The namespace of the account (no wildcard). */
  namespace: string;
  /** The account name, or `*`. */
  name: string;
}

/** The kinds a subject can be. */
export type SubjectKind = "User" | "Group" | "ServiceAccount";

/** Who a rule applies to: a union keyed by `kind`. */
export interface Subject {
  /** Which of the members below is set. */
  kind: SubjectKind;
  /** Set iff `kind` is `User`. */
  user?: UserSubject;
  /** Set iff `kind` is `Group`. */
  group?: GroupSubject;
  /** Set iff `kind` is `ServiceAccount`. */
  serviceAccount?: ServiceAccountSubject;
}

/** Matches resource requests by verb, API group, resource and namespace. */
export interface ResourcePolicyRule {
  /** Verbs, or `["*"]`. */
  verbs: string[];
  /** API groups (`""` is the core group), or `["*"]`. */
  apiGroups: string[];
  /** Resources, `resource/subresource`, or `["*"]`. */
  resources: string[];
  /** Whether requests without a namespace match. */
  clusterScope?: boolean;
  /** Namespaces, or `["*"]` for every namespace (never a namespace-less request). */
  namespaces?: string[];
}

/** Matches non-resource requests by verb and URL path. */
export interface NonResourcePolicyRule {
  /** Verbs, or `["*"]`. */
  verbs: string[];
  /** Exact paths, `/prefix/*` forms, or `["*"]`. */
  nonResourceURLs: string[];
}

/** A set of rules that match when a subject matches and a rule matches. */
export interface PolicyRulesWithSubjects {
  /** At least one subject. */
  subjects: Subject[];
  /** Rules for resource requests. */
  resourceRules?: ResourcePolicyRule[];
  /** Rules for non-resource requests. */
  nonResourceRules?: NonResourcePolicyRule[];
}

/** How flows are told apart within a priority level. */
export type FlowDistinguisherMethodType = "ByUser" | "ByNamespace";

/** The flow distinguisher method of a FlowSchema. */
export interface FlowDistinguisherMethod {
  /** `ByUser` or `ByNamespace`. */
  type: FlowDistinguisherMethodType;
}

/** A reference to a PriorityLevelConfiguration by name. */
export interface PriorityLevelConfigurationReference {
  /** The referenced level's name. */
  name: string;
}

/** The spec of a FlowSchema. */
export interface FlowSchemaSpec {
  /** The level that matching requests are assigned to. */
  priorityLevelConfiguration: PriorityLevelConfigurationReference;
  /** Lower matches first; 1..10000, defaulted to 1000. */
  matchingPrecedence?: number;
  /** Absent: every request of the schema is one flow. */
  distinguisherMethod?: FlowDistinguisherMethod;
  /** Absent or empty: the schema matches nothing. */
  rules?: PolicyRulesWithSubjects[];
}

/** A FlowSchema: classifies requests into a priority level and flows. */
export interface FlowSchema {
  /** Always `flowcontrol.apiserver.k8s.io/v1` once loaded. */
  apiVersion: typeof FLOWCONTROL_V1;
  /** `FlowSchema`. */
  kind: "FlowSchema";
  /** Name, annotations and the other metadata flow control reads. */
  metadata: ObjectMeta;
  /** What the schema matches and where it sends requests. */
  spec: FlowSchemaSpec;
}

/** Queue shape of a queuing priority level. */
export interface QueuingConfiguration {
  /** Number of queues (default 64). */
  queues?: number;
  /** Queues dealt to each flow by shuffle sharding (default 8). */
  handSize?: number;
  /** Requests a queue may hold (default 50). */
  queueLengthLimit?: number;
}

/** What a Limited level does with requests that cannot run now. */
export type LimitResponseType = "Queue" | "Reject";

/** The limit response of a Limited level. */
export interface LimitResponse {
  /** `Queue` or `Reject`. */
  type: LimitResponseType;
  /** Set iff `type` is `Queue`. */
  queuing?: QueuingConfiguration;
}

/** Parameters of a Limited level. */
export interface LimitedPriorityLevelConfiguration {
  /** Share of the server concurrency limit (default 30; 0 allowed). */
  nominalConcurrencyShares?: number;
  /** Queue or reject excess requests. */
  limitResponse: LimitResponse;
  /** Percent of the nominal limit others may borrow (default 0). */
  lendablePercent?: number;
  /** Percent of the nominal limit this level may borrow; absent: unlimited. */
  borrowingLimitPercent?: number;
}

/** Parameters of the Exempt level. */
export interface ExemptPriorityLevelConfiguration {
  /** Seats reserved for exempt traffic (default 0). */
  nominalConcurrencyShares?: number;
  /** Percent of the nominal limit others may borrow (default 0). */
  lendablePercent?: number;
}

/** The kinds of priority level. */
export type PriorityLevelType = "Exempt" | "Limited";

/** The spec of a PriorityLevelConfiguration. */
export interface PriorityLevelConfigurationSpec {
  /** `Exempt` (only the level named `exempt`) or `Limited`. */
  type: PriorityLevelType;
  /** Set iff `type` is `Limited`. */
  limited?: LimitedPriorityLevelConfiguration;
  /** May be set only when `type` is `Exempt`. */
  exempt?: ExemptPriorityLevelConfiguration;
}

/** A PriorityLevelConfiguration: a share of concurrency and how to queue for it. */
export interface PriorityLevelConfiguration {
  /** Always `flowcontrol.apiserver.k8s.io/v1` once loaded. */
  apiVersion: typeof FLOWCONTROL_V1;
  /** `PriorityLevelConfiguration`. */
  kind: "PriorityLevelConfiguration";
  /** Name, annotations and the other metadata flow control reads. */
  metadata: ObjectMeta;
  /** The level's limits. */
  spec: PriorityLevelConfigurationSpec;
}

/** Either kind of flowcontrol object. */
export type FlowControlObject = FlowSchema | PriorityLevelConfiguration;

/** A set of flowcontrol objects, as loaded from manifests. */
export interface FlowControlConfiguration {
  /** FlowSchemas, in the order they were given. */
  flowSchemas: FlowSchema[];
  /** PriorityLevelConfigurations, in the order they were given. */
  priorityLevels: PriorityLevelConfiguration[];
}
