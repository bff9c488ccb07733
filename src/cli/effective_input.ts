/**
 * The options shared by commands that work on an effective configuration:
 * `--config <file>...`, `--server-concurrency N` and `--mandatory-only`.
 *
 * @module
 */

import {
  DEFAULT_SERVER_CONCURRENCY_LIMIT,
  type EffectiveConfiguration,
  parseConfiguration,
  resolveConfiguration,
} from "../config/mod.ts";
import type { ParsedArgs } from "./args.ts";
import type { CliIO, ExitCode } from "./io.ts";
import { readManifests } from "./read_manifests.ts";

/** The usage error for `-` given twice: standard input can be read only once. */
export const STDIN_TWICE = "standard input (-) can be read only once";

/** Parsed arguments that were accepted. */
export type OkArgs = Extract<ParsedArgs, { ok: true }>;

/** The effective configuration and merge notes, or the exit code after an error was printed. */
export type EffectiveInput =
  | { ok: true; effective: EffectiveConfiguration; notes: string[]; args: OkArgs }
  | { ok: false; code: ExitCode };

/**
 * Reads `--config` files, validates them, merges them with the built-in objects
 * and derives the effective configuration. Prints problems itself: usage and
 * read errors exit 2, an invalid configuration exits 1. With `readsStdin`,
 * the command needs standard input for itself, so `--config -` is refused.
 */
export async function loadEffective(
  parsed: ParsedArgs,
  io: CliIO,
  usage: string,
  options: { readsStdin?: boolean; allowAuto?: boolean } = {},
): Promise<EffectiveInput> {
  const fail = (msg: string): EffectiveInput => {
    io.stderr(`${msg}\nusage: ${usage}\n`);
    return { ok: false, code: 2 };
  };
  if (!parsed.ok) return fail(parsed.error);
  if (parsed.positionals.length > 0) return fail(`unexpected argument ${parsed.positionals[0]}`);
  const given = parsed.strings.get("server-concurrency")?.at(-1);
  if (given === "auto" && options.allowAuto !== true) {
    return fail("--server-concurrency auto is for apf serve: here the limit is a number");
  }
  // A learned limit starts from the configuration at the default; the gateway moves it.
  const scl = given === "auto" ? undefined : given;
  const serverConcurrencyLimit = scl === undefined ? DEFAULT_SERVER_CONCURRENCY_LIMIT : Number(scl);
  if (
    scl !== undefined &&
    (!/^\d+$/.test(scl) || !Number.isSafeInteger(serverConcurrencyLimit) ||
      serverConcurrencyLimit < 1)
  ) {
    return fail(`--server-concurrency must be a positive integer, got ${JSON.stringify(scl)}`);
  }
  const configs = parsed.strings.get("config") ?? [];
  const stdinConfigs = configs.filter((c) => c === "-").length;
  if (stdinConfigs > 1) return fail(STDIN_TWICE);
  if (stdinConfigs > 0 && options.readsStdin) {
    return fail("--config - cannot be used here: the command reads standard input itself");
  }
  const loaded = await loadEffectiveFiles(configs, io, {
    mandatoryOnly: parsed.booleans.has("mandatory-only"),
    serverConcurrencyLimit,
  });
  if (!loaded.ok) return loaded;
  return { ...loaded, args: parsed };
}

/** Options of {@linkcode loadEffectiveFiles}. */
export interface EffectiveFileOptions {
  /** Start from the mandatory objects only. */
  mandatoryOnly: boolean;
  /** The server concurrency limit. */
  serverConcurrencyLimit: number;
}

/**
 * Reads and validates manifest files, merges them with the built-in objects
 * and derives the effective configuration. Prints problems itself: read
 * errors exit 2, an invalid configuration exits 1.
 */
export async function loadEffectiveFiles(
  paths: readonly string[],
  io: CliIO,
  options: EffectiveFileOptions,
): Promise<
  { ok: true; effective: EffectiveConfiguration; notes: string[] } | { ok: false; code: ExitCode }
> {
  const read = await readManifests(paths, io);
  if (!read.ok) {
    io.stderr(`${read.error}\n`);
    return { ok: false, code: 2 };
  }
  const result = parseConfiguration({ manifests: read.sources });
  if (!result.ok) {
    io.stderr(result.errors.map((e) => `${e}\n`).join(""));
    return { ok: false, code: 1 };
  }
  const notes: string[] = [];
  const effective = resolveConfiguration(result.configuration, {
    serverConcurrencyLimit: options.serverConcurrencyLimit,
    mandatoryOnly: options.mandatoryOnly,
    onNote: (note) => notes.push(note),
  });
  return { ok: true, effective, notes };
}
