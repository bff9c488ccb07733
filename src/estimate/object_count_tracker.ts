/**
 * How many objects of each resource exist, for the list work estimator
 * (Kubernetes' `objectCountTracker`, in
 * `pkg/util/flowcontrol/request/object_count_tracker.go`): the storage layer
 * reports counts about once a minute; a count not refreshed for 3 minutes is
 * stale, and one not refreshed for an hour is forgotten by an hourly prune.
 *
 * @module
 */

import { show } from "../_shared/show.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import { checkNumber } from "../_shared/errors.ts";

/** What is known about the stored objects of one resource. */
export interface ObjectStats {
  /** Number of objects (integer ≥ 0). */
  count: number;
  /** Estimated average size of one object in bytes; unknown when absent or ≤ 0. */
  avgSizeBytes?: number;
}

/** Where the list estimator looks up object counts. */
export interface ObjectCountSource {
  /**
   * The stats of the resource with key `resourceKey` (see
   * {@linkcode objectCountKey}): `"stale"` when the last report is too old to
   * trust, `undefined` when the resource is not tracked (unknown, or served
   * by another server). Called on every list; must be cheap and not throw.
   */
  get(resourceKey: string): ObjectStats | undefined | "stale";
}

/** A count older than this (3 minutes, in ms) is stale. */
export const OBJECT_COUNT_STALE_AFTER_MS = 3 * 60_000;
/** Interval of the prune, and age at which it forgets a count (1 hour, in ms). */
export const OBJECT_COUNT_PRUNE_INTERVAL_MS = 60 * 60_000;

/**
 * The key of a resource's count: Kubernetes' `GroupResource.String()`, the
 * resource alone in the core group, else `resource.group`.
 *
 * @example
 * ```ts
 * import { objectCountKey } from "./mod.ts";
 *
 * objectCountKey("", "pods"); // "pods"
 * objectCountKey("apps", "deployments"); // "deployments.apps"
 * ```
 */
export function objectCountKey(apiGroup: string, resource: string): string {
  return apiGroup === "" ? resource : `${resource}.${apiGroup}`;
}

interface Entry {
  stats: Readonly<ObjectStats>;
  updatedAt: number;
}

/**
 * Object counts by resource, timed with an injected clock. Holds no timer:
 * the hourly prune runs, for every hour boundary since creation that has
 * passed, at the next call, with the outcome it would have had on time.
 *
 * @example
 * ```ts
 * import { FakeEventClock, ObjectCountTracker } from "@apf/edge";
 *
 * const clock = new FakeEventClock();
 * const counts = new ObjectCountTracker(clock);
 * counts.set("pods", { count: 700, avgSizeBytes: 10_000 });
 * counts.get("pods"); // { count: 700, avgSizeBytes: 10000 }
 * clock.advance(3 * 60_000 + 1);
 * counts.get("pods"); // "stale"
 * ```
 */
export class ObjectCountTracker implements ObjectCountSource {
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  #nextPruneAt: number;

  /** Creates an empty tracker reading time from `clock`. */
  constructor(clock: Clock) {
    if (clock === null || typeof clock !== "object" || typeof clock.now !== "function") {
      throw new TypeError(
        `Cannot create an ObjectCountTracker: clock must be a Clock, got ${show(clock)}`,
      );
    }
    this.#clock = clock;
    this.#nextPruneAt = clock.now() + OBJECT_COUNT_PRUNE_INTERVAL_MS;
  }

  /**
   * Records the stats of the resource `groupResource` (see
   * {@linkcode objectCountKey}) as of now. A negative count means the storage
   * could not count (Kubernetes reports -1): the previous stats are kept and
   * age, as in Kubernetes.
   *
   * @throws {TypeError} when `groupResource` is not a string.
   * @throws {RangeError} when the count is not an integer or the size is not finite
   * ({TypeError}: not a number).
   */
  set(groupResource: string, stats: ObjectStats): void {
    if (typeof groupResource !== "string") {
      throw new TypeError(
        `Cannot set an object count: groupResource must be a string, got ${show(groupResource)}`,
      );
    }
    const count: unknown = stats?.count;
    const size: unknown = stats?.avgSizeBytes;
    checkNumber(
      count,
      Number.isSafeInteger,
      () =>
        `Cannot set an object count for ${show(groupResource)}: count must be an integer, got ${
          show(count)
        }`,
    );
    if (size !== undefined) {
      checkNumber(
        size,
        Number.isFinite,
        () =>
          `Cannot set an object count for ${
            show(groupResource)
          }: avgSizeBytes must be a finite number, got ${show(size)}`,
      );
    }
    const now = this.#clock.now();
    this.#maybePrune(now);
    if (count < 0) return;
    const kept: ObjectStats = size === undefined ? { count } : { count, avgSizeBytes: size };
    this.#entries.set(groupResource, { stats: Object.freeze(kept), updatedAt: now });
  }

  /** The stats of `resourceKey`: `"stale"` after 3 minutes without a report, `undefined` if untracked. */
  get(resourceKey: string): ObjectStats | undefined | "stale" {
    const now = this.#clock.now();
    this.#maybePrune(now);
    const entry = this.#entries.get(resourceKey);
    if (entry === undefined) return undefined;
    return entry.updatedAt < now - OBJECT_COUNT_STALE_AFTER_MS ? "stale" : entry.stats;
  }

  /** Number of resources tracked (stale ones included, pruned ones not). */
  get size(): number {
    this.#maybePrune(this.#clock.now());
    return this.#entries.size;
  }

  /** Runs the prunes due by `now`: only the latest matters, since nothing changed in between. */
  #maybePrune(now: number): void {
    if (now < this.#nextPruneAt) return;
    const periods = Math.floor((now - this.#nextPruneAt) / OBJECT_COUNT_PRUNE_INTERVAL_MS);
    const tick = this.#nextPruneAt + periods * OBJECT_COUNT_PRUNE_INTERVAL_MS;
    this.#nextPruneAt = tick + OBJECT_COUNT_PRUNE_INTERVAL_MS;
    // Kubernetes keeps only counts updated strictly after tick - 1h.
    const oldestKept = tick - OBJECT_COUNT_PRUNE_INTERVAL_MS;
    for (const [key, entry] of this.#entries) {
      if (!(entry.updatedAt > oldestKept)) this.#entries.delete(key);
    }
  }
}
