/**
 * An adaptive server concurrency limit (`serverConcurrencyLimit: "auto"`):
 * a gradient controller (`src/adaptive/`) whose limit the coordinator
 * follows live as its ServerCL (`learned_limit.ts`: every level's NominalCL,
 * LendableCL and BorrowingCL recomputed, nothing that waits dropped or
 * reordered), fed by the seats the coordinator hands out. Each seat is a
 * sample: its time from its dispatch to its release (never its wait in a
 * queue, which is the limit's consequence, not the upstream's), how it
 * ended (the front end states a refusal, an error or a time-out with the
 * release: {@linkcode ReleaseOptions.outcome}, carried over the wire to a
 * coordinator server), and the seats that wanted the server then. A seat
 * given back early as long-running (a watch) is no sample: its time is the
 * stream's, not the upstream's work.
 *
 * The borrowing adjustment (`docs/semantics.md` §6) runs every sample
 * window rather than every 10 s: either the learned limit changed (which
 * reconfigures, and so adjusts) or, each window it did not, the adjustment
 * runs on its own. At a small limit (3 while the minRTT is measured) a level
 * that recorded no demand gets no seat, and its first requests should not
 * wait 10 s for one. The demand statistics are then folded each window, so
 * their smoothing forgets a burst sooner than Kubernetes' 10 s periods do.
 *
 * @module
 */

import { GradientController } from "../adaptive/gradient_controller.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import type { GradientSnapshot, SampleOutcome } from "../adaptive/types.ts";
import type { Clock, Timer } from "../fairqueuing/clock.ts";
import { followLearnedLimit, type ReconfigurableCoordinator } from "./learned_limit.ts";
import { releaseOutcomeOf } from "./release_outcome.ts";
import type {
  AcquireOptions,
  Admission,
  Coordinator,
  ReleaseOptions,
  Seat,
  SeatRequest,
} from "./types.ts";

/**
 * The `serverConcurrencyLimit` option: seats of the whole server, or
 * `"auto"` (learned from latency, the controller's defaults), or the
 * controller's options (bounds, initial limit, knobs).
 */
export type ServerConcurrencyLimitOption = number | "auto" | GradientControllerOptions;

/** The controller's options an option asks for, or `null` for a static limit. */
export function adaptiveOptionsOf(
  option: ServerConcurrencyLimitOption | undefined,
): GradientControllerOptions | null {
  if (option === undefined || typeof option === "number") return null;
  if (option === "auto") return {};
  if (typeof option === "object" && option !== null && !Array.isArray(option)) return option;
  throw new TypeError(
    `Cannot configure the server concurrency limit: serverConcurrencyLimit must be a positive integer, "auto" or the adaptive controller's options, got ${
      JSON.stringify(option)
    }`,
  );
}

/** A coordinator an adaptive limit can drive. */
export interface AdaptiveCoordinator extends ReconfigurableCoordinator {
  /** Seats in use plus seats waiting, over the limited levels. */
  seatDemand(): number;
  /** Who runs the borrowing adjustment (only `"timer"` is adjusted here). */
  readonly borrowing: "timer" | "external";
  /** Runs the borrowing adjustment now. */
  adjustLimits(): unknown;
}

/** A coordinator that can answer at once (the embedded one's `begin`). */
export interface AdmittingCoordinator extends Coordinator {
  /** An admission as a value when decided at once, else a promise. */
  begin(request: SeatRequest, options?: AcquireOptions): Admission | Promise<Admission>;
}

/** What an {@linkcode AdaptiveLimit} runs on. */
export interface AdaptiveLimitDeps {
  clock: Clock;
  /** Random numbers in [0, 1) for the controller's jitter (default `Math.random`). */
  random?: () => number;
  /** Told when a listener of the limit throws. */
  onError?: (error: unknown) => void;
}

/** A coordinator's ServerCL, learned from the seats it hands out. */
export class AdaptiveLimit implements SampleSink {
  /** The controller (its limit, snapshot and options). */
  readonly controller: GradientController;
  #coordinator: AdaptiveCoordinator;
  #clock: Clock;
  #stop: () => void;
  #tick: Timer | null = null;
  #changed = false;

  /**
   * Starts learning: the coordinator's ServerCL is the controller's limit
   * from now on.
   *
   * @throws {TypeError} or {RangeError} for an invalid controller option.
   */
  constructor(
    coordinator: AdaptiveCoordinator,
    options: GradientControllerOptions,
    deps: AdaptiveLimitDeps,
  ) {
    this.#coordinator = coordinator;
    this.#clock = deps.clock;
    this.controller = new GradientController(options, {
      clock: deps.clock,
      ...(deps.random !== undefined && { random: deps.random }),
      ...(deps.onError !== undefined && { onError: deps.onError }),
    });
    const unfollow = followLearnedLimit(coordinator, this.controller);
    const unlisten = this.controller.onLimit(() => this.#changed = true);
    this.#stop = () => {
      unfollow();
      unlisten();
    };
    if (coordinator.borrowing === "timer") this.#schedule();
  }

  /** Every window: the borrowing adjustment, unless the limit changed (and so adjusted). */
  #schedule(): void {
    this.#tick = this.#clock.setTimer(this.controller.options.sampleWindowMs, () => {
      this.#tick = null;
      if (!this.#changed && !this.#coordinator.closed) this.#coordinator.adjustLimits();
      this.#changed = false;
      this.#schedule();
    });
  }

  /** The controller's state. */
  snapshot(): GradientSnapshot {
    return this.controller.snapshot();
  }

  /** `seat`, dispatched now, as a sample: recorded when it is released. */
  track(seat: Seat): SampledSeat {
    return new SampledSeat(seat, this, this.#clock.now());
  }

  /**
   * `coordinator`'s `begin` and `acquire`, each seat they admit tracked:
   * for a host that hands its seats out (the coordinator server's
   * sessions, whose clients release them when their work is done).
   */
  tracking(coordinator: AdmittingCoordinator): AdmittingCoordinator {
    return trackingSeats(coordinator, (seat) => this.track(seat));
  }

  /**
   * Records one seat's time on this limit's clock (the holder's own measure
   * is not used: the time a client held a seat of a coordinator server is
   * what it learns from); called by {@linkcode SampledSeat}.
   */
  record(startedAt: number, outcome: SampleOutcome): void {
    this.controller.record({
      latencyMs: Math.max(0, this.#clock.now() - startedAt),
      outcome,
      demand: this.#coordinator.seatDemand(),
    });
  }

  /** Stops learning (the ServerCL stays where it is) and the controller's timers. */
  close(): void {
    this.#stop();
    this.#tick?.cancel();
    this.#tick = null;
    this.controller.close();
  }
}

/**
 * `coordinator` with each seat it admits wrapped by `track` (a sample of a
 * learned limit): for a host that hands its seats out.
 */
export function trackingSeats(
  coordinator: AdmittingCoordinator,
  track: (seat: Seat) => Seat,
): AdmittingCoordinator {
  const tracked = (admission: Admission): Admission =>
    admission.admitted ? { ...admission, seat: track(admission.seat) } : admission;
  return {
    acquire: (request, options) => coordinator.acquire(request, options).then(tracked),
    begin: (request, options) => {
      const answer = coordinator.begin(request, options);
      return answer instanceof Promise ? answer.then(tracked) : tracked(answer);
    },
  };
}

/** Where a {@linkcode SampledSeat} reports its sample ({@linkcode AdaptiveLimit}, or a collector). */
export interface SampleSink {
  /**
   * A seat dispatched at `startedAt` (clock time) went back after work that
   * ended as `outcome`; `executionMs` is the time its holder measured, when
   * it gave one.
   */
  record(startedAt: number, outcome: SampleOutcome, executionMs?: number): void;
}

/**
 * A seat whose time, from its dispatch to its release, is a sample of the
 * adaptive limit. State how the work ended with the release
 * (`release({ outcome: "rejected" })`), or set
 * {@linkcode SampledSeat.outcome} before releasing it.
 */
export class SampledSeat implements Seat {
  /** How the work ended, when the release does not say (default `"ok"`). */
  outcome: SampleOutcome = "ok";
  #seat: Seat;
  #sink: SampleSink;
  #startedAt: number;
  #sampled = false;

  constructor(seat: Seat, sink: SampleSink, startedAt: number) {
    this.#seat = seat;
    this.#sink = sink;
    this.#startedAt = startedAt;
  }

  get priorityLevel(): string {
    return this.#seat.priorityLevel;
  }

  /** @throws {TypeError} for an unknown `outcome` (the seat stays held). */
  release(options?: ReleaseOptions): boolean {
    // Checked first: a bad argument changes nothing.
    const outcome = releaseOutcomeOf(options) ?? this.outcome;
    const released = this.#seat.release(options);
    if (released && !this.#sampled) {
      this.#sampled = true;
      this.#sink.record(this.#startedAt, outcome, options?.executionMs);
    }
    return released;
  }

  stillHeld(): boolean {
    return this.#seat.stillHeld?.() ?? true;
  }

  initialized(): void {
    // A long-running request's time is its stream's, not the upstream's work.
    this.#sampled = true;
    this.#seat.initialized();
  }

  [Symbol.dispose](): void {
    this.release();
  }
}

/**
 * The outcome an HTTP status says of the upstream: 503 and 429 are
 * refusals (overload), 504 a time-out, other 5xx errors; anything else
 * was served.
 */
export function outcomeOfStatus(status: number): SampleOutcome {
  if (status === 503 || status === 429) return "rejected";
  if (status === 504) return "timeout";
  return status >= 500 ? "error" : "ok";
}
