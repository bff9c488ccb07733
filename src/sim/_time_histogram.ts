/**
 * How long a whole-number quantity (requests in flight) held each value, and
 * its time-weighted percentiles. Private to the simulator.
 *
 * @module
 */

/** Time spent at each value of a quantity, over the intervals it was told about. */
export class TimeHistogram {
  #msAt = new Map<number, number>();
  #totalMs = 0;
  #max = 0;

  /** Counts `ms` milliseconds at `value`. */
  add(value: number, ms: number): void {
    if (!(ms > 0)) return;
    this.#msAt.set(value, (this.#msAt.get(value) ?? 0) + ms);
    this.#totalMs += ms;
    if (value > this.#max) this.#max = value;
  }

  /** Milliseconds counted. */
  get totalMs(): number {
    return this.#totalMs;
  }

  /** The largest value held for some time (0 when empty). */
  get max(): number {
    return this.#max;
  }

  /**
   * The smallest value the quantity was at or below for at least a fraction
   * `p` of the time (0 when empty).
   */
  percentile(p: number): number {
    const values = [...this.#msAt.keys()].sort((a, b) => a - b);
    let below = 0;
    for (const v of values) {
      below += this.#msAt.get(v)!;
      if (below >= p * this.#totalMs * (1 - 1e-12)) return v;
    }
    return values.at(-1) ?? 0;
  }

  /** The time-weighted mean (0 when empty). */
  mean(): number {
    if (this.#totalMs === 0) return 0;
    let sum = 0;
    for (const [v, ms] of this.#msAt) sum += v * ms;
    return sum / this.#totalMs;
  }
}
