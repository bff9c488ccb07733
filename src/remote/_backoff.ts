/**
 * Reconnection delays: exponential backoff with jitter, so that clients of a
 * coordinator that restarts do not all knock at the same instant.
 *
 * @module
 */

/** Options of {@linkcode backoffDelayMs}. */
export interface BackoffOptions {
  /** The first delay in ms. */
  initialMs: number;
  /** The largest delay in ms. */
  maxMs: number;
  /** A number in [0, 1). */
  random: () => number;
}

/**
 * The delay before reconnection attempt `attempt` (0 for the first):
 * `min(maxMs, initialMs · 2^attempt)`, of which the upper half is random
 * ("equal jitter"), so that the delay still grows while clients spread out.
 */
export function backoffDelayMs(attempt: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  const r = options.random();
  const jitter = r >= 0 && r < 1 ? r : 0.5;
  return ceiling / 2 + jitter * (ceiling / 2);
}
