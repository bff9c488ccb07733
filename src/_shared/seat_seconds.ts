/**
 * Seat-seconds, the unit of virtual time and of work (Kubernetes:
 * `pkg/util/flowcontrol/request/seat_seconds.go`): one seat
 * occupied for one second. Like Kubernetes' `SeatSeconds`, values are
 * integers counting 1e-8 seat-seconds, so sums and comparisons are exact and
 * ties in virtual finish time are real ties. Unlike Kubernetes' `uint64`,
 * they are JS numbers: exact up to 2^53 (about 90 million seat-seconds),
 * signed (no wrap-around), and kept small by rebasing (see `queue_set.ts`).
 *
 * @module
 */

import { roundHalfAwayFromZero } from "./numbers.ts";

/** Seat-seconds units per seat-second: values count 1e-8 seat-seconds. */
export const SEAT_SECONDS_SCALE = 1e8;

/**
 * The work of `seats` seats held for `durationMs` milliseconds, in units of
 * 1e-8 seat-seconds: `round(seats · d_ns / 10)` with `d` rounded to whole
 * nanoseconds first, as Kubernetes' `SeatsTimesDuration` computes it on
 * integer durations. A negative duration gives negative work (where Go's
 * unsigned result would wrap around to the same effect).
 *
 * @example
 * ```ts
 * import { seatsTimesDuration } from "./seat_seconds.ts";
 * seatsTimesDuration(1, 3); // 300000 (0.003 seat-seconds)
 * seatsTimesDuration(1, 3 - 1000); // -99700000
 * ```
 */
export function seatsTimesDuration(seats: number, durationMs: number): number {
  const ns = roundHalfAwayFromZero(durationMs * 1e6);
  return roundHalfAwayFromZero((seats * ns) / 10);
}

/**
 * How long `seats` seats must be held to do the work `ss`, in milliseconds
 * of whole nanoseconds (Kubernetes' `DurationPerSeat`, truncating).
 *
 * @example
 * ```ts
 * import { durationPerSeatMs } from "./seat_seconds.ts";
 * durationPerSeatMs(1500000, 3); // 5
 * ```
 */
export function durationPerSeatMs(ss: number, seats: number): number {
  return Math.trunc((ss / seats) * 10) / 1e6;
}

/** Converts seat-seconds units to (float) seat-seconds. */
export function seatSecondsToFloat(ss: number): number {
  return ss / SEAT_SECONDS_SCALE;
}

/**
 * Formats seat-seconds units the way Kubernetes prints `SeatSeconds`:
 * whole seat-seconds, a point, eight digits, and `ss`.
 *
 * @example
 * ```ts
 * import { formatSeatSeconds } from "./seat_seconds.ts";
 * formatSeatSeconds(300000); // "0.00300000ss"
 * formatSeatSeconds(100000000); // "1.00000000ss"
 * ```
 */
export function formatSeatSeconds(ss: number): string {
  if (!Number.isFinite(ss)) return `${ss}ss`;
  const v = BigInt(Math.round(ss));
  const abs = v < 0n ? -v : v;
  const scale = BigInt(SEAT_SECONDS_SCALE);
  const frac = (abs % scale).toString().padStart(8, "0");
  return `${v < 0n ? "-" : ""}${abs / scale}.${frac}ss`;
}
