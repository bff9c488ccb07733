/**
 * The list work estimator (Kubernetes' `listWorkEstimator`, in
 * `pkg/util/flowcontrol/request/list_work_estimator.go`): a
 * list, or a watch that starts with the current state, costs seats in
 * proportion to the objects it loads (by count) or to the memory they take
 * (by size, Kubernetes' `SizeBasedListCostEstimate`, the default since 1.34).
 *
 * @module
 */

import { isInt64 } from "../classify/label_selector.ts";
import {
  CONTINUE,
  LIMIT,
  LIST_OPTION_KEYS,
  ListParams,
  queryBool,
  RESOURCE_VERSION,
  RESOURCE_VERSION_MATCH,
  SEND_INITIAL_EVENTS,
  TIMEOUT_SECONDS,
} from "../classify/list_options.ts";
import {
  objectCountKey,
  type ObjectCountSource,
  type ObjectStats,
} from "./object_count_tracker.ts";
import type { EstimateInput, ResolvedWorkEstimate } from "./types.ts";
import type { WorkEstimatorConfig } from "./work_estimator_config.ts";

/** The list options that decide where a list is served from. */
export interface DelegationOptions {
  /** `resourceVersionMatch`: `""`, `Exact`, `NotOlderThan` or anything else. */
  resourceVersionMatch: string;
  /** `resourceVersion`; `""` asks for a consistent (most recent) read. */
  resourceVersion: string;
  /** `continue` token; `""` when absent. */
  continueToken: string;
  /** `limit`; 0 when absent. */
  limit: number;
  /** Whether the watch cache serves consistent reads (Kubernetes: `ConsistentListFromCache` and etcd progress notifications). */
  consistentReadsFromCache: boolean;
}

/**
 * Whether a list goes to storage (etcd) rather than the watch cache
 * (Kubernetes' `ShouldDelegateList` with a cache that keeps no snapshots).
 */
export function shouldDelegateList(o: DelegationOptions): boolean {
  switch (o.resourceVersionMatch) {
    case "Exact":
      return true;
    case "NotOlderThan":
      return false;
    case "":
      // A continuation, or a legacy exact read (a limit and a specific version), needs storage.
      if (o.continueToken !== "") return true;
      if (o.limit > 0 && o.resourceVersion !== "" && o.resourceVersion !== "0") return true;
      if (o.resourceVersion === "") return !o.consistentReadsFromCache;
      return false;
    default:
      return true;
  }
}

/** Switches of the list estimator. */
export interface ListEstimatorFlags {
  sizeBased: boolean;
  consistentReadsFromCache: boolean;
}

/** The list estimator over `config`; `counts` absent means no resource is tracked. */
export function listEstimator(
  config: WorkEstimatorConfig,
  counts: ObjectCountSource | undefined,
  flags: ListEstimatorFlags,
): (input: EstimateInput) => ResolvedWorkEstimate {
  const minSeats = config.minimumSeats;
  const limitSeats = config.maximumListSeatsLimit;
  const unknownStats: ObjectStats = {
    count: config.infiniteObjectCount,
    avgSizeBytes: config.maxObjectSize,
  };
  // Estimators are synchronous, so one scratch record suffices.
  const params = new ListParams(LIST_OPTION_KEYS);

  return function estimateList(input: EstimateInput): ResolvedWorkEstimate {
    const maxSeats = input.maxSeats > 0 && input.maxSeats <= limitSeats
      ? input.maxSeats
      : limitSeats;
    const info = input.requestInfo;
    // A list by metadata.name is served like a get.
    const single = info.name !== "";
    params.load(input.query);
    const limitValue = params.value(LIMIT);
    const timeoutValue = params.value(TIMEOUT_SECONDS);
    // v1 ListOptions keeps selectors as strings: only the integers can fail to decode, and
    // such a request is bound to fail validation, so it gets the most seats.
    if (
      (limitValue !== undefined && !isInt64(limitValue)) ||
      (timeoutValue !== undefined && !isInt64(timeoutValue))
    ) {
      return seats(maxSeats);
    }
    const resourceVersion = params.value(RESOURCE_VERSION) ?? "";
    if (info.verb === "watch") {
      // Only a watch that starts with the current state costs like a list: one asking for
      // initial events, or a legacy watch from version "" or "0".
      const sendInitialEvents = queryBool(params.value(SEND_INITIAL_EVENTS), false);
      const legacy = resourceVersion === "" || resourceVersion === "0";
      if (!sendInitialEvents && !legacy) return seats(minSeats);
    }
    const limit = limitValue === undefined ? 0 : Number(limitValue);
    const fromStorage = shouldDelegateList({
      resourceVersionMatch: params.value(RESOURCE_VERSION_MATCH) ?? "",
      resourceVersion,
      continueToken: params.value(CONTINUE) ?? "",
      limit,
      consistentReadsFromCache: flags.consistentReadsFromCache,
    });
    const fromCache = info.verb === "watch" || !fromStorage;
    const fieldSelector = params.fieldSelector;
    const labelSelector = params.labelSelector;
    const selected = (fieldSelector !== undefined && fieldSelector !== "") ||
      (labelSelector !== undefined && labelSelector !== "");

    let stats: ObjectStats | undefined | "stale";
    try {
      stats = counts?.get(objectCountKey(info.apiGroup, info.resource));
    } catch {
      stats = "stale";
    }
    // Unknown resources are typically aggregated APIs served elsewhere: cheap for this server.
    if (stats === undefined) return seats(minSeats);
    // A stale count signals trouble: assume the worst, as for any other failure.
    if (stats === "stale" || typeof stats !== "object" || typeof stats.count !== "number") {
      stats = unknownStats;
    }
    const n = flags.sizeBased
      ? bySize(config, stats, limit, fromCache, single, selected)
      : byCount(config, stats, limit, fromCache, single, selected);
    return seats(n < minSeats ? minSeats : n > maxSeats ? maxSeats : n);
  };
}

function seats(initialSeats: number): ResolvedWorkEstimate {
  return { initialSeats, finalSeats: 0, additionalLatencyMs: 0 };
}

/** Objects processed: a list from storage with a selector reads everything, then the page. */
function byCount(
  config: WorkEstimatorConfig,
  stats: ObjectStats,
  limit: number,
  fromCache: boolean,
  single: boolean,
  selected: boolean,
): number {
  const stored = stats.count;
  const page = limit > 0 && limit < stored ? limit : stored;
  const objects = single ? 1 : fromCache ? stored : selected ? stored + page : 2 * page;
  return Math.ceil(objects / config.objectsPerSeat);
}

/** Memory held at once: a selective list from storage may load half the objects to fill a page. */
function bySize(
  config: WorkEstimatorConfig,
  stats: ObjectStats,
  limit: number,
  fromCache: boolean,
  single: boolean,
  selected: boolean,
): number {
  const count = stats.count;
  let size = stats.avgSizeBytes ?? 0;
  if (!(size > 0) && count !== 0) size = config.maxObjectSize;
  const page = limit > 0 && limit < count ? limit : count;
  const half = Math.trunc(count / 2);
  const objects = single ? 1 : fromCache ? page : selected ? (page > half ? page : half) : page;
  let bytes = objects * size;
  // The watch cache streams its answer, so memory is bounded.
  if (fromCache && bytes > config.cacheWithStreamingMaxMemoryUsage) {
    bytes = config.cacheWithStreamingMaxMemoryUsage;
  }
  return Math.ceil(bytes / config.bytesPerSeat);
}
