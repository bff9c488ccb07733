/**
 * The plain snapshots that metrics and debug dumps are rendered from. The
 * coordinator produces them; this room only reads them (it imports nothing
 * but the queue set's types).
 *
 * @module
 */

import type { QueueSetSnapshot } from "../fairqueuing/types.ts";

/** Seat-demand statistics of a level at the last borrowing adjustment (spec §6.1). */
export interface DemandSnapshot {
  /** Rounded highest demand (seats in use plus waiting) of the last period. */
  highWatermark: number;
  /** Time-weighted average demand of the last period. */
  average: number;
  /** Time-weighted standard deviation of the last period. */
  stdDev: number;
  /** Smoothed envelope (average + standard deviation). */
  smoothed: number;
  /** The allocation target derived from it. */
  target: number;
}

/** One priority level: its limits, demand, and queue set. */
export interface PriorityLevelSnapshot {
  /** The level's name. */
  name: string;
  /** `Exempt` or `Limited`. */
  type: "Exempt" | "Limited";
  /** True while a removed level drains (spec §2.6). */
  quiescing: boolean;
  /** NominalCL. */
  nominalLimit: number;
  /** MinCL = NominalCL − LendableCL (the `lower_limit_seats` metric). */
  lowerLimit: number;
  /** MaxCL = NominalCL + BorrowingCL (the `upper_limit_seats` metric). */
  upperLimit: number;
  /** The current limit (after borrowing). */
  currentLimit: number;
  /** Demand statistics used by the last adjustment. */
  demand: DemandSnapshot;
  /** The level's queue set (with requests when asked for). */
  queueSet: QueueSetSnapshot;
}

/** Everything a coordinator holds, at one instant. */
export interface CoordinatorSnapshot {
  /** Clock time of the snapshot (ms, monotonic). */
  nowMs: number;
  /** Wall-clock time of the snapshot (ms since the Unix epoch), to print times. */
  wallClockMs: number;
  /** The server concurrency limit. */
  serverConcurrencyLimit: number;
  /** `fairProp` of the last borrowing allocation (the `seat_fair_frac` metric). */
  seatFairFraction: number;
  /** Every level, sorted by name. */
  levels: PriorityLevelSnapshot[];
}
