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

/** Splits a byte stream into lines, without holding more than one line in memory. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncIterable<string> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    let nl: number;
    while ((nl = rest.indexOf("\n")) !== -1) {
      yield rest.slice(0, nl).replace(/\r$/, "");
      rest = rest.slice(nl + 1);
    }
  }
  if (rest !== "") yield rest;
}

/** Reads files with `Deno.readTextFile` and writes to the process's stdout and stderr. */
export const denoIO: CliIO = {
  readTextFile: (path) => path === "-" ? readStdin() : Deno.readTextFile(path),
  stdinLines: () => lines(Deno.stdin.readable),
  stdout: (text) => void Deno.stdout.writeSync(encoder.encode(text)),
  stderr: (text) => void Deno.stderr.writeSync(encoder.encode(text)),
};
