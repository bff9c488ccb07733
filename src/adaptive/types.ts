/**
 * The data a concurrency controller takes in and gives out: the latency
 * sample of a completed request, the learned limit as a source others
 * follow, and the controller's state for metrics and dumps.
 *
 * @module
 */

/**
 * How a request the upstream held ended:
 *
 * - `"ok"`: it was served (whatever the status, as long as the upstream did
 *   the work: a 404 is as informative as a 200);
 * - `"error"`: it failed (5xx, reset) after the upstream held it;
 * - `"rejected"`: the upstream refused it for lack of capacity (503, or a
 *   429 meant as overload): it was not served in any time;
 * - `"timeout"`: the caller gave up on it; `latencyMs` is how long it waited,
 *   at least the timeout.
 */
export type SampleOutcome = "ok" | "error" | "rejected" | "timeout";

/** The outcomes, for validation and exhaustive tables. */
export const SAMPLE_OUTCOMES: readonly SampleOutcome[] = ["ok", "error", "rejected", "timeout"];

/** One completed request, recorded when it completes. */
export interface LatencySample {
  /**
   * How long the upstream held the request, in ms: from when its work
   * started (after any wait in APF's queues, which never counts) to when it
   * ended (the response's end where the seat is held until then).
   */
  latencyMs: number;
  /** How it ended. */
  outcome: SampleOutcome;
  /**
   * Requests that wanted the upstream when this one completed: those in
   * flight plus those waiting for a seat. Optional; when given, a window in
   * which demand never reached half the limit does not raise it (an
   * app-limited upstream's latency says nothing about the limit above its
   * load).
   */
  demand?: number;
}

/** What a controller is doing. */
export type ControllerPhase = "warming-up" | "measuring-min-rtt" | "sampling";

/** Something that learns a concurrency limit and tells when it changes. */
export interface LimitSource {
  /** The limit now: an integer within the source's bounds. */
  readonly limit: number;
  /**
   * Calls `listener` with the new limit each time it changes (not with the
   * current one). Returns a function that unsubscribes.
   */
  onLimit(listener: (limit: number) => void): () => void;
}

/** A gradient controller's state, for metrics, dumps and simulations. */
export interface GradientSnapshot {
  /** The limit in force (pinned to `minRttLimit` while measuring the minRTT). */
  limit: number;
  /** The learned limit, unrounded (while measuring: the one restored after). */
  estimate: number;
  /** The phase. */
  phase: ControllerPhase;
  /** The last minRTT measured, in ms; `null` before the first measurement ends. */
  minRttMs: number | null;
  /** The latency percentile of the last sample window, in ms (`Infinity`: refusals); `null` before. */
  sampleRttMs: number | null;
  /** The gradient of the last sample window (clamped); `null` before. */
  gradient: number | null;
  /** Samples in the current window (or, while measuring, toward the minRTT). */
  samples: number;
  /** Sample windows evaluated so far. */
  windows: number;
  /** minRTT measurements completed so far. */
  minRttMeasurements: number;
  /** The lowest limit it may learn (its `min` option). */
  min: number;
  /** The highest limit it may learn (its `max` option). */
  max: number;
}
