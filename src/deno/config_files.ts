/**
 * Loading APF manifests from files with Deno.
 *
 * @module
 */

import { type FlowControlConfiguration, loadConfiguration } from "../config/mod.ts";
import { mergeWithBootstrap } from "../config/merge.ts";

/**
 * Reads, validates and merges manifest files with the built-in configuration.
 * Throws a `ConfigurationError` listing every problem when any file is invalid;
 * rejects when a file cannot be read. Needs `--allow-read`.
 *
 * @example
 * ```ts ignore
 * import { loadConfigurationFiles } from "@apf/edge/deno";
 * const config = await loadConfigurationFiles(["apf.yaml"]);
 * ```
 */
export async function loadConfigurationFiles(
  paths: readonly string[],
  options: {
    /** Merge with the mandatory built-in objects only, not the suggested ones (default false). */
    mandatoryOnly?: boolean;
  } = {},
): Promise<FlowControlConfiguration> {
  const manifests = await Promise.all(
    paths.map(async (name) => ({ name, text: await Deno.readTextFile(name) })),
  );
  return mergeWithBootstrap(loadConfiguration({ manifests }), options).configuration;
}
