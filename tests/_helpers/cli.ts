/**
 * Running the `apf` CLI in tests: in memory (files and standard input
 * given, output captured), on a Deno host with captured output, or as a
 * process with the permissions of its tasks.
 */

import { type CliIO, createDenoIO, runCli, type SyncWriter } from "../../src/cli/mod.ts";

/** What a CLI run printed, read as it grows. */
export interface CapturedOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A {@linkcode CliIO} over in-memory files (a missing one is "No such file";
 * the object may change between reads) and standard input lines, capturing
 * what is printed.
 */
export function memoryIO(
  files: Record<string, string> = {},
  stdin: readonly string[] = [],
): { io: CliIO; output: CapturedOutput } {
  const output = { stdout: "", stderr: "" };
  const io: CliIO = {
    readTextFile: (path) => {
      const text = files[path];
      return text === undefined ? Promise.reject(new Error("No such file")) : Promise.resolve(text);
    },
    stdinLines: async function* () {
      yield* stdin;
    },
    stdout: (t) => void (output.stdout += t),
    stderr: (t) => void (output.stderr += t),
  };
  return { io, output };
}

/** Runs the CLI against in-memory files; returns the exit code and output. */
export async function run(
  args: string[],
  files: Record<string, string> = {},
  stdin: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { io, output } = memoryIO(files, stdin);
  const code = await runCli(args, io);
  return { code, ...output };
}

/** Runs the CLI on a Deno host (real files, `options` for the rest) with captured output. */
export async function runOnDeno(
  args: string[],
  options: Parameters<typeof createDenoIO>[0] = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "", stderr = "";
  const sink = (write: (s: string) => void): SyncWriter => ({
    writeSync(bytes) {
      write(new TextDecoder().decode(bytes));
      return bytes.length;
    },
  });
  const io = createDenoIO({
    stdout: sink((s) => stdout += s),
    stderr: sink((s) => stderr += s),
    ...options,
  });
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** The CLI's entry point, as the tasks run it. */
export const APF_MAIN: string = new URL("../../src/cli/main.ts", import.meta.url).pathname;

/**
 * The flags of `deno.json`'s task `name` (`root`'s, by default this
 * repository's): the words between `deno run` and `src/cli/main.ts`. The
 * CLI tests start `apf` with these, never with flags of their own.
 *
 * @throws {Error} when the task is not of that shape.
 */
export function taskPermissions(name: "apf" | "start", root?: string): string[] {
  const file = root === undefined
    ? new URL("../../deno.json", import.meta.url)
    : `${root}/deno.json`;
  const command: unknown = JSON.parse(Deno.readTextFileSync(file))?.tasks?.[name];
  if (typeof command !== "string") throw new Error(`deno.json has no task ${name}`);
  const words = command.trim().split(/\s+/);
  const main = words.indexOf("src/cli/main.ts");
  if (words[0] !== "deno" || words[1] !== "run" || main < 2) {
    throw new Error(`task ${name} is not "deno run <flags> src/cli/main.ts": ${command}`);
  }
  return words.slice(2, main);
}

/** The `apf` task's flags, as `deno task apf` runs the CLI. */
export const APF_TASK_PERMISSIONS: readonly string[] = taskPermissions("apf");

/** The `start` task's flags, as `deno task start` runs the demo. */
export const START_TASK_PERMISSIONS: readonly string[] = taskPermissions("start");

/** Options of {@linkcode apfCommand}. */
export interface ApfCommandOptions {
  /** Deno permission flags (default {@linkcode APF_TASK_PERMISSIONS}). */
  permissions?: readonly string[];
  /** Environment variables besides `NO_COLOR=1`. */
  env?: Record<string, string>;
  /** Standard input (default `"null"`); stdout and stderr are piped. */
  stdin?: "piped" | "null";
  /**
   * Another checkout to run `apf` from, in its directory (default: this
   * one), for measuring one version against another.
   */
  root?: string;
}

/** `deno run --quiet <permissions> src/cli/main.ts <args>`, not started yet. */
export function apfCommand(args: readonly string[], options: ApfCommandOptions = {}): Deno.Command {
  const main = options.root === undefined ? APF_MAIN : `${options.root}/src/cli/main.ts`;
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...(options.permissions ?? APF_TASK_PERMISSIONS), main, ...args],
    stdin: options.stdin ?? "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
    ...(options.root !== undefined && { cwd: options.root }),
  });
}

/** Runs `apf <args>` as a process to its end; returns its exit code and output as text. */
export async function apfOutput(
  args: readonly string[],
  options: Omit<ApfCommandOptions, "stdin"> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await apfCommand(args, options).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/** An `apf` process started by {@linkcode spawnApf}. */
export interface ApfProcess extends AsyncDisposable {
  readonly child: Deno.ChildProcess;
  /** Standard output as text, read with {@linkcode readUntil}. */
  readonly stdout: ReadableStreamDefaultReader<string>;
  /** All of standard error, once the process has ended. */
  readonly stderr: Promise<string>;
  /** Standard output read so far. */
  readonly seen: { text: string };
}

/**
 * Spawns `apf <args>` with the `apf` task's permissions, or
 * `options.permissions` (another task's). Disposing it kills the process if it
 * still runs and waits for it.
 */
export function spawnApf(args: readonly string[], options: ApfCommandOptions = {}): ApfProcess {
  const child = apfCommand(args, options).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  return {
    child,
    stdout,
    stderr,
    seen: { text: "" },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch {
        // it exited
      }
      await child.status;
      await stdout.cancel();
      await stderr;
    },
  };
}

/** Sends SIGTERM to `p` (if it still runs) and returns its exit code once it has ended. */
export async function stopApf(p: ApfProcess): Promise<number> {
  try {
    p.child.kill("SIGTERM");
  } catch {
    // it exited
  }
  const status = await p.child.status;
  await p.stdout.cancel();
  await p.stderr;
  return status.code;
}

/** Reads `reader` until `pattern` matches the text read; returns the match (all text in `seen`). */
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
