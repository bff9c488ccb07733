/**
 * Entry point of `deno task apf`.
 *
 * @module
 */

import { denoIO } from "./deno_io.ts";
import { runCli } from "./run.ts";

if (import.meta.main) {
  Deno.exitCode = await runCli(Deno.args, denoIO);
}
