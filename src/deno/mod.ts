/**
 * `@apf/edge/deno`: Deno-specific helpers (the coordinator server joins them
 * with the remote coordinator). The portable core is `@apf/edge`.
 *
 * @module
 */

export { loadConfigurationFiles } from "./config_files.ts";
