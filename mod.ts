/**
 * `@apf/edge`: Kubernetes API Priority and Fairness for edge and serverless
 * HTTP apps. This entry point is the portable core (Web APIs only): the
 * flowcontrol configuration model, classification, work estimation, the
 * coordinator that hands out seats, seat budgets, metrics and the admin
 * routes. The simulator and the queue set of one priority level that it runs
 * are `@apf/edge/sim`, the command line `@apf/edge/cli`, the Deno helpers
 * `@apf/edge/deno`.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration } from "@apf/edge";
 * const eff = effectiveConfiguration(bootstrapConfiguration());
 * console.log(eff.priorityLevels.map((pl) => `${pl.name}: ${pl.currentLimit}`));
 * ```
 *
 * @module
 */

export {
  bootstrapConfiguration,
  type ConfigOption,
  ConfigurationError,
  type ConfigurationInput,
  type EffectiveConfiguration,
  effectiveConfiguration,
  type EffectiveFlowSchema,
  type EffectiveOptions,
  type EffectivePriorityLevel,
  type ExemptPriorityLevelConfiguration,
  FLOWCONTROL_V1,
  type FlowControlConfiguration,
  type FlowDistinguisherMethod,
  type FlowDistinguisherMethodType,
  type FlowSchema,
  type FlowSchemaSpec,
  type GroupSubject,
  type LevelLimits,
  type LimitedPriorityLevelConfiguration,
  type LimitResponse,
  type LimitResponseType,
  loadConfiguration,
  type ManifestSource,
  type NonResourcePolicyRule,
  type ObjectMeta,
  parseConfiguration,
  type ParseResult,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type PriorityLevelConfigurationReference,
  type PriorityLevelConfigurationSpec,
  type PriorityLevelType,
  type QueuingConfiguration,
  resolveConfiguration,
  type ResolveOptions,
  type ResourcePolicyRule,
  type ServiceAccountSubject,
  type Subject,
  type SubjectKind,
  type UserSubject,
} from "./src/config/mod.ts";
export {
  type Classification,
  Classifier,
  describeRequest,
  type FlowHash,
  type FrontProxyHeaderOptions,
  frontProxyIdentity,
  IdentityError,
  type IdentityInput,
  type IdentityResolver,
  type JwtClaimOptions,
  jwtIdentity,
  jwtPayloadIdentity,
  normalizeUser,
  type RequestInfo,
  type RequestInfoOptions,
  RequestInfoResolver,
  type ResourceRoute,
  type RuleMatch,
  type UserInfo,
} from "./src/classify/mod.ts";
export {
  type Clock,
  type Decision,
  FakeEventClock,
  type FinishOptions,
  type IntegratorResults,
  type QueueSetObserver,
  type QueueSetRequest,
  type QueueSetSnapshot,
  type QueueSnapshot,
  type RejectReason,
  type RequestDescriptor,
  type RequestDetails,
  type RequestSnapshot,
  type SnapshotOptions,
  systemClock,
  type Timer,
  type WorkEstimate,
} from "./src/fairqueuing/mod.ts";
export {
  connectPerLevel,
  type ConnectPerLevelOptions,
  type PerLevelCoordinator,
} from "./src/remote/mod.ts";
export {
  type ClientState,
  connectCoordinator,
  type ConnectCoordinatorOptions,
  CoordinatorRefusedError,
  type CoordinatorSocket,
  type RemoteCoordinator,
  type RemoteCoordinatorStats,
  type UnreachablePolicy,
} from "./src/remote/mod.ts";
export {
  type AcquireOptions,
  type Admission,
  type AdmissionRejectReason,
  type Admitted,
  type BorrowingAdjustment,
  type Coordinator,
  EmbeddedCoordinator,
  type EmbeddedCoordinatorOptions,
  type LevelAdjustment,
  type LevelObservers,
  type Rejected,
  type ReleaseOptions,
  type SampleOutcome,
  type Seat,
  type SeatDemandReport,
  type SeatRequest,
  seatRequestFor,
  type SeatRequestOptions,
} from "./src/coordinator/mod.ts";
export {
  type EstimateInput,
  kubernetesEstimator,
  type KubernetesEstimatorOptions,
  type ObjectCountSource,
  ObjectCountTracker,
  type ObjectStats,
  type ResolvedWorkEstimate,
  type RouteCost,
  routeCostEstimator,
  type WatchCountSource,
  WatchTracker,
  type WorkEstimator,
  type WorkEstimatorConfig,
} from "./src/estimate/mod.ts";
export {
  type AdminReading,
  type AdminRouter,
  adminRouter,
  type AdminRouterOptions,
  type AdminSource,
  AdminUnavailable,
  bearerTokenCheck,
  type BudgetHolderLine,
  type BudgetSnapshot,
  type CoordinatorSnapshot,
  type DemandSnapshot,
  FlowcontrolMetrics,
  type FlowcontrolMetricsOptions,
  type LiveViewOptions,
  type PriorityLevelSnapshot,
} from "./src/observe/mod.ts";
export type { WireConfiguration } from "./src/protocol/mod.ts";
export {
  BudgetHolder,
  type BudgetHolderOptions,
  type BudgetStore,
  HttpBudgetStore,
  type HttpBudgetStoreOptions,
  type Ledger,
  type LedgerEntry,
  type LevelBudget,
  MemoryBudgetStore,
  type RecoveryMark,
  type StoredLedger,
  StoreRefusedError,
  type SuspectLine,
} from "./src/budgets/mod.ts";
