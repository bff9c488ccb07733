/**
 * Go's `time.ParseDuration`, for Kubernetes-style durations on the command
 * line and in `?timeout=` (`docs/semantics.md` §7.3): a sequence of decimal numbers with
 * units `ns`, `us` (`µs`), `ms`, `s`, `m`, `h`, like `1m30s` or `1.5s`.
 *
 * @module
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  "μs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/**
 * Parses a Go duration into milliseconds; `undefined` when it is not one.
 * `"0"` alone is 0; a leading sign is allowed, as in Go.
 *
 * @example
 * ```ts
 * import { parseDurationMs } from "./duration.ts";
 * parseDurationMs("1m30s"); // 90000
 * parseDurationMs("250ms"); // 250
 * parseDurationMs("10"); // undefined (a unit is required)
 * ```
 */
export function parseDurationMs(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith("-") || s.startsWith("+")) {
    if (s[0] === "-") sign = -1;
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < s.length) {
    const at = PART.lastIndex;
    const m = PART.exec(s);
    if (m === null || m.index !== at) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  return sign * total;
}
