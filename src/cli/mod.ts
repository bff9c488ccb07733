/**
 * The `apf` command line, usable as a library.
 *
 * @module
 */

export { runCli } from "./run.ts";
export {
  type CliIO,
  type ExitCode,
  type InputLine,
  type LineTooLong,
  OutputClosedError,
  type StdinLinesOptions,
} from "./io.ts";
export { createDenoIO, type DenoIOOptions, type SyncWriter } from "./deno_io.ts";
