/** Runs the `apf` CLI in memory for tests. */

import { type CliIO, runCli } from "../../src/cli/mod.ts";

/** Runs the CLI against in-memory files; returns the exit code and output. */
export async function run(
  args: string[],
  files: Record<string, string> = {},
  stdin: string[] = [],
) {
  let stdout = "", stderr = "";
  const io: CliIO = {
    readTextFile: (path) => {
      const text = files[path];
      return text === undefined ? Promise.reject(new Error("No such file")) : Promise.resolve(text);
    },
    stdinLines: async function* () {
      yield* stdin;
    },
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** Reads `stream` line by line until `pattern` matches a line; returns the match and all text read. */
export async function readUntil(
  reader: ReadableStreamDefaultReader<string>,
  pattern: RegExp,
  seen: { text: string },
): Promise<RegExpMatchArray> {
  for (;;) {
    const m = pattern.exec(seen.text);
    if (m !== null) return m;
    const { done, value } = await reader.read();
    if (done) throw new Error(`no ${pattern} in ${JSON.stringify(seen.text)}`);
    seen.text += value;
  }
}

const main = new URL("../../src/cli/main.ts", import.meta.url).pathname;

/** Spawns `apf <args>` with the permissions of its tasks (loopback network only). */
export function spawnApf(args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env=LOG_TOKENS,LOG_STREAM,INIT_CWD",
      main,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  return { child, stdout, stderr, seen: { text: "" } };
}
