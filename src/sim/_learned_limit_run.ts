/**
 * A learned server concurrency limit in a simulation: the one
 * {@linkcode AdaptiveLimit} of `apf()` and `apf serve` (the gradient
 * controller, the coordinator following its limit as a new ServerCL, the
 * borrowing adjustment every sample window) on the simulated clock, fed
 * the upstream time of every executed call (never its wait in APF's
 * queues), with a trace of every change. Private to the simulator.
 *
 * @module
 */

import type { ResolvedGradientOptions } from "../adaptive/gradient_options.ts";
import type { LatencySample } from "../adaptive/types.ts";
import { type EffectiveConfiguration, withServerConcurrencyLimit } from "../config/mod.ts";
import { type AdaptiveCoordinator, AdaptiveLimit } from "../coordinator/adaptive_limit.ts";
import type { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import type { FakeEventClock } from "../fairqueuing/clock.ts";
import { seededRandom } from "./_random.ts";
import type { AdaptiveResult, AdaptiveTracePoint } from "./config_types.ts";

/** The learned limit of one run, and what it did. */
export class LearnedLimitRun {
  #options: ResolvedGradientOptions;
  #clock: FakeEventClock;
  #trace: AdaptiveTracePoint[] = [];
  #inFlight: () => number | null;
  #adaptive: AdaptiveLimit | null = null;
  #reconfiguring = false;

  /**
   * A learned limit with `options` on `clock`; `inFlight` reads the
   * upstream's requests for the trace (`null` without one).
   */
  constructor(
    options: ResolvedGradientOptions,
    clock: FakeEventClock,
    inFlight: () => number | null,
  ) {
    this.#options = options;
    this.#clock = clock;
    this.#inFlight = inFlight;
  }

  /** `effective` at the limit the controller starts with (its minRTT measurement's). */
  initial(effective: EffectiveConfiguration): EffectiveConfiguration {
    return withServerConcurrencyLimit(effective, this.#options.initial);
  }

  /**
   * Makes `coordinator` follow the learned limit from now on. The
   * allocations that a new limit and the window's adjustment run are marked
   * ({@linkcode reconfiguring}): the periodic ones are what the simulation
   * lists, as without a learned limit.
   */
  drive(coordinator: EmbeddedCoordinator): void {
    const quietly = <T>(f: () => T): T => {
      this.#reconfiguring = true;
      try {
        return f();
      } finally {
        this.#reconfiguring = false;
      }
    };
    const host: AdaptiveCoordinator = {
      get configuration() {
        return coordinator.configuration;
      },
      get closed() {
        return coordinator.closed;
      },
      configure: (next) => quietly(() => coordinator.configure(next)),
      seatDemand: () => coordinator.seatDemand(),
      borrowing: "timer",
      adjustLimits: () => quietly(() => coordinator.adjustLimits()),
    };
    // The jitter of its minRTT measurements, the same in every run.
    const adaptive = new AdaptiveLimit(host, this.#options, {
      clock: this.#clock,
      random: seededRandom(101),
    });
    this.#adaptive = adaptive;
    adaptive.controller.onLimit(() => this.#note());
    this.#note();
  }

  /** True while the coordinator digests a new limit or a window's adjustment. */
  get reconfiguring(): boolean {
    return this.#reconfiguring;
  }

  /** Tells the controller about a completed call. */
  record(sample: LatencySample): void {
    this.#adaptive?.controller.record(sample);
  }

  /** The trace and the final state (after {@linkcode drive}); stops the controller. */
  finish(): AdaptiveResult {
    const adaptive = this.#adaptive!;
    adaptive.close();
    return { options: adaptive.controller.options, trace: this.#trace, final: adaptive.snapshot() };
  }

  /** Stops the controller's and the window's timers. */
  close(): void {
    this.#adaptive?.close();
  }

  #note(): void {
    const s = this.#adaptive!.snapshot();
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
