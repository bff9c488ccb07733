/**
 * Kubernetes' work estimator (`workEstimator` in `pkg/util/flowcontrol/request/width.go`):
 * dispatches by verb to the list estimator (lists, and watches that start
 * with the current state) or the mutating estimator (create, update, patch,
 * delete); every other request is one seat.
 *
 * @module
 */

import { show } from "../_shared/show.ts";
import { listEstimator } from "./_list.ts";
import { mutatingEstimator } from "./_mutating.ts";
import type { ObjectCountSource } from "./object_count_tracker.ts";
import type { EstimateInput, ResolvedWorkEstimate, WorkEstimator } from "./types.ts";
import type { WatchCountSource } from "./watch_tracker.ts";
import {
  defaultWorkEstimatorConfig,
  resolveWorkEstimatorConfig,
  type WorkEstimatorConfig,
} from "./work_estimator_config.ts";

/** Options of {@linkcode kubernetesEstimator}. */
export interface KubernetesEstimatorOptions {
  /**
   * Object counts by resource for lists (an {@linkcode ObjectCountTracker}).
   * Absent: no resource is tracked, so every list costs the minimum.
   */
  objectCounts?: ObjectCountSource;
  /**
   * Watch counts for writes (a {@linkcode WatchTracker}). Absent: writes
   * notify no watcher, so they cost the minimum.
   */
  watchCounts?: WatchCountSource;
  /** Parameters overriding {@linkcode defaultWorkEstimatorConfig}. */
  config?: Partial<WorkEstimatorConfig>;
  /**
   * Estimate lists by memory rather than by object count (feature gate
   * `SizeBasedListCostEstimate`); default true. Also picks the default list
   * limit: 100 seats, else 10.
   */
  sizeBasedListCostEstimate?: boolean;
  /**
   * Estimate watches with the list estimator (feature gate `WatchList`, on by
   * default since 1.34); default true. Off: a watch is one seat.
   */
  watchList?: boolean;
  /** Charge writes for the watches they notify; default true. Off: a write is one seat. */
  mutatingEnabled?: boolean;
  /**
   * Whether the watch cache serves consistent lists (no resource version):
   * Kubernetes' `ConsistentListFromCache` with an etcd that supports progress
   * notifications, the normal case; default true. False: such lists go to
   * storage and cost more.
   */
  consistentReadsFromCache?: boolean;
}

const WHAT = "create Kubernetes work estimator";

/**
 * Creates Kubernetes' work estimator. Each request's seats are capped by
 * the level's `maxSeats`, or by the estimator's own limit when the level has
 * none or a larger one (list: 100 seats, mutating: 10 final seats).
 *
 * @example
 * ```ts
 * import {
 *   describeRequest,
 *   FakeEventClock,
 *   kubernetesEstimator,
 *   ObjectCountTracker,
 * } from "@apf/edge";
 *
 * const objectCounts = new ObjectCountTracker(new FakeEventClock());
 * objectCounts.set("pods", { count: 700, avgSizeBytes: 10_000 });
 * const estimate = kubernetesEstimator({ objectCounts });
 * const work = estimate({
 *   requestInfo: describeRequest("GET", "/api/v1/pods?limit=400&resourceVersion=1"),
 *   method: "GET",
 *   query: "limit=400&resourceVersion=1",
 *   flowSchema: "global-default",
 *   priorityLevel: "global-default",
 *   maxSeats: 8,
 * });
 * work.initialSeats; // 8: 4 MB from storage is 40 seats, capped by the level
 * ```
 *
 * @throws {TypeError} when a source or switch has the wrong type.
 * @throws {RangeError} when a config parameter is out of range ({TypeError}: not a number).
 */
export function kubernetesEstimator(options: KubernetesEstimatorOptions = {}): WorkEstimator {
  if (options === null || typeof options !== "object") {
    throw new TypeError(`Cannot ${WHAT}: options must be an object, got ${show(options)}`);
  }
  const { objectCounts, watchCounts } = options;
  if (objectCounts !== undefined && typeof objectCounts?.get !== "function") {
    throw new TypeError(
      `Cannot ${WHAT}: objectCounts must have a get() method, got ${show(objectCounts)}`,
    );
  }
  if (watchCounts !== undefined && typeof watchCounts?.interestedWatchCount !== "function") {
    throw new TypeError(
      `Cannot ${WHAT}: watchCounts must have an interestedWatchCount() method, got ${
        show(watchCounts)
      }`,
    );
  }
  const sizeBased = flag(options, "sizeBasedListCostEstimate");
  const watchList = flag(options, "watchList");
  const mutatingEnabled = flag(options, "mutatingEnabled");
  const consistentReadsFromCache = flag(options, "consistentReadsFromCache");
  const config = resolveWorkEstimatorConfig(
    WHAT,
    defaultWorkEstimatorConfig({ sizeBasedListCostEstimate: sizeBased }),
    options.config,
  );
  const minSeats = config.minimumSeats;
  const estimateList = listEstimator(config, objectCounts, { sizeBased, consistentReadsFromCache });
  const estimateMutating = mutatingEnabled ? mutatingEstimator(config, watchCounts) : undefined;

  return function kubernetes(input: EstimateInput): ResolvedWorkEstimate {
    const info = input.requestInfo;
    // A request Kubernetes would fail before classifying it, or that is not about a resource,
    // does no estimated work.
    if (info.isResourceRequest && info.error === undefined) {
      switch (info.verb) {
        case "list":
          return estimateList(input);
        case "watch":
          if (watchList) return estimateList(input);
          break;
        case "create":
        case "update":
        case "patch":
        case "delete":
          if (estimateMutating !== undefined) return estimateMutating(input);
          break;
      }
    }
    return { initialSeats: minSeats, finalSeats: 0, additionalLatencyMs: 0 };
  };
}

type Flag =
  | "sizeBasedListCostEstimate"
  | "watchList"
  | "mutatingEnabled"
  | "consistentReadsFromCache";

function flag(options: KubernetesEstimatorOptions, name: Flag): boolean {
  const value: unknown = options[name];
  if (value === undefined) return true;
  if (typeof value !== "boolean") {
    throw new TypeError(`Cannot ${WHAT}: ${name} must be a boolean, got ${show(value)}`);
  }
  return value;
}
