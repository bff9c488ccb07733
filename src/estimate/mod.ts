/**
 * Work estimation: how many seats a request occupies and for how long
 * (`docs/semantics.md` §5). Kubernetes' list, watch and mutating estimators with their
 * object-count and watch trackers, and static per-route costs for ordinary
 * HTTP APIs.
 *
 * @module
 */

export {
  type EstimateInput,
  estimateInputFor,
  type ResolvedWorkEstimate,
  type WorkEstimator,
} from "./types.ts";
export {
  defaultWorkEstimatorConfig,
  type DefaultWorkEstimatorConfigOptions,
  type WorkEstimatorConfig,
} from "./work_estimator_config.ts";
export { kubernetesEstimator, type KubernetesEstimatorOptions } from "./kubernetes.ts";
export {
  OBJECT_COUNT_PRUNE_INTERVAL_MS,
  OBJECT_COUNT_STALE_AFTER_MS,
  objectCountKey,
  type ObjectCountSource,
  ObjectCountTracker,
  type ObjectStats,
} from "./object_count_tracker.ts";
export { type WatchCountSource, WatchTracker } from "./watch_tracker.ts";
export { type RouteCost, routeCostEstimator } from "./routes.ts";
