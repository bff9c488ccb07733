/**
 * The borrowing adjustment (`docs/semantics.md` §6) for levels whose queue sets live
 * elsewhere: the Cloudflare topology's controller object holds one of these,
 * folds the seat-demand reports of the level objects into each level's
 * statistics every 10 s, and pushes the current limits it allocates. The
 * allocation is the embedded coordinator's own (`allocateLevels`); only
 * where the demand comes from differs.
 *
 * @module
 */

import {
  computeLevelLimits,
  type EffectiveConfiguration,
  type EffectivePriorityLevel,
  type LevelLimits,
} from "../config/mod.ts";
import { type IntegratorResults, SeatDemandStats } from "../fairqueuing/integrator.ts";
import { allocateLevels, type BorrowingAdjustment } from "./_adjust.ts";

/** One level object's seat demand since its previous report. */
export interface SeatDemandReport {
  /** The priority level. */
  level: string;
  /** The demand integrator's results for the period (`QueueSet.resetSeatDemand()`). */
  demand: IntegratorResults;
  /** True when nothing waits or executes in the level (lets a removed level go). */
  idle: boolean;
}

interface ControlledLevel {
  effective: EffectivePriorityLevel;
  limits: LevelLimits;
  stats: SeatDemandStats;
  current: number;
  target: number;
  /**
   * Removed from the configuration; kept, with its share, until reported idle
   * (`docs/semantics.md` §2.6).
   */
  quiescing: boolean;
}

/**
 * Current limits for every level of a configuration, from seat-demand
 * reports.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration } from "@apf/edge";
 * import { BorrowingController } from "./mod.ts";
 * const controller = new BorrowingController(effectiveConfiguration(bootstrapConfiguration()));
 * controller.adjust([{
 *   level: "workload-low",
 *   demand: { durationMs: 10_000, average: 200, deviation: 20, min: 150, max: 260 },
 *   idle: false,
 * }], 10_000);
 * controller.currentLimits()["workload-low"]; // 56 with no demand, now more
 * ```
 */
export class BorrowingController {
  #config!: EffectiveConfiguration;
  #levels = new Map<string, ControlledLevel>();
  #nominalSum = 0;
  #fairFraction = 0;

  /** Starts with `config`, allocated with zero demand (as `EffectivePriorityLevel.currentLimit`). */
  constructor(config: EffectiveConfiguration) {
    this.configure(config);
  }

  /** The configuration in force. */
  get configuration(): EffectiveConfiguration {
    return this.#config;
  }

  /** `fairProp` of the last allocation. */
  get fairFraction(): number {
    return this.#fairFraction;
  }

  /**
   * Applies a new configuration: levels keep their statistics and current
   * limit by name, new ones start at NominalCL − ⌊LendableCL/2⌋, removed ones
   * quiesce with their share until a report says they are idle. Then
   * `reports` (the demand since the last adjustment, if collected) are folded
   * in and every limit reallocated, as the embedded coordinator does on a
   * configuration change.
   */
  configure(
    next: EffectiveConfiguration,
    reports: readonly SeatDemandReport[] = [],
    atMs = 0,
  ): BorrowingAdjustment {
    const names = new Set(next.priorityLevels.map((pl) => pl.name));
    const draining = [...this.#levels.values()].filter((l) => !names.has(l.effective.name));
    this.#rebuild(next, draining.map((l) => l.effective));
    return this.adjust(reports, atMs);
  }

  /**
   * Folds `reports` into the levels' statistics (a level without a report
   * keeps its statistics; unknown levels are ignored), lets go of removed
   * levels reported idle, and reallocates every current limit (`docs/semantics.md` §6.2).
   */
  adjust(reports: readonly SeatDemandReport[], atMs: number): BorrowingAdjustment {
    let released = false;
    for (const r of reports) {
      const level = this.#levels.get(r.level);
      if (level === undefined) continue;
      level.stats.update(r.demand);
      if (level.quiescing && r.idle) released = true;
    }
    if (released) {
      const idle = new Set(reports.filter((r) => r.idle).map((r) => r.level));
      const draining = [...this.#levels.values()].filter((l) =>
        l.quiescing && !idle.has(l.effective.name)
      );
      this.#rebuild(this.#config, draining.map((l) => l.effective));
    }
    const adjustment = allocateLevels([...this.#levels.values()], this.#nominalSum, atMs);
    this.#fairFraction = adjustment.fairFraction;
    return adjustment;
  }

  /** The current limit of every level, quiescing ones included. */
  currentLimits(): Record<string, number> {
    const limits: Record<string, number> = {};
    for (const [name, l] of this.#levels) limits[name] = l.current;
    return limits;
  }

  /** The levels still draining after being removed from the configuration. */
  quiescing(): string[] {
    return [...this.#levels.values()].filter((l) => l.quiescing).map((l) => l.effective.name);
  }

  #rebuild(next: EffectiveConfiguration, draining: EffectivePriorityLevel[]): void {
    const all = [...next.priorityLevels, ...draining];
    const limits = computeLevelLimits(all.map((pl) => pl.object), next.serverConcurrencyLimit);
    const levels = new Map<string, ControlledLevel>();
    all.forEach((pl, i) => {
      const old = this.#levels.get(pl.name);
      const l: ControlledLevel = old ?? {
        effective: pl,
        limits: limits[i]!,
        stats: new SeatDemandStats(),
        current: limits[i]!.initialCurrent,
        target: 0,
        quiescing: false,
      };
      l.effective = pl;
      l.limits = limits[i]!;
      l.quiescing = i >= next.priorityLevels.length;
      levels.set(pl.name, l);
    });
    this.#levels = levels;
    this.#config = next;
    this.#nominalSum = limits.reduce((sum, l) => sum + l.nominal, 0);
  }
}
