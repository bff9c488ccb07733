/**
 * A learned server concurrency limit in a simulation: the gradient
 * controller on the simulated clock, fed the upstream time of every
 * executed call (never its wait in APF's queues), driving the coordinator
 * through `applyServerConcurrencyLimit`, with a trace of every change.
 * Private to the simulator.
 *
 * @module
 */

import { GradientController } from "../adaptive/gradient_controller.ts";
import type { ResolvedGradientOptions } from "../adaptive/gradient_options.ts";
import type { LatencySample } from "../adaptive/types.ts";
import { type EffectiveConfiguration, withServerConcurrencyLimit } from "../config/mod.ts";
import type { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import { applyServerConcurrencyLimit } from "../coordinator/learned_limit.ts";
import type { FakeEventClock } from "../fairqueuing/clock.ts";
import { seededRandom } from "./_random.ts";
import type { AdaptiveResult, AdaptiveTracePoint } from "./config_types.ts";

/** The controller of one run, and what it did. */
export class LearnedLimitRun {
  #controller: GradientController;
  #clock: FakeEventClock;
  #trace: AdaptiveTracePoint[] = [];
  #inFlight: () => number | null;
  #reconfiguring = false;

  /**
   * A controller with `options` on `clock`; `inFlight` reads the upstream's
   * requests for the trace (`null` without one).
   */
  constructor(
    options: ResolvedGradientOptions,
    clock: FakeEventClock,
    inFlight: () => number | null,
  ) {
    this.#clock = clock;
    this.#inFlight = inFlight;
    // The jitter of its minRTT measurements, the same in every run.
    this.#controller = new GradientController(options, { clock, random: seededRandom(101) });
    this.#note();
  }

  /** `effective` at the limit the controller starts with (its minRTT measurement's). */
  initial(effective: EffectiveConfiguration): EffectiveConfiguration {
    return withServerConcurrencyLimit(effective, this.#controller.limit);
  }

  /** Makes `coordinator` follow the learned limit from now on. */
  drive(coordinator: EmbeddedCoordinator): void {
    this.#controller.onLimit((limit) => {
      this.#note();
      this.#reconfiguring = true;
      try {
        applyServerConcurrencyLimit(coordinator, limit);
      } finally {
        this.#reconfiguring = false;
      }
    });
  }

  /** True while the coordinator digests a new limit (its borrowing allocation runs then too). */
  get reconfiguring(): boolean {
    return this.#reconfiguring;
  }

  /** Tells the controller about a completed call. */
  record(sample: LatencySample): void {
    this.#controller.record(sample);
  }

  /** The trace and the final state; stops the controller. */
  finish(): AdaptiveResult {
    this.#controller.close();
    return {
      options: this.#controller.options,
      trace: this.#trace,
      final: this.#controller.snapshot(),
    };
  }

  /** Stops the controller's timers. */
  close(): void {
    this.#controller.close();
  }

  #note(): void {
    const s = this.#controller.snapshot();
    this.#trace.push({
      atMs: this.#clock.now(),
      limit: s.limit,
      phase: s.phase,
      minRttMs: s.minRttMs,
      sampleRttMs: s.sampleRttMs === Infinity ? null : s.sampleRttMs,
      gradient: s.gradient,
      upstreamInFlight: this.#inFlight(),
    });
  }
}
