/**
 * The controller object's learned server concurrency limit (`"auto"`,
 * `docs/adaptive.md`): the one gradient controller of a deployment
 * (`src/adaptive/gradient_controller.ts`), fed with the samples the level
 * objects collected (`_latency_samples.ts`): each seat's latency and how
 * its work ended, as the Worker's release said.
 *
 * The samples arrive in batches, once per collection, but the controller
 * must see them as they happened: its sample windows close at their times,
 * and a minRTT measurement counts only the seats that started after it
 * began. So its clock is an event clock the samples move: each collection
 * is replayed in the order its seats were released, the clock advanced to
 * each release before it is recorded (closing the windows due before it),
 * then to now. The limit it publishes reaches the levels once the
 * collection is over, at most a collection period late.
 *
 * That lateness matters to one rule. A measurement pins the limit at a
 * moment of the replay, but the levels hear of the pin only when the
 * controller pushes it, and seats dispatched in between ran at the old,
 * higher limit: a measurement takes only the seats dispatched at the pinned
 * limit (Envoy's `min_rtt_epoch_`, with the limit the level object had at
 * the dispatch as the epoch). Internal to the Cloudflare adapter.
 *
 * @module
 */

import { GradientController } from "../adaptive/gradient_controller.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import type { GradientSnapshot, SampleOutcome } from "../adaptive/types.ts";
import { isSampleOutcome } from "../coordinator/release_outcome.ts";
import { type Clock, FakeEventClock } from "../fairqueuing/clock.ts";
import type { LevelSamples } from "./_latency_samples.ts";

/** One level object's samples, and when the controller got them (on its clock). */
export interface ReceivedSamples {
  /** What the level object collected. */
  samples: LevelSamples;
  /** The controller's clock when the answer came. */
  receivedAt: number;
}

/** A server concurrency limit learned from the level objects' samples. */
export class LearnedLimit {
  /** The controller (its limit, options and snapshot). */
  readonly controller: GradientController;
  /** The options it was created with, as given. */
  readonly given: GradientControllerOptions;
  #clock: Clock;
  #replay: FakeEventClock;

  /**
   * Starts learning at the controller's `initial` limit, on the time of
   * `clock`.
   *
   * @throws {TypeError} or {RangeError} for an invalid option.
   */
  constructor(options: GradientControllerOptions, clock: Clock, random?: () => number) {
    this.given = options;
    this.#clock = clock;
    this.#replay = new FakeEventClock(clock.now());
    this.controller = new GradientController(options, {
      clock: this.#replay,
      ...(random !== undefined && { random }),
    });
  }

  /** The limit in force. */
  get limit(): number {
    return this.controller.limit;
  }

  /**
   * Replays the samples of one collection in the order the seats were
   * released, then moves the controller's time to now; returns the limit.
   * A sample's demand is the sum of the levels' highest demands of the
   * collection: the window's highest total, as near as the levels can tell
   * it (the controller's app-limited guard reads only a window's highest).
   */
  learn(received: readonly ReceivedSamples[]): number {
    const demand = received.reduce((sum, r) => sum + r.samples.peakDemand, 0);
    const all: Array<[number, number, number, SampleOutcome]> = [];
    for (const { samples, receivedAt } of received) {
      for (const [agoMs, latencyMs, limit, outcome = "ok"] of samples.samples) {
        // What the controller cannot read is left out (an older level object's has no outcome).
        if (!(latencyMs >= 0 && latencyMs < Infinity && agoMs >= 0)) continue;
        if (!isSampleOutcome(outcome)) continue;
        all.push([receivedAt - agoMs, latencyMs, limit, outcome]);
      }
    }
    all.sort((a, b) => a[0] - b[0]);
    const controller = this.controller;
    for (const [at, latencyMs, limit, outcome] of all) {
      this.#replay.advanceTo(at);
      // Dispatched before the level heard of the pin: it ran at the old limit.
      if (controller.snapshot().phase === "measuring-min-rtt" && limit !== controller.limit) {
        continue;
      }
      controller.record({ latencyMs, outcome, demand });
    }
    this.#replay.advanceTo(this.#clock.now());
    return controller.limit;
  }

  /** The controller's state. */
  snapshot(): GradientSnapshot {
    return this.controller.snapshot();
  }

  /** Stops learning. */
  close(): void {
    this.controller.close();
  }
}
