/**
 * The `apf` command line, usable as a library.
 *
 * @module
 */

export { runCli, VERSION } from "./run.ts";
export type { CliIO, ExitCode } from "./io.ts";
export { denoIO } from "./deno_io.ts";
export { type ConfigPrintJson, type FlowSchemaJson, toConfigJson } from "./config_print.ts";
