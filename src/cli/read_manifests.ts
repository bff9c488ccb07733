/**
 * Reading manifest files for the CLI commands.
 *
 * @module
 */

import type { ManifestSource } from "../config/mod.ts";
import type { CliIO } from "./io.ts";

/** The files' texts, or the message saying which file could not be read. */
export type ReadResult =
  | { ok: true; sources: ManifestSource[] }
  | { ok: false; error: string };

/** Reads every path (`-` is standard input); stops at the first unreadable one. */
export async function readManifests(paths: readonly string[], io: CliIO): Promise<ReadResult> {
  const sources: ManifestSource[] = [];
  for (const path of paths) {
    try {
      sources.push({ name: path === "-" ? "<stdin>" : path, text: await io.readTextFile(path) });
    } catch (e) {
      return { ok: false, error: `cannot read ${path}: ${e instanceof Error ? e.message : e}` };
    }
  }
  return { ok: true, sources };
}
