/**
 * The coordinator's state of one priority level (Kubernetes'
 * `priorityLevelState` in `apf_controller.go`). Internal to the coordinator.
 *
 * @module
 */

import type { BorrowingLevel, EffectivePriorityLevel, LevelLimits } from "../config/mod.ts";
import { SeatDemandStats } from "../fairqueuing/integrator.ts";
import type { QueueSet } from "../fairqueuing/queue_set.ts";
import type { QueueSetConfig } from "../fairqueuing/types.ts";

/** One priority level: its configuration, limits, demand statistics and queue set. */
export interface Level {
  /** The level as last configured (kept while quiescing). */
  effective: EffectivePriorityLevel;
  /** Limits computed over every level, quiescing ones included. */
  limits: LevelLimits;
  /** The level's queue set. */
  queueSet: QueueSet;
  /** True while the level drains after being removed from the configuration. */
  quiescing: boolean;
  /** The current concurrency limit (after borrowing). */
  current: number;
  /** Seat-demand statistics (Kubernetes' `seatDemandStats`). */
  stats: SeatDemandStats;
  /** The allocation target of the last adjustment. */
  target: number;
}

/**
 * A fresh level: zeroed statistics, current limit NominalCL − ⌊LendableCL/2⌋
 * (`docs/semantics.md` §2.6).
 */
export function newLevel(
  effective: EffectivePriorityLevel,
  limits: LevelLimits,
  queueSet: QueueSet,
): Level {
  return {
    effective,
    limits,
    queueSet,
    quiescing: false,
    current: limits.initialCurrent,
    stats: new SeatDemandStats(),
    target: 0,
  };
}

/** The queue-set configuration of a level at concurrency limit `limit`. */
export function queueSetConfigOf(level: EffectivePriorityLevel, limit: number): QueueSetConfig {
  if (level.type === "Exempt") return { type: "Exempt", concurrencyLimit: limit };
  return { type: "Limited", concurrencyLimit: limit, queuing: level.queuing ?? null };
}

/** What the borrowing allocation needs to know about a level. */
export function borrowingInput(
  level: Pick<Level, "effective" | "limits" | "stats" | "current">,
): BorrowingLevel {
  return {
    exempt: level.effective.type === "Exempt",
    nominal: level.limits.nominal,
    min: level.limits.min,
    max: level.limits.max,
    highWatermark: level.stats.highWatermark,
    smoothed: level.stats.smoothed,
    current: level.current,
  };
}
