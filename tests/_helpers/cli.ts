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

/** The permissions of the `apf` and `start` tasks but the network. */
export const TASK_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-env=LOG_TOKENS,LOG_STREAM,INIT_CWD",
];

/** The task permissions with the network on loopback only, as the tests grant. */
export const LOOPBACK_PERMISSIONS: readonly string[] = [
  "--allow-net=127.0.0.1",
  ...TASK_PERMISSIONS,
];

/** Options of {@linkcode apfCommand}. */
export interface ApfCommandOptions {
  /** Deno permission flags (default {@linkcode LOOPBACK_PERMISSIONS}). */
  permissions?: readonly string[];
  /** Environment variables besides `NO_COLOR=1`. */
  env?: Record<string, string>;
  /** Standard input (default `"null"`); stdout and stderr are piped. */
  stdin?: "piped" | "null";
}

/** `deno run --quiet <permissions> src/cli/main.ts <args>`, not started yet. */
export function apfCommand(args: readonly string[], options: ApfCommandOptions = {}): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...(options.permissions ?? LOOPBACK_PERMISSIONS), APF_MAIN, ...args],
    stdin: options.stdin ?? "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...options.env },
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
 * Spawns `apf <args>` with the permissions of its tasks (loopback network
 * only), or `options.permissions`. Disposing it kills the process if it
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
