/**
 * The gradient controller: learns the server's concurrency limit from the
 * latency of completed work, as Envoy's adaptive concurrency filter does
 * (Envoy's docs, `docs/root/configuration/http/http_filters/adaptive_concurrency_filter.rst`;
 * source, `source/extensions/filters/http/adaptive_concurrency/controller/gradient_controller.cc`),
 * with two refinements from Netflix's concurrency-limits (`Gradient2Limit.java`
 * in `concurrency-limits-core/src/main/java/com/netflix/concurrency/limits/limit/`):
 * smoothing and the app-limited guard. It is pure: time and timers come
 * from the injected clock, samples from {@linkcode GradientController.record},
 * and the limit goes out to listeners; what admits requests under it is
 * someone else's business (APF's levels, through `coordinator/learned_limit.ts`).
 *
 * ## What it measures
 *
 * The latency of the work only: from when a request got its seat to when
 * the upstream finished with it. A wait in APF's queues is a consequence of
 * the limit, not a property of the upstream: counted, a lower limit would
 * look like a slower upstream and the limit would spiral down. What the
 * latency does include is the upstream's own queue, and that is the signal:
 * an upstream of K workers with work time S answers in about S while it
 * holds K requests or fewer, and in about S·n/K when it holds n > K.
 *
 * ## Phase 0: a window at the initial limit
 *
 * The controller starts at `initial` and measures nothing for one sample
 * window. The first minRTT measurement (below) pins the limit low; for APF
 * that is a new ServerCL shared out among the priority levels by their
 * demand (`docs/semantics.md` §6), and a level that has recorded no demand
 * yet may get no seat at a limit of 3: a pin at the very start would leave
 * the busy level without a seat until the next borrowing adjustment. After
 * a window at `initial`, the levels have their demand.
 *
 * ## Phase 1: the minRTT, an unloaded baseline
 *
 * The controller pins the limit to `minRttLimit` (3) and takes the
 * `percentile` of the next `minRttRequests` (50) latencies: that is the
 * minRTT, the latency of an upstream that is not queueing. Requests that
 * started before the pin ran at the old, higher limit and are ignored, as
 * Envoy ignores samples from before its `min_rtt_epoch_`; so are refusals
 * (they have no latency) and failures (a fast one would set a baseline no
 * success can meet). A percentile rather than the minimum: the smallest of
 * noisy samples is biased low, which Gradient2's authors found to cause
 * "excessive load shedding"; Envoy summarizes its minRTT window with its
 * percentile too. The limit learned before the pin is then restored (at the
 * start, `initial`), and the next measurement is due `minRttIntervalMs`
 * later, plus a random `jitter` fraction of it so that the instances of a
 * fleet do not all pin at once. The pin costs throughput: about
 * `minRttRequests × minRTT / minRttLimit` (0.8 s for 50 ms work) of low
 * concurrency every minute or so.
 *
 * ## Phase 2: sample windows and the gradient
 *
 * Every `sampleWindowMs` the window's latencies are summarized by the same
 * `percentile` into the sampleRTT, and
 *
 * ```
 * gradient = clamp((1 + buffer) · minRTT / sampleRTT, 0.5, maxGradient)
 * target   = gradient · limit + sqrt(gradient · limit)
 * ```
 *
 * The buffer (25%) tolerates ordinary variance before the gradient falls
 * below 1, and so does a floor of {@linkcode LATENCY_FLOOR_MS} (1 ms): a
 * window within a millisecond of the buffered minRTT does not lower the
 * limit. Neither Envoy nor Gradient2 has it; they measure upstreams of
 * milliseconds. A handler of microseconds (a CPU-bound app behind
 * `apf()`) has a minRTT of some 10 µs, and a window a few microseconds
 * slower, from a garbage collection or the scheduler, would halve the
 * limit again and again (`bench/RESULTS.md`, 2026-11-28, 20 to 5 in three
 * minutes). The square root is Envoy's headroom: without it a limit whose
 * latency sits at the minRTT would never grow. A window without samples
 * leaves the limit alone. When samples report a `demand` and none reached
 * half the limit, the target may not exceed the limit (Gradient2: an
 * app-limited upstream's latency cannot show that a higher limit is safe),
 * so an idle hour does not walk the limit up to `max`.
 *
 * ### Smoothing
 *
 * A lower target is taken at once (Envoy); a higher one by the `smoothing`
 * fraction of the way (Gradient2 smooths both ways by 0.2). The costs are
 * not symmetric: a limit too high fills the upstream's queue, where no
 * priority or fairness reaches, while a limit too low for a window wastes a
 * window's worth of capacity. The target is clamped to `[min, max]` and the
 * limit in force is its rounding.
 *
 * ## Why it is stable
 *
 * In the queueing regime (n > K) the sampleRTT is S·n/K and the minRTT is
 * S, so `gradient · limit = (1 + buffer) · K` whatever the limit was: the
 * next target is `(1 + buffer)·K + sqrt((1 + buffer)·K)`, reached in one
 * window going down and in a few going up. The fixed point is 1.25K + 1.1√K
 * requests in the upstream: 13 for K = 8, 7 for K = 4, within 2K for every
 * K ≥ 3. Below K the latency stays at the minRTT, the gradient is 1.25 and
 * the limit grows by a quarter plus the headroom a window until the
 * upstream queues. Since the target does not depend on the current limit,
 * noise is not amplified or accumulated: a relative error ε in a window's
 * sampleRTT moves the limit by about ε, and a window of a hundred samples
 * or more of ±20% noise has a p90 within a couple of percent (the
 * controller's tests hold the limit within ±20% of its mean for minutes on
 * such noise). The clamps bound the damage of a bad window: at most a
 * halving, at most `maxGradient` times plus the headroom.
 *
 * ## When the upstream changes
 *
 * Fewer workers (K from 8 to 4): the sampleRTT doubles, the gradient drops
 * and the limit goes to the new fixed point in a window or two. More
 * workers: the sampleRTT falls back to the minRTT, the gradient is 1.25 and
 * the limit grows, smoothed, for a few windows. Slower work (S doubles) is
 * different: the minRTT is now stale, every sampleRTT looks twice as
 * loaded, and the limit falls below K, losing throughput, until the next
 * measurement re-anchors it; if the limit sits at `min` for five windows in
 * a row the measurement starts at once (Envoy's rule). Faster work lets the
 * limit rise above the new fixed point until the next measurement.
 *
 * ## Timeouts, refusals and errors
 *
 * A timeout counts with its latency, at least the timeout; a refusal (503,
 * or a 429 meant as overload) counts as slower than any served request.
 * Once more than `1 − percentile` (10%) of a window's requests were dropped
 * so, the sampleRTT is a drop's latency; for a refusal, or a timeout longer
 * than 2.5 minRTT, the gradient is at its floor and the limit at least
 * halves (plus the headroom) each window: a hung upstream brings it to
 * `min` within seconds. A thinner tail does not move it, so a
 * background of timeouts on one slow endpoint does not ratchet it down, as
 * an AIMD limiter's every-drop backoff would. A failure counts with its
 * latency when it took at least the minRTT (the upstream held it); a faster
 * one says nothing of capacity and is ignored.
 *
 * ## The constants
 *
 * | option | default | why |
 * | --- | --- | --- |
 * | `min` | 3 | Envoy's `min_concurrency` default, its floor too |
 * | `max` | 1000 | Envoy's `max_concurrency_limit` default |
 * | `initial` | 20 | Gradient2's `initialLimit`: a window or two from a small pool's limit, far below the static 600; Envoy restores 3, which takes several windows |
 * | `sampleWindowMs` | 1000 | Gradient2's "ex. 1 second"; 160 samples at 8 workers × 50 ms; three windows fit in the 10 s |
 * | `minRttIntervalMs` | 60,000 | Envoy's documented interval |
 * | `jitter` | 0.15 | Envoy's default |
 * | `minRttRequests` | 50 | Envoy's `request_count` default |
 * | `minRttLimit` | 3 | Envoy's `min_concurrency` default |
 * | `percentile` | 0.9 | Envoy's default is p50; p90 reacts once 10% of a window is dropped (p50: once half is), and sees a queue of equal work times sooner (with exact 50 ms work, 9 requests in 8 workers at p90, 14 at p50: `apf simulate`) |
 * | `buffer` | 0.25 | Envoy's default |
 * | `maxGradient` | 2 | Envoy's clamp; the floor, `MIN_GRADIENT` 0.5, is Envoy's and Gradient2's |
 * | `smoothing` | 0.5 | of a rise: half of the noise, and a raised K is found within a few windows |
 * | `LATENCY_FLOOR_MS` | 1 | a timer's and an event loop's resolution: below it, no queue shows |
 * | `MIN_LIMIT_WINDOWS_BEFORE_REMEASURE` | 5 | Envoy's count of windows at the floor |
 *
 * @module
 */

import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import { checkNumber } from "../_shared/errors.ts";
import { SampleWindow } from "./_sample_window.ts";
import {
  type GradientControllerOptions,
  MIN_GRADIENT,
  MIN_LIMIT_WINDOWS_BEFORE_REMEASURE,
  type ResolvedGradientOptions,
  resolveGradientOptions,
} from "./gradient_options.ts";
import {
  type ControllerPhase,
  type GradientSnapshot,
  type LatencySample,
  type LimitSource,
  SAMPLE_OUTCOMES,
} from "./types.ts";

/** What a {@linkcode GradientController} runs on. */
export interface GradientControllerDeps {
  /** The clock of its windows and measurements (default: {@linkcode systemClock}). */
  clock?: Clock | undefined;
  /** Numbers in [0, 1) for the jitter and the window's reservoir (default: `Math.random`). */
  random?: (() => number) | undefined;
  /** Receives what a limit listener throws (default: logged with `console.error`). */
  onError?: ((error: unknown) => void) | undefined;
}

function logListenerError(error: unknown): void {
  console.error("apf: a limit listener threw:", error);
}

/**
 * Learns a concurrency limit from the latency of completed requests, as
 * Envoy's adaptive concurrency gradient controller does (see the module
 * doc). It does no I/O: its windows and measurements run on the injected
 * clock, and it learns only from what {@linkcode GradientController.record}
 * is told.
 *
 * @example
 * ```ts
 * import { FakeEventClock } from "../fairqueuing/clock.ts";
 * import { GradientController } from "./gradient_controller.ts";
 * const clock = new FakeEventClock();
 * using controller = new GradientController({ minRttRequests: 5 }, { clock });
 * controller.limit; // 3: measuring the minRTT
 * clock.advance(50);
 * for (let i = 0; i < 5; i++) controller.record({ latencyMs: 50, outcome: "ok" });
 * controller.limit; // 20: the initial limit, now that the minRTT is 50 ms
 * controller.onLimit((limit) => console.log(`limit ${limit}`));
 * ```
 */
export class GradientController implements LimitSource {
  #options: ResolvedGradientOptions;
  #clock: Clock;
  #random: () => number;
  #onError: (error: unknown) => void;
  #listeners = new Set<(limit: number) => void>();
  #window: SampleWindow;
  #phase: ControllerPhase = "warming-up";
  /** The learned limit; while measuring, the one restored after. */
  #estimate: number;
  #limit: number;
  #measuringSince = 0;
  #minRtt: number | null = null;
  #sampleRtt: number | null = null;
  #gradient: number | null = null;
  #windows = 0;
  #measurements = 0;
  #windowsAtMin = 0;
  #windowTimer: Timer | null = null;
  #measureTimer: Timer | null = null;
  #closed = false;

  /**
   * Starts at `initial` for one sample window, then measures the minRTT
   * (the limit is `minRttLimit` until `minRttRequests` samples came in),
   * then samples windows.
   *
   * @throws {TypeError} for an unknown option or a value of the wrong type;
   * {RangeError} for a value out of range.
   */
  constructor(options: GradientControllerOptions = {}, deps: GradientControllerDeps = {}) {
    this.#options = resolveGradientOptions(options);
    this.#clock = deps.clock ?? systemClock;
    this.#random = deps.random ?? Math.random;
    this.#onError = deps.onError ?? logListenerError;
    this.#window = new SampleWindow(this.#random);
    this.#estimate = this.#options.initial;
    this.#limit = this.#options.initial;
    this.#measureTimer = this.#clock.setTimer(this.#options.sampleWindowMs, () => {
      this.#measureTimer = null;
      this.#startMeasuring();
    });
  }

  /** The limit in force: an integer in [min, max], or `minRttLimit` while measuring. */
  get limit(): number {
    return this.#limit;
  }

  /** The options in force, defaults filled in. */
  get options(): ResolvedGradientOptions {
    return this.#options;
  }

  /**
   * Learns from one completed request; call it when the request completes
   * (its start is taken as now − `latencyMs`). Ignored once closed.
   *
   * @throws {RangeError} when `latencyMs` or `demand` is not a finite number >= 0;
   * {TypeError} for an unknown outcome or a value that is not a number.
   */
  record(sample: LatencySample): void {
    const { latencyMs, outcome, demand } = sample;
    checkNumber(
      latencyMs,
      (n) => n >= 0 && n !== Infinity,
      () => `Cannot record a sample: latencyMs must be a finite number >= 0, got ${latencyMs}`,
    );
    if (!SAMPLE_OUTCOMES.includes(outcome)) {
      throw new TypeError(
        `Cannot record a sample: outcome must be one of ${
          SAMPLE_OUTCOMES.map((o) => JSON.stringify(o)).join(", ")
        }, got ${JSON.stringify(outcome)}`,
      );
    }
    if (demand !== undefined) {
      checkNumber(
        demand,
        (n) => n >= 0 && n !== Infinity,
        () => `Cannot record a sample: demand must be a finite number >= 0, got ${demand}`,
      );
    }
    if (this.#closed || this.#phase === "warming-up") return;
    if (this.#phase === "measuring-min-rtt") {
      // Envoy: a request that started before the measurement ran at the old, higher limit.
      if (this.#clock.now() - latencyMs < this.#measuringSince) return;
      // A refusal has no latency, and a fast failure would set a baseline no success can meet.
      if (outcome === "rejected" || outcome === "error") return;
      this.#window.add(latencyMs, demand);
      if (this.#window.count >= this.#options.minRttRequests) this.#finishMeasuring();
      return;
    }
    // A failure faster than an unloaded upstream's answer says nothing of capacity.
    if (outcome === "error" && latencyMs < this.#minRtt!) return;
    // A refusal was not served in any time: slower than every served request.
    this.#window.add(outcome === "rejected" ? Infinity : latencyMs, demand);
  }

  /**
   * Calls `listener` with the new limit each time it changes. Returns a
   * function that unsubscribes.
   */
  onLimit(listener: (limit: number) => void): () => void {
    if (typeof listener !== "function") {
      throw new TypeError(
        `Cannot listen to the limit: listener must be a function, got ${typeof listener}`,
      );
    }
    const entry = (limit: number) => listener(limit);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  /** The controller's state now. */
  snapshot(): GradientSnapshot {
    return {
      limit: this.#limit,
      estimate: this.#estimate,
      phase: this.#phase,
      minRttMs: this.#minRtt,
      sampleRttMs: this.#sampleRtt,
      gradient: this.#gradient,
      samples: this.#window.count,
      windows: this.#windows,
      minRttMeasurements: this.#measurements,
      min: this.#options.min,
      max: this.#options.max,
    };
  }

  /** Stops every timer and forgets the listeners; later samples are ignored. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#windowTimer?.cancel();
    this.#measureTimer?.cancel();
    this.#windowTimer = this.#measureTimer = null;
    this.#listeners.clear();
  }

  /** Same as {@linkcode GradientController.close}, for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  // ---- phases -------------------------------------------------------------

  #startMeasuring(): void {
    this.#windowTimer?.cancel();
    this.#measureTimer?.cancel();
    this.#windowTimer = this.#measureTimer = null;
    this.#phase = "measuring-min-rtt";
    this.#measuringSince = this.#clock.now();
    this.#windowsAtMin = 0;
    this.#window.clear();
    this.#publish(this.#options.minRttLimit);
  }

  #finishMeasuring(): void {
    const o = this.#options;
    this.#minRtt = this.#window.percentile(o.percentile)!;
    this.#measurements++;
    this.#window.clear();
    this.#phase = "sampling";
    const delay = o.minRttIntervalMs * (1 + this.#random() * o.jitter);
    this.#measureTimer = this.#clock.setTimer(delay, () => {
      this.#measureTimer = null;
      this.#startMeasuring();
    });
    this.#scheduleWindow();
    this.#publish(this.#rounded());
  }

  #scheduleWindow(): void {
    this.#windowTimer = this.#clock.setTimer(this.#options.sampleWindowMs, () => {
      this.#windowTimer = null;
      this.#closeWindow();
    });
  }

  #closeWindow(): void {
    const o = this.#options;
    const sampleRtt = this.#window.percentile(o.percentile);
    const maxDemand = this.#window.maxDemand;
    this.#window.clear();
    if (sampleRtt === null) return this.#scheduleWindow(); // no news: the limit stays
    this.#windows++;
    const buffered = (1 + o.buffer) * this.#minRtt!;
    let gradient = clamp(ratio(buffered, sampleRtt), MIN_GRADIENT, o.maxGradient);
    // Within a millisecond of the buffered minRTT is the event loop's noise, not a queue.
    if (sampleRtt - buffered < LATENCY_FLOOR_MS) gradient = Math.max(gradient, 1);
    const scaled = gradient * this.#estimate;
    let target = scaled + Math.sqrt(scaled);
    // Gradient2: an upstream kept below half the limit cannot show that a higher one is safe.
    if (maxDemand !== null && maxDemand < this.#estimate / 2) {
      target = Math.min(target, this.#estimate);
    }
    // Down at once (Envoy), up by the smoothing fraction (Gradient2): see "Smoothing" above.
    const next = target < this.#estimate
      ? target
      : this.#estimate + o.smoothing * (target - this.#estimate);
    this.#estimate = clamp(next, o.min, o.max);
    this.#sampleRtt = sampleRtt;
    this.#gradient = gradient;
    const limit = this.#rounded();
    this.#windowsAtMin = limit === o.min ? this.#windowsAtMin + 1 : 0;
    this.#publish(limit);
    if (this.#closed) return; // a listener closed the controller
    // Envoy: stuck at the floor, the minRTT is likely stale (the upstream got slower).
    if (this.#windowsAtMin >= MIN_LIMIT_WINDOWS_BEFORE_REMEASURE) this.#startMeasuring();
    else this.#scheduleWindow();
  }

  #rounded(): number {
    return clamp(Math.round(this.#estimate), this.#options.min, this.#options.max);
  }

  #publish(limit: number): void {
    if (limit === this.#limit) return;
    this.#limit = limit;
    for (const listener of [...this.#listeners]) {
      try {
        listener(limit);
      } catch (e) {
        this.#onError(e);
      }
    }
  }
}

/**
 * How far above the buffered minRTT a window's latency must be before it
 * lowers the limit, in ms (see "Phase 2" in the module doc).
 */
export const LATENCY_FLOOR_MS = 1;

/** `buffered / sample`, with the limits of a zero latency made explicit. */
function ratio(buffered: number, sample: number): number {
  if (sample > 0) return buffered / sample;
  return buffered > 0 ? Infinity : 1; // faster than the baseline / both instantaneous
}

function clamp(n: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, n));
}
