/**
 * The parameters of the Kubernetes work estimators (`DefaultWorkEstimatorConfig`
 * in `pkg/util/flowcontrol/request/config.go` and the list estimator's size constants),
 * with their defaults and their validation.
 *
 * @module
 */

import { show } from "../_shared/show.ts";
import { valueError } from "../_shared/errors.ts";

/** Tunable parameters of the Kubernetes work estimators. */
export interface WorkEstimatorConfig {
  /** Seats of the narrowest request (integer ≥ 1); default 1. */
  minimumSeats: number;
  /** Widest list or watch request (integer ≥ 1); default 100 (10 when estimating by count). */
  maximumListSeatsLimit: number;
  /** Widest final phase of a write (integer ≥ 1); default 10. */
  maximumMutatingSeatsLimit: number;
  /** Objects a list processes per seat when estimating by count (> 0); default 100. */
  objectsPerSeat: number;
  /** Bytes a list holds in memory per seat when estimating by size (> 0); default 100,000. */
  bytesPerSeat: number;
  /** Most memory a list served from the watch cache holds at once, in bytes (≥ 0); default 1,000,000. */
  cacheWithStreamingMaxMemoryUsage: number;
  /** Object size assumed when none is known, in bytes (≥ 0); default 1,500,000 (etcd's request limit). */
  maxObjectSize: number;
  /** Object count assumed when the tracked count is stale (≥ 0); default 1,000,000,000. */
  infiniteObjectCount: number;
  /** Watchers one final seat serves (> 0; its integer part is the threshold); default 10. */
  watchesPerSeat: number;
  /** Time one final seat is held per seat-worth of watchers, in ms (≥ 0); default 5. */
  eventAdditionalDurationMs: number;
}

/** Options of {@linkcode defaultWorkEstimatorConfig}. */
export interface DefaultWorkEstimatorConfigOptions {
  /**
   * Whether lists are estimated by the memory they use (Kubernetes feature
   * gate `SizeBasedListCostEstimate`, on by default since 1.34) rather than by
   * the number of objects; decides the default list limit (100, else 10).
   */
  sizeBasedListCostEstimate?: boolean;
}

/**
 * Kubernetes' default work estimator parameters, as a fresh object.
 *
 * @example
 * ```ts
 * import { defaultWorkEstimatorConfig } from "./mod.ts";
 *
 * defaultWorkEstimatorConfig().maximumListSeatsLimit; // 100
 * defaultWorkEstimatorConfig({ sizeBasedListCostEstimate: false }).maximumListSeatsLimit; // 10
 * ```
 */
export function defaultWorkEstimatorConfig(
  options: DefaultWorkEstimatorConfigOptions = {},
): WorkEstimatorConfig {
  return {
    minimumSeats: 1,
    maximumListSeatsLimit: options.sizeBasedListCostEstimate === false ? 10 : 100,
    maximumMutatingSeatsLimit: 10,
    objectsPerSeat: 100,
    bytesPerSeat: 100_000,
    cacheWithStreamingMaxMemoryUsage: 1_000_000,
    maxObjectSize: 1_500_000,
    infiniteObjectCount: 1_000_000_000,
    watchesPerSeat: 10,
    eventAdditionalDurationMs: 5,
  };
}

type Rule = "integer >= 1" | "number > 0" | "number >= 0";

const RULES: { readonly [K in keyof WorkEstimatorConfig]: Rule } = {
  minimumSeats: "integer >= 1",
  maximumListSeatsLimit: "integer >= 1",
  maximumMutatingSeatsLimit: "integer >= 1",
  objectsPerSeat: "number > 0",
  bytesPerSeat: "number > 0",
  cacheWithStreamingMaxMemoryUsage: "number >= 0",
  maxObjectSize: "number >= 0",
  infiniteObjectCount: "number >= 0",
  watchesPerSeat: "number > 0",
  eventAdditionalDurationMs: "number >= 0",
};

function satisfies(value: unknown, rule: Rule): boolean {
  if (typeof value !== "number" || !Number.isFinite(value)) return false;
  switch (rule) {
    case "integer >= 1":
      return Number.isInteger(value) && value >= 1;
    case "number > 0":
      return value > 0;
    case "number >= 0":
      return value >= 0;
  }
}

/**
 * `base` with `overrides` applied, every field checked. Throws a TypeError
 * naming the field and the received value (`what` opens the message).
 */
export function resolveWorkEstimatorConfig(
  what: string,
  base: WorkEstimatorConfig,
  overrides: Partial<WorkEstimatorConfig> | undefined,
): WorkEstimatorConfig {
  if (overrides !== undefined && (typeof overrides !== "object" || overrides === null)) {
    throw new TypeError(`Cannot ${what}: config must be an object, got ${String(overrides)}`);
  }
  const config = { ...base };
  for (const key of Object.keys(RULES) as (keyof WorkEstimatorConfig)[]) {
    const value: unknown = overrides?.[key] ?? base[key];
    if (!satisfies(value, RULES[key])) {
      throw valueError(
        value,
        `Cannot ${what}: config.${key} must be a finite ${RULES[key]}, got ${show(value)}`,
      );
    }
    config[key] = value as number;
  }
  if (config.minimumSeats > config.maximumListSeatsLimit) {
    throw new RangeError(
      `Cannot ${what}: config.minimumSeats (${config.minimumSeats}) must not exceed config.maximumListSeatsLimit (${config.maximumListSeatsLimit})`,
    );
  }
  return config;
}
