/**
 * One borrowing adjustment of a coordinator's levels (Kubernetes:
 * `updateBorrowing` in `apf_controller.go`; `docs/semantics.md` §6): fold each
 * level's seat demand since the last adjustment into its statistics,
 * reallocate the current limits, and push them into the queue sets.
 * Internal to the coordinator.
 *
 * @module
 */

import { allocateCurrentLimits, borrowingTarget } from "../config/mod.ts";
import type { QueueSetConfigChange } from "../fairqueuing/queue_set.ts";
import { borrowingInput, type Level } from "./_level.ts";

/** One level's values in a borrowing adjustment (statistics after the update, target, new limit). */
export interface LevelAdjustment {
  /** The level's name. */
  name: string;
  /** The new current limit. */
  currentLimit: number;
  /** Rounded highest demand of the period. */
  highWatermark: number;
  /** Average demand of the period. */
  average: number;
  /** Standard deviation of the demand of the period. */
  stdDev: number;
  /** Smoothed demand envelope. */
  smoothed: number;
  /** The allocation target (for exempt levels, the first limited level's: see below). */
  target: number;
}

/** A borrowing adjustment: when, the fair fraction, and every level. */
export interface BorrowingAdjustment {
  /** Clock time of the adjustment. */
  atMs: number;
  /** `fairProp` of the allocation (0 when no fair sharing took place). */
  fairFraction: number;
  /** Every level, quiescing ones included, in configuration order. */
  levels: LevelAdjustment[];
}

/** What the allocation reads and updates of a level: limits, demand statistics, current limit. */
export type DemandLevel = Pick<Level, "effective" | "limits" | "stats" | "current" | "target">;

/**
 * Reallocates the current limits of `levels` (every level, quiescing ones
 * included; their statistics already updated) whose NominalCL sum is
 * `nominalSum` (`docs/semantics.md` §6.2); sets each level's `current` and `target`.
 */
export function allocateLevels(
  levels: readonly DemandLevel[],
  nominalSum: number,
  atMs: number,
): BorrowingAdjustment {
  const inputs = levels.map(borrowingInput);
  const { currentLimits, fairFraction } = allocateCurrentLimits(inputs, nominalSum);
  // Kubernetes reports the first limited level's target for exempt levels
  // (`updateBorrowingLocked`'s `items[0]`): first in its map's iteration order, which Go
  // randomizes; here first in configuration order, one of the values Kubernetes may show.
  const firstLimited = inputs.find((l) => !l.exempt);
  const exemptTarget = firstLimited === undefined ? 0 : borrowingTarget(firstLimited);
  const adjustment: BorrowingAdjustment = { atMs, fairFraction, levels: [] };
  levels.forEach((l, i) => {
    l.current = currentLimits[i]!;
    l.target = inputs[i]!.exempt ? exemptTarget : borrowingTarget(inputs[i]!);
    adjustment.levels.push({
      name: l.effective.name,
      currentLimit: l.current,
      highWatermark: l.stats.highWatermark,
      average: l.stats.average,
      stdDev: l.stats.stdDev,
      smoothed: l.stats.smoothed,
      target: l.target,
    });
  });
  return adjustment;
}

/**
 * Adjusts `levels` (every level, quiescing ones included) whose NominalCL
 * sum is `nominalSum`: folds each queue set's demand, allocates, and pushes
 * the limits into the queue sets. A level with a pending configuration
 * `change` gets its new limit through it (Kubernetes' `Complete` with the
 * new limit).
 */
export function adjustLevels(
  levels: readonly Level[],
  nominalSum: number,
  changes: Map<Level, QueueSetConfigChange> | null,
  atMs: number,
): BorrowingAdjustment {
  for (const l of levels) l.stats.update(l.queueSet.resetSeatDemand());
  const adjustment = allocateLevels(levels, nominalSum, atMs);
  for (const l of levels) pushLimit(l, changes);
  return adjustment;
}

/** Gives a level's queue set its current limit (through its pending configuration change, if any). */
export function pushLimit(level: Level, changes: Map<Level, QueueSetConfigChange> | null): void {
  const change = changes?.get(level);
  if (change !== undefined) change.complete(level.current);
  else if (!level.queueSet.closed) level.queueSet.setConcurrencyLimit(level.current);
}
