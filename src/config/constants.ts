/**
 * Names and limits of the flowcontrol API (Kubernetes' `flowcontrol/v1/types.go`).
 *
 * @module
 */

export { MAX_HASH_BITS, requiredEntropyBits } from "../_shared/numbers.ts";

/** The API group of FlowSchema and PriorityLevelConfiguration. */
export const FLOWCONTROL_GROUP = "flowcontrol.apiserver.k8s.io";

/** API versions accepted in manifests, newest first. */
export const ACCEPTED_API_VERSIONS: readonly string[] = [
  "flowcontrol.apiserver.k8s.io/v1",
  "flowcontrol.apiserver.k8s.io/v1beta3",
  "flowcontrol.apiserver.k8s.io/v1beta2",
  "flowcontrol.apiserver.k8s.io/v1beta1",
];

/** Name of the mandatory exempt FlowSchema and PriorityLevelConfiguration. */
export const EXEMPT = "exempt";

/** Name of the mandatory catch-all FlowSchema and PriorityLevelConfiguration. */
export const CATCH_ALL = "catch-all";

/** Annotation that controls whether a bootstrap object's spec is kept up to date. */
export const AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec";

/** v1beta3 round-trip annotation: keeps an explicit zero `nominalConcurrencyShares`. */
export const PRESERVE_ZERO_SHARES_ANNOTATION =
  "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";

/** Largest valid `matchingPrecedence`. */
export const MAX_MATCHING_PRECEDENCE = 10000;

/** Largest valid number of queues of a priority level. */
export const MAX_QUEUES = 10_000_000;

/** Verbs a resource or non-resource rule may list (besides the lone `*`). */
export const SUPPORTED_VERBS: readonly string[] = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "proxy",
  "update",
  "watch",
];

/** Default server concurrency limit (kube-apiserver's max-requests-inflight + max-mutating). */
export const DEFAULT_SERVER_CONCURRENCY_LIMIT = 600;
