/**
 * Go's text forms of times and durations, as Kubernetes' debug dumps print
 * them: `time.Time.UTC().Format(time.RFC3339Nano)` and
 * `time.Duration.String()`. Internal to the dumps.
 *
 * @module
 */

/** What Go prints for the zero `time.Time` (a request that has not started). */
export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/**
 * The wall-clock time, in integer Unix nanoseconds, of clock time `tMs`,
 * given that clock time `nowMs` was wall-clock time `wallClockMs`. The
 * millisecond part of `wallClockMs` is kept exact (a bigint), so sub-ms
 * fractions survive the ~1e18 ns magnitude of today's times.
 */
export function wallTimeNs(wallClockMs: number, nowMs: number, tMs: number): bigint {
  const whole = Math.floor(wallClockMs);
  const restNs = Math.round((wallClockMs - whole - (nowMs - tMs)) * 1e6);
  return BigInt(whole) * 1_000_000n + BigInt(restNs);
}

/**
 * Formats Unix nanoseconds as Go's RFC3339Nano in UTC:
 * `2024-01-02T03:04:05.123456789Z`, trailing zeros of the fraction trimmed,
 * and no dot when the fraction is zero.
 */
export function formatRfc3339Nano(unixNs: bigint): string {
  let secs = unixNs / 1_000_000_000n;
  let frac = unixNs % 1_000_000_000n;
  if (frac < 0n) {
    frac += 1_000_000_000n;
    secs -= 1n;
  }
  const iso = new Date(Number(secs) * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  const base = iso.slice(0, iso.indexOf("."));
  if (frac === 0n) return `${base}Z`;
  return `${base}.${frac.toString().padStart(9, "0").replace(/0+$/, "")}Z`;
}

/** Appends `v % 10^prec` as a fraction without trailing zeros (Go's `fmtFrac`). */
function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let s = "";
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print ||= digit !== 0n;
    if (print) s = digit.toString() + s;
    v /= 10n;
  }
  return [print ? `.${s}` : "", v];
}

/**
 * Formats a duration in milliseconds (rounded to whole nanoseconds) as Go's
 * `time.Duration.String()`: `0s`, `750ns`, `1.5µs`, `5ms`, `1.5s`,
 * `1m30s`, `2h0m0s`.
 */
export function formatGoDuration(ms: number): string {
  const d = BigInt(Math.round(ms * 1e6));
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1_000_000_000n) {
    // Below a second Go switches to smaller units, like 1.2ms.
    if (u === 0n) return "0s";
    const [unit, prec] = u < 1000n ? ["ns", 0] : u < 1_000_000n ? ["µs", 3] : ["ms", 6];
    const [frac, whole] = fmtFrac(u, prec as number);
    out = `${whole}${frac}${unit}`;
  } else {
    const [frac, s] = fmtFrac(u, 9);
    u = s;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      // Go stops at hours (days differ in length).
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}
