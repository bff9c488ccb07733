/**
 * The latency samples of a learned server concurrency limit (`"auto"`,
 * `docs/adaptive.md`), on the level object's side: each seat it grants (to
 * an RPC caller or a WebSocket client) is timed from its dispatch to its
 * release, never its wait in the queue (the wait is a consequence of the
 * limit, not the upstream's work), and keeps how its work ended as the
 * release states it; the controller collects the seats released since its
 * last look with the level's demand. The controller's one gradient
 * controller learns from them (`_learned_limit.ts`). Internal to the
 * Cloudflare adapter.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import type { Seat } from "../coordinator/types.ts";
import { SampledSeat } from "../coordinator/adaptive_limit.ts";

/**
 * Most samples a level object keeps between two collections. A level object
 * serves at most a few thousand seats a second, and the controller collects
 * every sample window (1 s by default): beyond this, the controller has
 * stopped collecting, and later seats are only counted.
 */
export const MAX_PENDING_SAMPLES = 10_000;

/**
 * A seat released after being held longer than this is no sample: its
 * lease was renewed for ten minutes, a stream rather than a request. (A
 * seat whose lease expired, or whose session was lost, is given back
 * without a sample: `src/server/sessions.ts`.)
 */
export const MAX_SAMPLED_HOLD_MS = 600_000;

/**
 * One released seat: `[ms before the collection it was released, its
 * latency in ms, the server concurrency limit it was dispatched under, how
 * its work ended]`. The limit lets the controller keep a minRTT measurement
 * to the seats dispatched at the pinned limit; times are relative, so that
 * the clocks of the objects need not agree. The outcome is absent from the
 * samples of a level object of an earlier version: `"ok"`.
 */
export type LevelSample = [
  agoMs: number,
  latencyMs: number,
  limit: number,
  outcome?: SampleOutcome,
];

/** The samples a level object hands the controller. */
export interface LevelSamples {
  /** One per seat released since the last collection (up to {@linkcode MAX_PENDING_SAMPLES}). */
  samples: LevelSample[];
  /** Seats released since the last collection, sampled or not (beyond the cap). */
  released: number;
  /** The level's highest seat demand (in use plus waiting) at a release; 0 without one. */
  peakDemand: number;
}

/** One level's released seats' samples. */
export class SampleRecorder {
  #clock: Clock;
  #demand: () => number;
  /** `[clock time of its release, latency, limit, outcome]`. */
  #samples: Array<[number, number, number, SampleOutcome]> = [];
  #released = 0;
  #peakDemand = 0;

  /** Times seats on `clock`; `demand()` is the level's seat demand (in use plus waiting) now. */
  constructor(clock: Clock, demand: () => number) {
    this.#clock = clock;
    this.#demand = demand;
  }

  /**
   * `seat`, dispatched now under server limit `limit`, as a sample,
   * recorded when it is released: its latency is the `executionMs` the
   * release gives, when the caller measured it (a Worker's clock stands
   * still while it computes, and its measure leaves out the calls' own
   * time), else the time since its dispatch. A seat given back early as
   * long-running (`initialized()`) is no sample: its time is the stream's.
   */
  track(seat: Seat, limit: number): Seat {
    return new SampledSeat(seat, {
      record: (startedAt, outcome, executionMs) =>
        this.#record(startedAt, limit, outcome, executionMs),
    }, this.#clock.now());
  }

  #record(
    startedAt: number,
    limit: number,
    outcome: SampleOutcome,
    executionMs: number | undefined,
  ): void {
    const now = this.#clock.now();
    // Held for longer than a request is: forgotten (see MAX_SAMPLED_HOLD_MS).
    if (now - startedAt > MAX_SAMPLED_HOLD_MS) return;
    const latency = executionMs ?? Math.max(0, now - startedAt);
    this.#released++;
    const demand = this.#demand();
    if (demand > this.#peakDemand) this.#peakDemand = demand;
    if (this.#samples.length < MAX_PENDING_SAMPLES) {
      this.#samples.push([now, latency, limit, outcome]);
    }
  }

  /** The samples since the last collection, timed relative to now; starts the next collection. */
  collect(): LevelSamples {
    const now = this.#clock.now();
    const samples = this.#samples.map(([at, latency, limit, outcome]): LevelSample => [
      now - at,
      latency,
      limit,
      outcome,
    ]);
    const collected = { samples, released: this.#released, peakDemand: this.#peakDemand };
    this.#samples = [];
    this.#released = 0;
    this.#peakDemand = 0;
    return collected;
  }
}
