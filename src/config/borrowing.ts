/**
 * One borrowing adjustment (Kubernetes: `updateBorrowingLocked` in
 * `apf_controller.go`; `docs/semantics.md` §6.2): from each level's bounds
 * and recent seat demand, the current concurrency limit of every level. The same
 * computation gives the limits right after a configuration is applied, with
 * zero demand.
 *
 * @module
 */

import { roundHalfAwayFromZero } from "../_shared/numbers.ts";
import { computeConcurrencyAllocation } from "./fair_allocation.ts";

/** What the allocation needs to know about one priority level. */
export interface BorrowingLevel {
  /** Exempt levels are never limited; their usage above minCL is taken off the top. */
  exempt: boolean;
  /** NominalCL. */
  nominal: number;
  /** MinCL = NominalCL − LendableCL. */
  min: number;
  /** MaxCL = NominalCL + BorrowingCL. */
  max: number;
  /** Demand statistics: rounded high watermark of seats in use plus waiting. */
  highWatermark: number;
  /** Demand statistics: smoothed envelope (average + standard deviation). */
  smoothed: number;
  /** The limit now in force, kept when the allocation problem has no solution. */
  current: number;
}

/** New current limits (in level order) and the fair fraction metric. */
export interface BorrowingResult {
  /** The current concurrency limit of each level. */
  currentLimits: number[];
  /** `fairProp` of the allocation, 0 when no fair sharing took place. */
  fairFraction: number;
}

/**
 * The least current limit a level gets from an adjustment (Kubernetes'
 * `minCurrentCL`): an exempt level keeps what it used; a limited one keeps
 * what it used up to its nominal limit, and never less than its MinCL.
 */
export function minCurrentLimit(level: BorrowingLevel): number {
  if (level.exempt) return Math.max(level.min, level.highWatermark);
  return Math.max(level.min, Math.min(level.nominal, level.highWatermark));
}

/**
 * A limited level's target in the fair allocation (the `target_seats`
 * metric): its smoothed demand, but at least {@linkcode minCurrentLimit}.
 */
export function borrowingTarget(level: BorrowingLevel): number {
  return Math.max(minCurrentLimit(level), level.smoothed);
}

/**
 * Computes every level's current concurrency limit. `nominalSum` is the sum of
 * the levels' NominalCL (it can exceed the server limit because of rounding up).
 */
export function allocateCurrentLimits(
  levels: readonly BorrowingLevel[],
  nominalSum: number,
): BorrowingResult {
  let remaining = nominalSum;
  let minSum = 0;
  let minCurrentSum = 0;
  const current = levels.map((l) => l.current);
  const limited: { index: number; minCurrent: number; target: number }[] = [];
  levels.forEach((l, i) => {
    const minCurrent = minCurrentLimit(l);
    if (l.exempt) {
      current[i] = minCurrent;
      remaining -= minCurrent;
      return;
    }
    limited.push({ index: i, minCurrent, target: borrowingTarget(l) });
    minSum += l.min;
    minCurrentSum += minCurrent;
  });
  if (limited.length === 0) return { currentLimits: current, fairFraction: 0 };
  if (remaining <= minSum) {
    for (const { index } of limited) current[index] = levels[index]!.min;
    return { currentLimits: current, fairFraction: 0 };
  }
  if (remaining <= minCurrentSum) {
    const share = (remaining - minSum) / (minCurrentSum - minSum);
    for (const { index, minCurrent } of limited) {
      const min = levels[index]!.min;
      current[index] = min + roundHalfAwayFromZero((minCurrent - min) * share);
    }
    return { currentLimits: current, fairFraction: 0 };
  }
  let allocations: number[];
  let fairFraction: number;
  try {
    // As Kubernetes does, the limited levels share nominalSum, not `remaining`.
    ({ allocations, fairProp: fairFraction } = computeConcurrencyAllocation(
      nominalSum,
      limited.map(({ index, minCurrent, target }) => ({
        lowerBound: minCurrent,
        upperBound: levels[index]!.max,
        target,
      })),
    ));
  } catch {
    // No solution: keep the limits in force (Kubernetes logs and carries on).
    return { currentLimits: current, fairFraction: 0 };
  }
  limited.forEach(({ index }, k) => current[index] = roundHalfAwayFromZero(allocations[k]!));
  return { currentLimits: current, fairFraction };
}
