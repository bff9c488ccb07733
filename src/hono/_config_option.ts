/**
 * Turning the `config` option of `apf()` into an effective configuration,
 * eagerly, so that a bad configuration fails at `apf(...)` and never per
 * request.
 *
 * @module
 */

import {
  bootstrapConfiguration,
  DEFAULT_SERVER_CONCURRENCY_LIMIT,
  type EffectiveConfiguration,
  effectiveConfiguration,
  type FlowControlConfiguration,
  loadConfiguration,
  mergeWithBootstrap,
} from "../config/mod.ts";
import type { ApfConfigOption } from "./types.ts";

function isEffective(value: object): value is EffectiveConfiguration {
  return "serverConcurrencyLimit" in value && "nominalSum" in value && "dangling" in value;
}

function isObjects(value: object): value is FlowControlConfiguration {
  return "flowSchemas" in value && "priorityLevels" in value;
}

/**
 * The effective configuration of `config` at `serverConcurrencyLimit`.
 *
 * @throws {ConfigurationError} listing every problem of an invalid configuration.
 * @throws {TypeError} for a value of the wrong type.
 */
export function resolveConfigOption(
  config: ApfConfigOption | undefined,
  serverConcurrencyLimit: number | undefined,
  mandatoryOnly = false,
): EffectiveConfiguration {
  const scl = serverConcurrencyLimit ?? DEFAULT_SERVER_CONCURRENCY_LIMIT;
  if (!(Number.isSafeInteger(scl) && scl > 0)) {
    throw new RangeError(
      `Cannot create apf(): serverConcurrencyLimit must be a positive integer, got ${
        String(serverConcurrencyLimit)
      }`,
    );
  }
  if (config === undefined) {
    return effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: scl });
  }
  let user: FlowControlConfiguration;
  if (config === undefined) {
    user = { flowSchemas: [], priorityLevels: [] };
  } else if (typeof config === "string") {
    user = loadConfiguration({ manifests: [{ name: "apf() config", text: config }] });
  } else if (Array.isArray(config)) {
    user = loadConfiguration({ objects: config });
  } else if (typeof config === "object" && config !== null && isEffective(config)) {
    if (
      serverConcurrencyLimit !== undefined &&
      serverConcurrencyLimit !== config.serverConcurrencyLimit
    ) {
      throw new RangeError(
        `Cannot create apf(): serverConcurrencyLimit ${serverConcurrencyLimit} differs from the effective configuration's ${config.serverConcurrencyLimit}`,
      );
    }
    return config;
  } else if (typeof config === "object" && config !== null && isObjects(config)) {
    user = loadConfiguration({ objects: [...config.flowSchemas, ...config.priorityLevels] });
  } else {
    throw new TypeError(
      `Cannot create apf(): config must be manifest text, an array of objects, { flowSchemas, priorityLevels } or an effective configuration, got ${
        config === null ? "null" : typeof config
      }`,
    );
  }
  return effectiveConfiguration(mergeWithBootstrap(user, { mandatoryOnly }).configuration, {
    serverConcurrencyLimit: scl,
  });
}
