/**
 * The CLI's host services on Deno.
 *
 * @module
 */

import type { CliIO } from "./io.ts";

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

const encoder = new TextEncoder();

/** Reads files with `Deno.readTextFile` and writes to the process's stdout and stderr. */
export const denoIO: CliIO = {
  readTextFile: (path) => path === "-" ? readStdin() : Deno.readTextFile(path),
  stdout: (text) => void Deno.stdout.writeSync(encoder.encode(text)),
  stderr: (text) => void Deno.stderr.writeSync(encoder.encode(text)),
};
