/**
 * Loading APF manifests from files with Deno.
 *
 * @module
 */

import {
  type FlowControlConfiguration,
  loadConfiguration,
  type MergeOptions,
  mergeWithBootstrap,
} from "../../mod.ts";

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
  options: MergeOptions = {},
): Promise<FlowControlConfiguration> {
  const manifests = await Promise.all(
    paths.map(async (name) => ({ name, text: await Deno.readTextFile(name) })),
  );
  return mergeWithBootstrap(loadConfiguration({ manifests }), options).configuration;
}
