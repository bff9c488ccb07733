/**
 * The one way from what a user hands us as configuration to the effective
 * configuration requests are classified and limited with: parse and
 * validate the user's objects, merge them with the built-in ones (all of
 * them, or the mandatory `exempt` and `catch-all` only), and compute every
 * level's limits at the server concurrency limit. `apf()`, the gateway,
 * the coordinator server, the Cloudflare controller, the remote client and
 * the CLI all come through here, so that a flag means the same everywhere.
 *
 * @module
 */

import { DEFAULT_SERVER_CONCURRENCY_LIMIT } from "./constants.ts";
import { type EffectiveConfiguration, effectiveConfiguration } from "./effective.ts";
import { loadConfiguration } from "./load.ts";
import { mergeWithBootstrap } from "./merge.ts";
import type { FlowControlConfiguration } from "./types.ts";
import { checkNumber } from "../_shared/errors.ts";

/**
 * A configuration as users give it: manifest text (YAML or JSON, one or
 * more documents, `List`s too), an array of objects, the user's objects
 * already loaded, or an effective configuration (taken as is).
 */
export type ConfigOption =
  | string
  | readonly unknown[]
  | FlowControlConfiguration
  | EffectiveConfiguration;

/** Options of {@linkcode resolveConfiguration}. */
export interface ResolveOptions {
  /** Seats of the whole server (default 600); must match an effective configuration's. */
  serverConcurrencyLimit?: number | undefined;
  /**
   * Merge with the mandatory built-in objects only (`exempt`, `catch-all`),
   * not Kubernetes' suggested ones (default false, as a kube-apiserver).
   */
  mandatoryOnly?: boolean | undefined;
  /** Told what the merge with the built-in objects did (a user object replacing one, …). */
  onNote?: ((note: string) => void) | undefined;
}

/**
 * The effective configuration of `option` (none: no user objects, so the
 * built-in configuration).
 *
 * @throws {ConfigurationError} listing every problem of invalid objects.
 * @throws {TypeError} for an option of the wrong type; {RangeError} for a bad limit.
 * @example
 * ```ts
 * import { resolveConfiguration } from "@apf/edge";
 *
 * const effective = resolveConfiguration(undefined, { mandatoryOnly: true, serverConcurrencyLimit: 10 });
 * console.assert(effective.priorityLevels.map((pl) => pl.name).join() === "exempt,catch-all");
 * ```
 */
export function resolveConfiguration(
  option: ConfigOption | undefined,
  options: ResolveOptions = {},
): EffectiveConfiguration {
  const given = options.serverConcurrencyLimit;
  const serverConcurrencyLimit = given ?? DEFAULT_SERVER_CONCURRENCY_LIMIT;
  checkNumber(
    serverConcurrencyLimit,
    (n) => Number.isSafeInteger(n) && n > 0,
    () =>
      `Cannot resolve the configuration: serverConcurrencyLimit must be a positive integer, got ${
        String(given)
      }`,
  );
  if (isEffective(option)) {
    if (given !== undefined && given !== option.serverConcurrencyLimit) {
      throw new RangeError(
        `Cannot resolve the configuration: serverConcurrencyLimit ${given} differs from the effective configuration's ${option.serverConcurrencyLimit}`,
      );
    }
    return option;
  }
  const merged = mergeWithBootstrap(userObjects(option), {
    mandatoryOnly: options.mandatoryOnly === true,
  });
  for (const note of merged.notes) options.onNote?.(note);
  return effectiveConfiguration(merged.configuration, { serverConcurrencyLimit });
}

function userObjects(option: Exclude<ConfigOption, EffectiveConfiguration> | undefined) {
  if (option === undefined) return { flowSchemas: [], priorityLevels: [] };
  if (typeof option === "string") {
    return loadConfiguration({ manifests: [{ name: "configuration", text: option }] });
  }
  if (Array.isArray(option)) return loadConfiguration({ objects: option });
  if (isObjects(option)) {
    return loadConfiguration({ objects: [...option.flowSchemas, ...option.priorityLevels] });
  }
  throw new TypeError(
    `Cannot resolve the configuration: expected manifest text, an array of objects, { flowSchemas, priorityLevels } or an effective configuration, got ${
      option === null ? "null" : typeof option
    }`,
  );
}

function isEffective(value: unknown): value is EffectiveConfiguration {
  return typeof value === "object" && value !== null && "serverConcurrencyLimit" in value &&
    "nominalSum" in value && "dangling" in value;
}

function isObjects(value: unknown): value is FlowControlConfiguration {
  return typeof value === "object" && value !== null && "flowSchemas" in value &&
    "priorityLevels" in value;
}
