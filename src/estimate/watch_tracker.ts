/**
 * How many watches a write would notify, for the mutating work estimator
 * (Kubernetes' `watchTracker`, `pkg/util/flowcontrol/watch_tracker.go`). Watches are counted per
 * `{apiGroup, resource, namespace, name}` of the watch request, selectors
 * ignored (they are evaluated per event anyway), local watches only.
 *
 * @module
 */

import { isLabelSelector } from "../classify/label_selector.ts";
import { show } from "../_shared/show.ts";
import { exactFieldValue, ListParams } from "../classify/list_options.ts";
import type { RequestInfo } from "../classify/request_info.ts";

/** Where the mutating estimator looks up how many watches a write concerns. */
export interface WatchCountSource {
  /**
   * The number of watches potentially interested in a request with this
   * info: 0 for read-only verbs. Called on every write; must be cheap and
   * not throw.
   */
  interestedWatchCount(info: RequestInfo): number;
}

// Verbs that change nothing, so notify no watcher.
const READ_ONLY_VERBS = new Set(["get", "list", "watch", "proxy"]);

// Resources whose watch cache indexes watches by a field, and that field.
// The metadata.name indexes of nodes, secrets and configmaps need no entry:
// such watches already carry the name in their RequestInfo.
const INDEXED_FIELDS = new Map([["pods", "spec.nodeName"]]);

// Unambiguous whatever the strings hold: the lengths fix the boundaries.
function watchKey(apiGroup: string, resource: string, namespace: string, name: string): string {
  return `${apiGroup.length},${resource.length},${namespace.length}|${apiGroup}${resource}${namespace}${name}`;
}

/**
 * Counts the watches in progress. Register each watch when it starts
 * executing and call the returned function when its handler returns.
 *
 * @example
 * ```ts
 * import { describeRequest, WatchTracker } from "@apf/edge";
 *
 * const watches = new WatchTracker();
 * const forget = watches.register(describeRequest("GET", "/api/v1/namespaces/ns/pods?watch=1"));
 * watches.interestedWatchCount(describeRequest("PUT", "/api/v1/namespaces/ns/pods/p")); // 1
 * forget?.();
 * watches.interestedWatchCount(describeRequest("PUT", "/api/v1/namespaces/ns/pods/p")); // 0
 * ```
 */
export class WatchTracker implements WatchCountSource {
  readonly #counts = new Map<string, number>();
  // register() is synchronous, so one scratch record suffices.
  readonly #params = new ListParams();

  /**
   * Registers the watch described by `info` (with its raw `query`, or
   * already parsed parameters, which decide the pods `spec.nodeName` rule;
   * without it, `info.fieldSelector` and `info.labelSelector` are read).
   * Returns the function that forgets it (calling it again does nothing),
   * or `undefined` when `info` is not a watch. A pods watch that requires a non-empty `spec.nodeName` (a
   * kubelet's) is not counted: the watch cache index serves it only for
   * events of its node (Kubernetes approximates those as never).
   */
  register(info: RequestInfo, query?: string | URLSearchParams): (() => void) | undefined {
    if (info === null || typeof info !== "object") {
      throw new TypeError(`Cannot register a watch: info must be a RequestInfo, got ${show(info)}`);
    }
    if (info.verb !== "watch") return undefined;
    const field = INDEXED_FIELDS.get(info.resource);
    if (field !== undefined && !this.#countedDespiteIndex(info, query, field)) {
      return () => {};
    }
    const key = watchKey(info.apiGroup, info.resource, info.namespace, info.name);
    const counts = this.#counts;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      const n = (counts.get(key) ?? 1) - 1;
      if (n > 0) counts.set(key, n);
      else counts.delete(key);
    };
  }

  /**
   * The watches a write may notify: 0 for read-only verbs (get, list, watch,
   * proxy); otherwise the watches of the whole resource, plus those of the
   * request's namespace when it has one, plus those of its object when it
   * has a name (creates usually have none).
   */
  interestedWatchCount(info: RequestInfo): number {
    if (info == null || READ_ONLY_VERBS.has(info.verb)) return 0;
    const counts = this.#counts;
    const { apiGroup, resource, namespace, name } = info;
    let n = counts.get(watchKey(apiGroup, resource, "", "")) ?? 0;
    if (namespace !== "") n += counts.get(watchKey(apiGroup, resource, namespace, "")) ?? 0;
    if (name !== "") n += counts.get(watchKey(apiGroup, resource, namespace, name)) ?? 0;
    return n;
  }

  /** Number of watches counted (those skipped by the index rule excluded). */
  get size(): number {
    let n = 0;
    for (const c of this.#counts.values()) n += c;
    return n;
  }

  /**
   * Kubernetes counts an indexed watch when its list options do not decode,
   * when it requires no exact value of the field, or when it requires "".
   */
  #countedDespiteIndex(
    info: RequestInfo,
    query: string | URLSearchParams | undefined,
    field: string,
  ): boolean {
    let fieldSelector: string | undefined;
    if (query === undefined) {
      if (info.labelSelector !== undefined && !isLabelSelector(info.labelSelector)) return true;
      fieldSelector = info.fieldSelector;
    } else {
      const params = this.#params;
      params.load(query);
      if (!params.otherOptionsDecode()) return true;
      fieldSelector = params.fieldSelector;
    }
    if (fieldSelector === undefined) return true;
    const value = exactFieldValue(fieldSelector, field);
    return typeof value !== "string" || value === "";
  }
}
