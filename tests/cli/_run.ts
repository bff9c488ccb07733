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
