/**
 * The latency samples of a learned server concurrency limit (`"auto"`,
 * `docs/adaptive.md`), on the level object's side: each seat an RPC caller
 * gets is timed from its dispatch to its release, never its wait in the
 * queue (the wait is a consequence of the limit, not the upstream's work),
 * and the controller collects the seats released since its last look with
 * the level's demand. The controller's one gradient controller learns from
 * them (`_learned_limit.ts`). Internal to the Cloudflare adapter.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";

/**
 * Most samples a level object keeps between two collections. A level object
 * serves at most a few thousand seats a second, and the controller collects
 * every sample window (1 s by default): beyond this, the controller has
 * stopped collecting, and later seats are only counted.
 */
export const MAX_PENDING_SAMPLES = 10_000;

/**
 * A seat held longer than this is forgotten unsampled: its lease was
 * renewed for ten minutes, a stream rather than a request, or it expired
 * without a release and nobody will release it.
 */
export const MAX_SAMPLED_HOLD_MS = 600_000;

/** The samples a level object hands the controller. */
export interface LevelSamples {
  /**
   * One per seat released since the last collection:
   * `[ms before the collection it was released, its latency in ms, the
   * server concurrency limit it was dispatched under]`. The last lets the
   * controller keep a minRTT measurement to the seats dispatched at the
   * pinned limit; times are relative, so that the clocks of the objects
   * need not agree.
   */
  samples: Array<[number, number, number]>;
  /** Seats released since the last collection, sampled or not (beyond the cap). */
  released: number;
  /** The level's highest seat demand (in use plus waiting) at a release; 0 without one. */
  peakDemand: number;
}

/** One level's seats in flight and the samples of those released. */
export class SampleRecorder {
  #clock: Clock;
  #held = new Map<number, { startedAt: number; limit: number }>();
  #samples: Array<[number, number, number]> = [];
  #released = 0;
  #peakDemand = 0;

  /** Times seats on `clock`. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Seat `id` was dispatched at `startedAt` (clock time) under server limit `limit`. */
  dispatched(id: number, startedAt: number, limit: number): void {
    this.#held.set(id, { startedAt, limit });
  }

  /**
   * Seat `id` went back; `executionMs`, when the caller measured it, is its
   * latency (a Worker's clock stands still while it computes, and its
   * measure leaves out the calls' own time); else the time since its
   * dispatch. `demand` is the level's seat demand now.
   */
  released(id: number, executionMs: number | undefined, demand: number): void {
    const seat = this.#held.get(id);
    if (seat === undefined) return;
    this.#held.delete(id);
    const now = this.#clock.now();
    const latency = executionMs ?? Math.max(0, now - seat.startedAt);
    this.#released++;
    if (demand > this.#peakDemand) this.#peakDemand = demand;
    if (this.#samples.length < MAX_PENDING_SAMPLES) this.#samples.push([now, latency, seat.limit]);
  }

  /** Seat `id` is no sample (given back early as long-running: its time is the stream's). */
  forget(id: number): void {
    this.#held.delete(id);
  }

  /** The samples since the last collection, timed relative to now; starts the next collection. */
  collect(): LevelSamples {
    const now = this.#clock.now();
    const samples = this.#samples.map(([at, latency, limit]): [number, number, number] => [
      now - at,
      latency,
      limit,
    ]);
    const collected = { samples, released: this.#released, peakDemand: this.#peakDemand };
    this.#samples = [];
    this.#released = 0;
    this.#peakDemand = 0;
    for (const [id, seat] of this.#held) {
      if (now - seat.startedAt > MAX_SAMPLED_HOLD_MS) this.#held.delete(id);
    }
    return collected;
  }

  /** Forgets every seat and sample (sampling turned off). */
  clear(): void {
    this.#held.clear();
    this.#samples = [];
    this.#released = 0;
    this.#peakDemand = 0;
  }
}
