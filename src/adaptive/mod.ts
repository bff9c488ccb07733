/**
 * Adaptive concurrency: a controller that learns the server's concurrency
 * limit from the latency of completed work, on the injected clock, with no
 * I/O (Envoy's adaptive concurrency gradient controller, with Netflix
 * Gradient2's smoothing and app-limited guard; see `gradient_controller.ts`).
 *
 * @module
 */

export { GradientController, type GradientControllerDeps } from "./gradient_controller.ts";
export {
  DEFAULT_BUFFER,
  DEFAULT_INITIAL_LIMIT,
  DEFAULT_JITTER,
  DEFAULT_MAX_GRADIENT,
  DEFAULT_MAX_LIMIT,
  DEFAULT_MIN_LIMIT,
  DEFAULT_MIN_RTT_INTERVAL_MS,
  DEFAULT_MIN_RTT_LIMIT,
  DEFAULT_MIN_RTT_REQUESTS,
  DEFAULT_PERCENTILE,
  DEFAULT_SAMPLE_WINDOW_MS,
  DEFAULT_SMOOTHING,
  GRADIENT_OPTION_NAMES,
  type GradientControllerOptions,
  MIN_GRADIENT,
  MIN_LIMIT_WINDOWS_BEFORE_REMEASURE,
  type ResolvedGradientOptions,
  resolveGradientOptions,
} from "./gradient_options.ts";
export {
  type ControllerPhase,
  type GradientSnapshot,
  type LatencySample,
  type LimitSource,
  SAMPLE_OUTCOMES,
  type SampleOutcome,
} from "./types.ts";
