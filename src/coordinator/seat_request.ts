/**
 * Building a {@linkcode SeatRequest}: from a classification, and the queue
 * wait limit of Kubernetes' APF filter (`docs/semantics.md` §7.3).
 *
 * @module
 */

import type { Classification } from "../classify/classifier.ts";
import type { RequestInfo } from "../classify/request_info.ts";
import type { UserInfo } from "../classify/identity.ts";
import type { RequestDetails, WorkEstimate } from "../fairqueuing/types.ts";
import type { SeatRequest } from "./types.ts";
import { checkNumber } from "../_shared/errors.ts";

/** Kubernetes' default `--request-timeout`: 60 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** The longest any request waits in a queue: 1 minute (Kubernetes: `getRequestWaitContext`). */
export const MAX_QUEUE_WAIT_LIMIT_MS = 60_000;

/** The queue wait limit of a request with the default deadline: 15 s. */
export const DEFAULT_QUEUE_WAIT_LIMIT_MS: number = DEFAULT_REQUEST_TIMEOUT_MS / 4;

/**
 * The queue wait limit of a request (Kubernetes: `getRequestWaitContext` in
 * `pkg/server/filters/priority-and-fairness.go`): a quarter of its deadline
 * span, at most one minute. `deadlineMs` is the time from the request's
 * arrival to its deadline (default 60 s, giving 15 s).
 *
 * @throws {RangeError} when `deadlineMs` is not >= 0 ({TypeError}: not a number).
 * @example
 * ```ts
 * import { queueWaitLimitMs } from "./mod.ts";
 * queueWaitLimitMs(); // 15000
 * queueWaitLimitMs(8_000); // 2000
 * queueWaitLimitMs(300_000); // 60000
 * ```
 */
export function queueWaitLimitMs(deadlineMs: number = DEFAULT_REQUEST_TIMEOUT_MS): number {
  checkNumber(
    deadlineMs,
    (ms) => ms >= 0,
    () => `Cannot compute a queue wait limit: deadline must be >= 0, got ${deadlineMs}`,
  );
  return Math.min(deadlineMs / 4, MAX_QUEUE_WAIT_LIMIT_MS);
}

/**
 * A request's deadline span (Kubernetes `WithRequestDeadline`): the user's
 * `?timeout=` when it is positive and shorter than the server's request
 * timeout, else the server's request timeout.
 *
 * @example
 * ```ts
 * import { requestDeadlineMs } from "./mod.ts";
 * requestDeadlineMs(60_000, 8_000); // 8000
 * requestDeadlineMs(60_000, 90_000); // 60000
 * ```
 */
export function requestDeadlineMs(requestTimeoutMs: number, userTimeoutMs?: number): number {
  return userTimeoutMs !== undefined && userTimeoutMs > 0 && userTimeoutMs < requestTimeoutMs
    ? userTimeoutMs
    : requestTimeoutMs;
}

/** Options of {@linkcode seatRequestFor}. */
export interface SeatRequestOptions {
  /** Seats and final-phase latency (default: one seat). */
  work?: WorkEstimate;
  /** Queue wait limit in ms (default 15,000). */
  waitLimitMs?: number;
  /** The user and RequestInfo, to show in `dump_requests`. */
  user?: UserInfo;
  /** The RequestInfo, to show in `dump_requests`. */
  requestInfo?: RequestInfo;
}

/**
 * The seat request of a classified request.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, Classifier, describeRequest, effectiveConfiguration, normalizeUser, seatRequestFor } from "@apf/edge";
 * const classifier = new Classifier(effectiveConfiguration(bootstrapConfiguration()));
 * const user = normalizeUser({ name: "alice" });
 * const info = describeRequest("GET", "/api/v1/pods");
 * const request = seatRequestFor(classifier.classify(user, info), { user, requestInfo: info });
 * request.priorityLevel; // "global-default"
 * ```
 */
export function seatRequestFor(
  classification: Classification,
  options: SeatRequestOptions = {},
): SeatRequest {
  const request: SeatRequest = {
    priorityLevel: classification.priorityLevel.name,
    flowSchema: classification.flowSchema.name,
    flowHash: classification.flowHash,
    distinguisher: classification.distinguisher,
  };
  if (options.work !== undefined) request.work = options.work;
  if (options.waitLimitMs !== undefined) request.waitLimitMs = options.waitLimitMs;
  const { user, requestInfo } = options;
  if (user !== undefined || requestInfo !== undefined) {
    request.details = requestDetails(user, requestInfo);
  }
  return request;
}

/** The `dump_requests` details of a request. */
export function requestDetails(user?: UserInfo, info?: RequestInfo): RequestDetails {
  return {
    user: user?.name ?? "",
    verb: info?.verb ?? "",
    path: info?.path ?? "",
    namespace: info?.namespace ?? "",
    name: info?.name ?? "",
    apiGroup: info?.apiGroup ?? "",
    apiVersion: info?.apiVersion ?? "",
    resource: info?.resource ?? "",
    subresource: info?.subresource ?? "",
  };
}
