/**
 * The shapes every work estimator shares: what it is asked about a request
 * and what it answers (Kubernetes' `WorkEstimate` of a request, in
 * `pkg/util/flowcontrol/request/width.go`).
 *
 * @module
 */

import type { Classification } from "../classify/classifier.ts";
import type { RequestInfo } from "../classify/request_info.ts";
import type { WorkEstimate } from "../fairqueuing/types.ts";

/** What a work estimator knows about a request once it is classified. */
export interface EstimateInput {
  /** What the request asks for (from `RequestInfoResolver.describe`). */
  requestInfo: RequestInfo;
  /** The HTTP method, upper case (`GET`, `POST`, ...), for route matching. */
  method: string;
  /**
   * The raw query string (with or without its leading `?`) or the parsed
   * parameters; the list estimator reads its list options (`limit`,
   * `resourceVersion`, `resourceVersionMatch`, `continue`,
   * `sendInitialEvents`, the selectors) from it with Go's `url.ParseQuery`
   * rules. Omitted: no list options (selectors alone would not change an
   * estimate: they matter only with a `limit`).
   */
  query?: string | URLSearchParams;
  /** The name of the FlowSchema that matched. */
  flowSchema: string;
  /** The name of the priority level the request goes to. */
  priorityLevel: string;
  /**
   * The level's largest width of one request from the effective configuration
   * (`EffectivePriorityLevel.maxSeats`), or 0 when the level has none
   * (exempt and reject levels): each estimator then applies its own limit.
   */
  maxSeats: number;
}

/**
 * A work estimate with every field set: the seats a request holds while it
 * executes, the seats it keeps for `additionalLatencyMs` after it finishes
 * (the cost of notifying watchers of a write, for example), and that time.
 * A complete {@linkcode WorkEstimate}, so it can be handed to a queue set as is.
 */
export type ResolvedWorkEstimate = Required<WorkEstimate>;

/**
 * Estimates the work of a request: pure, synchronous and cheap, since it runs
 * on every request before the request asks for seats.
 *
 * @example
 * ```ts
 * import type { WorkEstimator } from "@apf/edge";
 *
 * const flat: WorkEstimator = () => ({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });
 * ```
 */
export type WorkEstimator = (input: EstimateInput) => ResolvedWorkEstimate;

/**
 * The estimator input of a classified request.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, Classifier, describeRequest, effectiveConfiguration, kubernetesEstimator, normalizeUser } from "@apf/edge";
 * import { estimateInputFor } from "./mod.ts";
 * const classifier = new Classifier(effectiveConfiguration(bootstrapConfiguration()));
 * const info = describeRequest("GET", "/api/v1/pods");
 * const c = classifier.classify(normalizeUser({ name: "alice" }), info);
 * kubernetesEstimator()(estimateInputFor(c, info, "GET", "limit=500")).initialSeats; // 1
 * ```
 */
export function estimateInputFor(
  classification: Classification,
  requestInfo: RequestInfo,
  method: string,
  query?: string | URLSearchParams,
): EstimateInput {
  const input: EstimateInput = {
    requestInfo,
    method,
    flowSchema: classification.flowSchema.name,
    priorityLevel: classification.priorityLevel.name,
    maxSeats: classification.priorityLevel.maxSeats ?? 0,
  };
  if (query !== undefined) input.query = query;
  return input;
}
