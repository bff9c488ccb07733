/**
 * `@apf/edge/deno`: Deno-specific helpers (the coordinator server arrives with
 * the coordinator). Re-exports the portable core.
 *
 * @module
 */

export * from "../../mod.ts";
export { loadConfigurationFiles } from "./config_files.ts";
