/**
 * Time-weighted statistics of a piecewise-constant value (Kubernetes:
 * `pkg/util/flowcontrol/fairqueuing/integrator.go`): the
 * seat-demand integrator each queue set keeps for borrowing, and the
 * smoothed demand statistics computed from it every adjustment period.
 *
 * @module
 */

import type { Clock } from "./clock.ts";

/** What an {@linkcode Integrator} observed since it was created or last reset. */
export interface IntegratorResults {
  /** Milliseconds observed. */
  durationMs: number;
  /** Time-weighted average (NaN when nothing was observed). */
  average: number;
  /**
   * Time-weighted standard deviation (NaN when nothing was observed, and
   * when rounding makes the variance slightly negative, as in Kubernetes).
   */
  deviation: number;
  /** Smallest value set (the current value right after a reset). */
  min: number;
  /** Largest value set (the current value right after a reset). */
  max: number;
}

/**
 * Integrates a value over time: `∫dt`, `∫x dt`, `∫x² dt`, and the extremes
 * of the values set, like Kubernetes' fair-queuing `Integrator`.
 *
 * @example
 * ```ts
 * import { FakeEventClock } from "@apf/edge";
 * import { Integrator } from "./mod.ts";
 * const clock = new FakeEventClock();
 * const demand = new Integrator(clock);
 * demand.set(4);
 * clock.advance(1000);
 * demand.set(0);
 * clock.advance(1000);
 * demand.results().average; // 2
 * ```
 */
export class Integrator {
  #clock: Clock;
  // A number from the start (not `undefined` until the constructor), so that storing the time
  // allocates nothing.
  #last = 0;
  #x = 0;
  #duration = 0;
  #sum = 0;
  #sumSquares = 0;
  #min = 0;
  #max = 0;

  /** Starts integrating at the clock's current time, with value 0. */
  constructor(clock: Clock) {
    this.#clock = clock;
    this.#last = clock.now();
  }

  /** The current value. */
  get value(): number {
    return this.#x;
  }

  /**
   * Sets the value from now on; `nowMs` saves a clock read when the caller
   * has just read the same clock (it must not be earlier than the last time
   * used).
   */
  set(x: number, nowMs?: number): void {
    this.#update(nowMs);
    this.#x = x;
    if (x < this.#min) this.#min = x;
    if (x > this.#max) this.#max = x;
  }

  /** Adds `dx` to the value from now on. */
  add(dx: number): void {
    this.set(this.#x + dx);
  }

  /** The statistics so far, without resetting them. */
  results(): IntegratorResults {
    this.#update();
    const d = this.#duration;
    let average = NaN, deviation = NaN;
    if (d > 0) {
      average = this.#sum / d;
      // A variance below 0 (rounding, for a nearly constant value) gives NaN, as in Kubernetes'
      // `AvgAndStdDev`; the seat-demand statistics read NaN as 0.
      const variance = this.#sumSquares / d - average * average;
      deviation = variance >= 0 ? Math.sqrt(variance) : NaN;
    }
    return { durationMs: d, average, deviation, min: this.#min, max: this.#max };
  }

  /** Returns the statistics so far and starts a new observation window. */
  reset(): IntegratorResults {
    const results = this.results();
    this.#duration = 0;
    this.#sum = 0;
    this.#sumSquares = 0;
    this.#min = this.#x;
    this.#max = this.#x;
    return results;
  }

  #update(nowMs?: number): void {
    const now = nowMs ?? this.#clock.now();
    const dt = now - this.#last;
    this.#last = now;
    if (dt > 0) {
      const x = this.#x;
      this.#duration += dt;
      this.#sum += x * dt;
      this.#sumSquares += x * x * dt;
    }
  }
}

/** Smoothing factor of the seat-demand envelope per 10 s period (half-life about 5 minutes). */
export const SEAT_DEMAND_SMOOTHING = 0.977;

/**
 * The per-level seat-demand statistics borrowing works from (Kubernetes'
 * `seatDemandStats` in `apf_controller.go`),
 * updated once per adjustment period from an integrator's observation.
 *
 * @example
 * ```ts
 * import { SeatDemandStats } from "./mod.ts";
 * const stats = new SeatDemandStats();
 * stats.update({ durationMs: 10_000, average: 3, deviation: 1, min: 2, max: 5 });
 * stats.smoothed; // 4
 * ```
 */
export class SeatDemandStats {
  /** Average demand of the last observation. */
  average = 0;
  /** Standard deviation of the last observation. */
  stdDev = 0;
  /** Highest demand of the last observation, rounded. */
  highWatermark = 0;
  /** Exponentially smoothed envelope `average + stdDev`, never below the latest envelope. */
  smoothed = 0;

  /** Folds in one observation window. */
  update(obs: IntegratorResults): void {
    this.highWatermark = Math.round(obs.max);
    if (!(obs.durationMs > 0)) return;
    const stdDev = Number.isNaN(obs.deviation) ? 0 : obs.deviation;
    this.average = obs.average;
    this.stdDev = stdDev;
    const envelope = obs.average + stdDev;
    const a = SEAT_DEMAND_SMOOTHING;
    this.smoothed = Math.max(envelope, a * this.smoothed + (1 - a) * envelope);
  }
}
