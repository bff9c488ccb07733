/**
 * `--server-concurrency auto` and its bounds: the server concurrency limit
 * learned from latency (`docs/adaptive.md`), for `apf serve` and
 * `apf coordinator`.
 *
 * @module
 */

import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import { resolveGradientOptions } from "../adaptive/gradient_options.ts";
import type { ParsedArgs } from "./args.ts";

/** The flags' usage. */
export const ADAPTIVE_FLAGS_USAGE =
  "[--server-concurrency N|auto] [--server-concurrency-min N] [--server-concurrency-max N] [--server-concurrency-initial N]";

/** The flags' help lines. */
export const ADAPTIVE_FLAGS_HELP =
  `  --server-concurrency N|auto seats of the whole server (default 600), or auto: learned from the
                             upstream's latency (a gradient controller, after Envoy's adaptive
                             concurrency): the most requests it takes without queueing them
  --server-concurrency-min N the lowest learned limit (default 3; with auto)
  --server-concurrency-max N the highest learned limit (default 1000; with auto)
  --server-concurrency-initial N
                             the learned limit to start from (default 20; with auto)`;

/** The bound flags' names (`--server-concurrency` itself is the effective input's). */
export const ADAPTIVE_FLAGS = [
  "server-concurrency-min",
  "server-concurrency-max",
  "server-concurrency-initial",
] as const;

/**
 * The controller's options `--server-concurrency auto` and its bounds ask
 * for, `null` for a static limit; or a usage error.
 */
export function adaptiveFlags(
  parsed: Extract<ParsedArgs, { ok: true }>,
): { ok: true; options: GradientControllerOptions | null } | { ok: false; error: string } {
  const auto = parsed.strings.get("server-concurrency")?.at(-1) === "auto";
  const options: GradientControllerOptions = {};
  const keys = { min: "min", max: "max", initial: "initial" } as const;
  for (const flag of ADAPTIVE_FLAGS) {
    const text = parsed.strings.get(flag)?.at(-1);
    if (text === undefined) continue;
    if (!auto) return { ok: false, error: `--${flag} needs --server-concurrency auto` };
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
      return {
        ok: false,
        error: `--${flag} must be a positive integer, got ${JSON.stringify(text)}`,
      };
    }
    options[keys[flag.slice("server-concurrency-".length) as keyof typeof keys]] = n;
  }
  if (!auto) return { ok: true, options: null };
  try {
    resolveGradientOptions(options);
  } catch (e) {
    return {
      ok: false,
      error: (e as Error).message.replace(/\b(min|max|initial)\b/g, "--server-concurrency-$1"),
    };
  }
  return { ok: true, options };
}

/** The start-up line's words for a learned limit: its bounds and where it starts. */
export function adaptiveText(options: GradientControllerOptions): string {
  const o = resolveGradientOptions(options);
  return `server concurrency auto (learned between ${o.min} and ${o.max}, starting at ${o.initial})`;
}
