/**
 * The latencies of one sample window (or of one minRTT measurement), kept
 * in bounded memory, and their percentile. Private to the controller.
 *
 * @module
 */

/**
 * Most latencies a window keeps. Beyond it, a uniform reservoir sample
 * (Vitter's algorithm R) stands for the window: the p90 of 4,096 draws is
 * within about ±0.5 percentile points of the window's, and sorting them
 * once a window costs well under a millisecond.
 */
export const MAX_WINDOW_SAMPLES = 4096;

/** Latencies of a window, their count, and the highest demand seen. */
export class SampleWindow {
  #values = new Float64Array(MAX_WINDOW_SAMPLES);
  #count = 0;
  #maxDemand: number | null = null;
  #random: () => number;

  /** A window drawing its reservoir replacements from `random` (numbers in [0, 1)). */
  constructor(random: () => number) {
    this.#random = random;
  }

  /** Samples added since the last clear. */
  get count(): number {
    return this.#count;
  }

  /** The highest demand a sample reported since the last clear; `null` when none did. */
  get maxDemand(): number | null {
    return this.#maxDemand;
  }

  /** Adds a latency (`Infinity` for a refusal) and the demand its sample reported, if any. */
  add(latencyMs: number, demand: number | undefined): void {
    const i = this.#count++;
    if (i < MAX_WINDOW_SAMPLES) {
      this.#values[i] = latencyMs;
    } else {
      // Algorithm R: the i-th sample replaces a kept one with probability MAX / (i + 1).
      const j = Math.floor(this.#random() * (i + 1));
      if (j < MAX_WINDOW_SAMPLES) this.#values[j] = latencyMs;
    }
    if (demand !== undefined && (this.#maxDemand === null || demand > this.#maxDemand)) {
      this.#maxDemand = demand;
    }
  }

  /**
   * The nearest-rank `p`-percentile of the kept latencies (the smallest
   * value at least a fraction `p` of them do not exceed); `null` when empty.
   */
  percentile(p: number): number | null {
    const n = Math.min(this.#count, MAX_WINDOW_SAMPLES);
    if (n === 0) return null;
    const sorted = this.#values.slice(0, n).sort();
    return sorted[Math.max(0, Math.ceil(p * n) - 1)]!;
  }

  /** Forgets every sample. */
  clear(): void {
    this.#count = 0;
    this.#maxDemand = null;
  }
}
