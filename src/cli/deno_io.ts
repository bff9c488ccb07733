/**
 * The CLI's host services on Deno.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { readAllLimited, splitLines } from "./_streams.ts";
import {
  type CliIO,
  DEFAULT_MAX_INPUT_BYTES,
  type InputLine,
  OutputClosedError,
  type StdinLinesOptions,
} from "./io.ts";
import { checkNumber } from "../_shared/errors.ts";

/** Options of {@linkcode createDenoIO}. */
export interface DenoIOOptions {
  /** Most bytes of one input (a file, or standard input read whole); default 16 MiB. */
  maxInputBytes?: number;
  /**
   * The directory relative paths resolve against. Default: `INIT_CWD` when
   * it is set and readable (`deno task` runs at the project root but sets it
   * to where the user ran the task), else the process's working directory.
   */
  cwd?: string;
  /** Standard input; default `Deno.stdin.readable`. */
  stdin?: () => ReadableStream<Uint8Array>;
  /** Standard output; default `Deno.stdout` (a terminal when its `isTerminal()` says so). */
  stdout?: SyncWriter;
  /** Standard error; default `Deno.stderr`. */
  stderr?: SyncWriter;
}

/** A synchronous byte sink that may write fewer bytes than given, like `Deno.stdout`. */
export interface SyncWriter {
  /** Writes a prefix of `bytes`; returns how many bytes were written. */
  writeSync(bytes: Uint8Array): number;
}

/** Most bytes of one line of `apf classify` input when the command does not say: 64 KiB. */
const DEFAULT_MAX_LINE_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/** Writes all of `bytes`, looping over partial writes. */
export function writeAll(writer: SyncWriter, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length;) at += writer.writeSync(bytes.subarray(at));
}

/** `INIT_CWD` if the process may read it without a prompt, else `undefined`. */
function initCwd(): string | undefined {
  const env = { name: "env", variable: "INIT_CWD" } as const;
  if (Deno.permissions.querySync(env).state !== "granted") return undefined;
  const dir = Deno.env.get("INIT_CWD");
  return dir === "" ? undefined : dir;
}

/**
 * Creates the Deno host of the `apf` command: bounded reads of files and
 * standard input, complete writes to stdout and stderr.
 *
 * @example
 * ```ts
 * import { createDenoIO, runCli } from "@apf/edge/cli";
 * const io = createDenoIO({ maxInputBytes: 1024 * 1024 });
 * Deno.exitCode = await runCli(["validate", "apf.yaml"], io);
 * ```
 */
export function createDenoIO(options: DenoIOOptions = {}): CliIO {
  const maxInputBytes = options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
  checkNumber(
    maxInputBytes,
    (n) => Number.isSafeInteger(n) && n >= 0,
    () =>
      `Cannot create the Deno CLI host: maxInputBytes must be a non-negative integer, got ${maxInputBytes}`,
  );
  const stdin = options.stdin ?? (() => Deno.stdin.readable);
  const stdout = options.stdout ?? Deno.stdout;
  const stderr = options.stderr ?? Deno.stderr;
  let base: string | undefined | null = options.cwd ?? null;
  let stdinTaken = false;
  const takeStdin = () => {
    // Standard input can be read once; the commands refuse a second `-` as a usage error.
    if (stdinTaken) throw new Error("standard input was already read");
    stdinTaken = true;
    return stdin();
  };
  const resolvePath = (path: string) => {
    if (base === null) base = initCwd();
    return base === undefined || isAbsolute(path) ? path : resolve(base, path);
  };

  async function readFile(path: string): Promise<string> {
    if (path === "-") return await readAllLimited(takeStdin(), maxInputBytes);
    const file = await Deno.open(resolvePath(path));
    let closed = false;
    try {
      const info = await file.stat();
      if (info.isDirectory) throw new Error("is a directory");
      // Regular files, devices and pipes alike are read as a stream, up to the limit.
      closed = true; // the stream closes the file when it ends or is cancelled
      return await readAllLimited(file.readable, maxInputBytes);
    } finally {
      if (!closed) file.close();
    }
  }

  return {
    readTextFile: readFile,
    resolvePath,
    stdinLines: (opts: StdinLinesOptions = {}): AsyncIterable<InputLine> =>
      splitLines(takeStdin(), opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES),
    stdout(text) {
      try {
        writeAll(stdout, encoder.encode(text));
      } catch (e) {
        if (e instanceof Deno.errors.BrokenPipe) throw new OutputClosedError(e);
        throw e;
      }
    },
    isTerminal: () => {
      const out = stdout as SyncWriter & { isTerminal?: () => boolean };
      return typeof out.isTerminal === "function" && out.isTerminal();
    },
    stderr(text) {
      try {
        writeAll(stderr, encoder.encode(text));
      } catch (e) {
        // Nobody reads the diagnostics any more; the exit status still tells.
        if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
      }
    },
  };
}

/** The Deno host with the defaults of {@linkcode createDenoIO}. */
export const denoIO: CliIO = createDenoIO();
