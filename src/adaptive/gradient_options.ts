/**
 * The options of the gradient controller: their defaults, named
 * here and justified in the controller's module doc ("The constants"), and
 * their validation, whole, before anything runs.
 *
 * @module
 */

import { checkOptionNames } from "../_shared/options.ts";
import { valueError } from "../_shared/errors.ts";

/** Default lower bound of the limit: Envoy's `min_concurrency` (3). */
export const DEFAULT_MIN_LIMIT = 3;
/** Default upper bound of the limit: Envoy's `max_concurrency_limit` (1000). */
export const DEFAULT_MAX_LIMIT = 1000;
/** Default limit restored after the first minRTT measurement: Netflix Gradient2's `initialLimit` (20). */
export const DEFAULT_INITIAL_LIMIT = 20;
/** Default length of a sample window, in ms: Netflix's "ex. 1 second". */
export const DEFAULT_SAMPLE_WINDOW_MS = 1000;
/** Default time between minRTT measurements, in ms: Envoy's documented 60 s. */
export const DEFAULT_MIN_RTT_INTERVAL_MS = 60_000;
/** Default jitter added to that interval, as a fraction of it: Envoy's 15%. */
export const DEFAULT_JITTER = 0.15;
/** Default samples a minRTT measurement takes: Envoy's `request_count` (50). */
export const DEFAULT_MIN_RTT_REQUESTS = 50;
/** Default limit pinned while measuring the minRTT: Envoy's `min_concurrency` (3). */
export const DEFAULT_MIN_RTT_LIMIT = 3;
/** Default latency percentile of a window and of the minRTT: p90. */
export const DEFAULT_PERCENTILE = 0.9;
/** Default tolerance above the minRTT before the gradient falls below 1: Envoy's `buffer` (25%). */
export const DEFAULT_BUFFER = 0.25;
/** Default highest gradient: Envoy's clamp, 2.0. */
export const DEFAULT_MAX_GRADIENT = 2;
/** Lowest gradient, Envoy's and Gradient2's clamp: a window at most halves the limit. */
export const MIN_GRADIENT = 0.5;
/** Default weight of a window's estimate in the new limit (1: no smoothing). */
export const DEFAULT_SMOOTHING = 0.5;
/** Windows at the lower bound in a row after which the minRTT is measured again: Envoy's 5. */
export const MIN_LIMIT_WINDOWS_BEFORE_REMEASURE = 5;

/** Options of the gradient controller (`GradientController`); every one has a default. */
export interface GradientControllerOptions {
  /** Lowest limit (integer ≥ 1; default 3). */
  min?: number | undefined;
  /** Highest limit (integer ≥ `min`; default 1000). */
  max?: number | undefined;
  /** The limit to start from once the first minRTT is known (integer in [min, max]; default 20). */
  initial?: number | undefined;
  /** How long a sample window lasts, in ms (> 0; default 1000). */
  sampleWindowMs?: number | undefined;
  /** Time between minRTT measurements, in ms (> 0; default 60,000). */
  minRttIntervalMs?: number | undefined;
  /** Random extra delay before each measurement, as a fraction of the interval ([0, 1]; default 0.15). */
  jitter?: number | undefined;
  /** Samples a minRTT measurement takes (integer ≥ 1; default 50). */
  minRttRequests?: number | undefined;
  /** The limit while measuring the minRTT (integer in [1, max]; default 3). */
  minRttLimit?: number | undefined;
  /** The latency percentile of a window and of the minRTT measurement ((0, 1]; default 0.9). */
  percentile?: number | undefined;
  /** Fraction of the minRTT tolerated before the limit shrinks ([0, 10]; default 0.25). */
  buffer?: number | undefined;
  /** Highest gradient of one window ([1, 100]; default 2). */
  maxGradient?: number | undefined;
  /** Weight of a window's estimate in the new limit ((0, 1]; 1: none; default 0.5). */
  smoothing?: number | undefined;
}

/** The options with every default filled in. */
export type ResolvedGradientOptions = { readonly [K in keyof GradientControllerOptions]-?: number };

/** Every option name, for {@linkcode checkOptionNames}. */
export const GRADIENT_OPTION_NAMES: readonly (keyof GradientControllerOptions)[] = [
  "min",
  "max",
  "initial",
  "sampleWindowMs",
  "minRttIntervalMs",
  "jitter",
  "minRttRequests",
  "minRttLimit",
  "percentile",
  "buffer",
  "maxGradient",
  "smoothing",
];

const WHAT = "create the gradient controller";

/**
 * Checks `options` whole and fills in the defaults.
 *
 * @throws {TypeError} for an unknown option name or a value that is not a number;
 * {RangeError} for a number out of its range (the message names the option and the value).
 * @example
 * ```ts
 * import { resolveGradientOptions } from "./gradient_options.ts";
 * resolveGradientOptions({ max: 64 }).initial; // 20
 * ```
 */
export function resolveGradientOptions(
  options: GradientControllerOptions = {},
): ResolvedGradientOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`Cannot ${WHAT}: options must be an object, got ${show(options)}`);
  }
  checkOptionNames(WHAT, options, GRADIENT_OPTION_NAMES);
  const min = read(options, "min", DEFAULT_MIN_LIMIT, integerAtLeast(1));
  const max = read(options, "max", Math.max(DEFAULT_MAX_LIMIT, min), integerAtLeast(min));
  const initial = read(
    options,
    "initial",
    Math.min(Math.max(DEFAULT_INITIAL_LIMIT, min), max),
    integerWithin(min, max),
  );
  return {
    min,
    max,
    initial,
    sampleWindowMs: read(options, "sampleWindowMs", DEFAULT_SAMPLE_WINDOW_MS, positiveFinite),
    minRttIntervalMs: read(
      options,
      "minRttIntervalMs",
      DEFAULT_MIN_RTT_INTERVAL_MS,
      positiveFinite,
    ),
    jitter: read(options, "jitter", DEFAULT_JITTER, within(0, 1)),
    minRttRequests: read(options, "minRttRequests", DEFAULT_MIN_RTT_REQUESTS, integerAtLeast(1)),
    minRttLimit: read(
      options,
      "minRttLimit",
      Math.min(DEFAULT_MIN_RTT_LIMIT, max),
      integerWithin(1, max),
    ),
    percentile: read(options, "percentile", DEFAULT_PERCENTILE, aboveZeroUpTo(1)),
    buffer: read(options, "buffer", DEFAULT_BUFFER, within(0, 10)),
    maxGradient: read(options, "maxGradient", DEFAULT_MAX_GRADIENT, within(1, 100)),
    smoothing: read(options, "smoothing", DEFAULT_SMOOTHING, aboveZeroUpTo(1)),
  };
}

/** A range check: the bound it states, and whether `n` is within it. */
interface Bound {
  text: string;
  holds(n: number): boolean;
}

function read(
  options: GradientControllerOptions,
  name: keyof GradientControllerOptions,
  fallback: number,
  bound: Bound,
): number {
  const value: unknown = options[name];
  if (value === undefined) return fallback;
  if (typeof value === "number" && bound.holds(value)) return value;
  throw valueError(value, `Cannot ${WHAT}: ${name} must be ${bound.text}, got ${show(value)}`);
}

function integerAtLeast(low: number): Bound {
  return {
    text: `an integer >= ${low}`,
    holds: (n) => Number.isSafeInteger(n) && n >= low,
  };
}

function integerWithin(low: number, high: number): Bound {
  return {
    text: `an integer in [${low}, ${high}]`,
    holds: (n) => Number.isSafeInteger(n) && n >= low && n <= high,
  };
}

const positiveFinite: Bound = {
  text: "a finite number > 0",
  holds: (n) => n > 0 && Number.isFinite(n),
};

function within(low: number, high: number): Bound {
  return { text: `a number in [${low}, ${high}]`, holds: (n) => n >= low && n <= high };
}

function aboveZeroUpTo(high: number): Bound {
  return { text: `a number in (0, ${high}]`, holds: (n) => n > 0 && n <= high };
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  return String(value);
}
