/**
 * The `apf` command line, usable as a library.
 *
 * @module
 */

export { runCli, VERSION } from "./run.ts";
export {
  type CliIO,
  DEFAULT_MAX_INPUT_BYTES,
  type ExitCode,
  type InputLine,
  type LineTooLong,
  OutputClosedError,
  type StdinLinesOptions,
} from "./io.ts";
export { createDenoIO, denoIO, type DenoIOOptions, type SyncWriter } from "./deno_io.ts";
export { type ConfigPrintJson, type FlowSchemaJson, toConfigJson } from "./config_print.ts";
