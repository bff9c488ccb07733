/**
 * The configuration of a Cloudflare deployment's controller: as given (from
 * `env`, or to `setConfiguration`), as stored, and checked whole before
 * anything is applied. The server concurrency limit is a number, or
 * `"auto"`: learned from latency (`docs/adaptive.md`), with the learning's
 * options stored beside the configuration. Internal to the Cloudflare
 * adapter, except for the types and `configurationFromEnv`, which its entry
 * point exports.
 *
 * @module
 */

import {
  DEFAULT_SERVER_CONCURRENCY_LIMIT,
  type EffectiveConfiguration,
  loadConfiguration,
  resolveConfiguration,
} from "../config/mod.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import { resolveGradientOptions } from "../adaptive/gradient_options.ts";
import { adaptiveOptionsOf } from "../coordinator/adaptive_limit.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import type { ApfBindings } from "./env.ts";

/** The configuration as stored. */
export interface StoredConfiguration {
  /** Increases with every change. */
  version: number;
  /**
   * The configuration. With a learned limit its `serverConcurrencyLimit` is
   * where learning starts (the controller's `initial`); the one in force is
   * the controller's.
   */
  configuration: WireConfiguration;
  /**
   * The server concurrency limit is learned (`"auto"`): the controller's
   * options as given (`{}`: its defaults). Absent for a static limit.
   */
  adaptive?: GradientControllerOptions;
}

/**
 * A configuration as given to the controller (from `APF_CONFIG` and the
 * other variables, or to `setConfiguration`): manifests and objects, and the
 * limits to resolve them with. Kept in wire form as a
 * {@linkcode StoredConfiguration}.
 */
export interface ControllerConfigurationInput {
  /** FlowSchema and PriorityLevelConfiguration manifests (YAML or JSON text). */
  manifests?: string;
  /** Objects in manifest shape, after the manifests. */
  objects?: readonly unknown[];
  /**
   * The server concurrency limit shared by every level (default 600), or
   * `"auto"`: learned from latency (`docs/adaptive.md`), or the learning's
   * options (bounds `min`, `max`, `initial` and the controller's knobs).
   */
  serverConcurrencyLimit?: number | "auto" | GradientControllerOptions;
  /** Merge with the mandatory built-in objects only (default false). */
  mandatoryOnly?: boolean;
}

/** A configuration checked whole: its stored form and its effective form. */
export interface CheckedConfiguration {
  wire: WireConfiguration;
  effective: EffectiveConfiguration;
  /** The learned limit's options, or `null` for a static limit. */
  adaptive: GradientControllerOptions | null;
}

/**
 * Checks a configuration the way the coordinator will use it and returns
 * its wire form and effective form (with a learned limit: at its initial
 * limit), and the learned limit's options.
 *
 * @throws {ConfigurationError} listing every problem, or {RangeError} ({TypeError}) for a bad
 * limit or learning option.
 */
export function checkConfiguration(source: ControllerConfigurationInput): CheckedConfiguration {
  const adaptive = adaptiveOptionsOf(source.serverConcurrencyLimit);
  const limit = adaptive === null
    ? source.serverConcurrencyLimit as number | undefined
    : resolveGradientOptions(adaptive).initial;
  const user = loadConfiguration({
    manifests: source.manifests === undefined
      ? []
      : [{ name: "configuration", text: source.manifests }],
    objects: source.objects ?? [],
  });
  const wire: WireConfiguration = {
    serverConcurrencyLimit: limit ?? DEFAULT_SERVER_CONCURRENCY_LIMIT,
    mandatoryOnly: source.mandatoryOnly === true,
    objects: [...user.flowSchemas, ...user.priorityLevels],
  };
  const effective = resolveConfiguration(user, {
    serverConcurrencyLimit: wire.serverConcurrencyLimit,
    mandatoryOnly: wire.mandatoryOnly,
  });
  return { wire, effective, adaptive };
}

/**
 * The configuration `env` gives (`APF_CONFIG`, `APF_SERVER_CONCURRENCY`
 * and its bounds `APF_SERVER_CONCURRENCY_MIN`, `_MAX`, `_INITIAL`,
 * `APF_MANDATORY_ONLY`). The values themselves are checked where the
 * configuration is applied.
 *
 * @throws {TypeError} when a bound is set without `APF_SERVER_CONCURRENCY=auto`, or is not a
 * positive integer.
 */
export function configurationFromEnv(env: ApfBindings): ControllerConfigurationInput {
  const limit = serverConcurrencyFromEnv(env);
  return {
    ...(env.APF_CONFIG !== undefined && {
      // JSON is YAML: a value from `vars` reads as its own manifest text.
      manifests: typeof env.APF_CONFIG === "string"
        ? env.APF_CONFIG
        : JSON.stringify(env.APF_CONFIG),
    }),
    ...(limit !== undefined && { serverConcurrencyLimit: limit }),
    ...(env.APF_MANDATORY_ONLY === "true" && { mandatoryOnly: true }),
  };
}

const BOUNDS = { min: "MIN", max: "MAX", initial: "INITIAL" } as const;

/** `APF_SERVER_CONCURRENCY` and its bounds: a number, `"auto"`, the learning's options, or none. */
function serverConcurrencyFromEnv(
  env: ApfBindings,
): number | "auto" | GradientControllerOptions | undefined {
  const value = env.APF_SERVER_CONCURRENCY;
  // A JSON object in `vars` is the learning's options (knobs included).
  const auto = value === "auto" || (typeof value === "object" && value !== null);
  const options: GradientControllerOptions = typeof value === "object" && value !== null
    ? { ...value }
    : {};
  for (
    const [key, suffix] of Object.entries(BOUNDS) as [
      keyof typeof BOUNDS,
      (typeof BOUNDS)[keyof typeof BOUNDS],
    ][]
  ) {
    const name = `APF_SERVER_CONCURRENCY_${suffix}` as const;
    const text = env[name];
    if (text === undefined || text === "") continue;
    if (!auto) {
      throw new TypeError(
        `Cannot read the configuration from env: ${name} needs APF_SERVER_CONCURRENCY=auto, got APF_SERVER_CONCURRENCY=${
          JSON.stringify(value ?? null)
        }`,
      );
    }
    const n = typeof text === "number" ? text : /^\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new TypeError(
        `Cannot read the configuration from env: ${name} must be a positive integer, got ${
          JSON.stringify(text)
        }`,
      );
    }
    options[key] = n;
  }
  if (!auto) return value === undefined || value === "" ? undefined : Number(value);
  return Object.keys(options).length === 0 ? "auto" : options;
}
