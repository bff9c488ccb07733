/**
 * The flowcontrol v1 configuration model: types, manifests, defaulting,
 * validation, the built-in objects and effective limits. What other rooms
 * may use; the package's public subset is listed in the root `mod.ts`.
 *
 * @module
 */

export {
  type ExemptPriorityLevelConfiguration,
  FLOWCONTROL_V1,
  type FlowControlConfiguration,
  type FlowControlObject,
  type FlowDistinguisherMethod,
  type FlowDistinguisherMethodType,
  type FlowSchema,
  type FlowSchemaSpec,
  type GroupSubject,
  type LimitedPriorityLevelConfiguration,
  type LimitResponse,
  type LimitResponseType,
  type NonResourcePolicyRule,
  type ObjectMeta,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type PriorityLevelConfigurationReference,
  type PriorityLevelConfigurationSpec,
  type PriorityLevelType,
  type QueuingConfiguration,
  type ResourcePolicyRule,
  type ServiceAccountSubject,
  type Subject,
  type SubjectKind,
  type UserSubject,
} from "./types.ts";
export {
  ACCEPTED_API_VERSIONS,
  CATCH_ALL,
  DEFAULT_SERVER_CONCURRENCY_LIMIT,
  EXEMPT,
  MAX_HASH_BITS,
  requiredEntropyBits,
} from "./constants.ts";
export { defaultFlowSchema, defaultPriorityLevel } from "./defaults.ts";
export { ConfigurationError, type FieldError, formatFieldError } from "./field_errors.ts";
export {
  type ConfigurationInput,
  loadConfiguration,
  type ManifestSource,
  parseConfiguration,
  type ParseResult,
} from "./load.ts";
export {
  bootstrapConfiguration,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from "./bootstrap.ts";
export { type MergeOptions, type MergeResult, mergeWithBootstrap } from "./merge.ts";
export { computeLevelLimits, type LevelLimits } from "./limits.ts";
export {
  type Allocation,
  type AllocationItem,
  computeConcurrencyAllocation,
} from "./fair_allocation.ts";
export {
  allocateCurrentLimits,
  type BorrowingLevel,
  type BorrowingResult,
  borrowingTarget,
  minCurrentLimit,
} from "./borrowing.ts";
export { type ConfigOption, resolveConfiguration, type ResolveOptions } from "./resolve.ts";
export {
  type ConfigurationDiff,
  diffConfigurations,
  formatConfigurationDiff,
  type KindDiff,
} from "./diff.ts";
export {
  type EffectiveConfiguration,
  effectiveConfiguration,
  type EffectiveFlowSchema,
  type EffectiveOptions,
  type EffectivePriorityLevel,
  withServerConcurrencyLimit,
} from "./effective.ts";
export { validateFlowSchema } from "./validate_flow_schema.ts";
export { validatePriorityLevel } from "./validate_priority_level.ts";
export { type FlowControlVersion } from "./versions.ts";
export { objectUid } from "./uid.ts";
