/**
 * A learned server concurrency limit (`src/adaptive/`) applied to a
 * coordinator the way a new ServerCL is: the same configuration at the new
 * limit (every level's NominalCL, LendableCL and BorrowingCL recomputed,
 * `docs/semantics.md` §2.6), digested live by `configure()`, which keeps
 * every queue and what waits in it, in order (§4.8), and runs the borrowing
 * allocation at once.
 *
 * @module
 */

import { type EffectiveConfiguration, withServerConcurrencyLimit } from "../config/mod.ts";
import type { LimitSource } from "../adaptive/types.ts";

/** What a learned limit needs of a coordinator (an `EmbeddedCoordinator` has it). */
export interface ReconfigurableCoordinator {
  /** The configuration in force. */
  readonly configuration: EffectiveConfiguration;
  /** True once closed: nothing is applied then. */
  readonly closed: boolean;
  /** Applies a configuration live, validating it whole first. */
  configure(next: EffectiveConfiguration): void;
}

/**
 * Applies `limit` as `coordinator`'s server concurrency limit, unless it is
 * already the one in force or the coordinator is closed. Returns whether
 * the configuration changed.
 *
 * @throws {RangeError} when `limit` is not a positive integer ({TypeError}: not a number).
 * @example
 * ```ts
 * import { bootstrapConfiguration, EmbeddedCoordinator, effectiveConfiguration, FakeEventClock } from "@apf/edge";
 * import { applyServerConcurrencyLimit } from "./learned_limit.ts";
 * using coordinator = new EmbeddedCoordinator(effectiveConfiguration(bootstrapConfiguration()), {
 *   clock: new FakeEventClock(),
 * });
 * applyServerConcurrencyLimit(coordinator, 24); // true
 * coordinator.configuration.serverConcurrencyLimit; // 24
 * ```
 */
export function applyServerConcurrencyLimit(
  coordinator: ReconfigurableCoordinator,
  limit: number,
): boolean {
  if (coordinator.closed || coordinator.configuration.serverConcurrencyLimit === limit) {
    return false;
  }
  coordinator.configure(withServerConcurrencyLimit(coordinator.configuration, limit));
  return true;
}

/**
 * Makes `coordinator` follow `source`'s limit: applies it now and each time
 * it changes. Returns a function that stops following.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, EmbeddedCoordinator, effectiveConfiguration, FakeEventClock } from "@apf/edge";
 * import { GradientController } from "../adaptive/gradient_controller.ts";
 * import { followLearnedLimit } from "./learned_limit.ts";
 * const clock = new FakeEventClock();
 * using coordinator = new EmbeddedCoordinator(effectiveConfiguration(bootstrapConfiguration()), { clock });
 * using controller = new GradientController({}, { clock });
 * const stop = followLearnedLimit(coordinator, controller);
 * coordinator.configuration.serverConcurrencyLimit; // 20: the initial limit, for a window
 * stop();
 * ```
 */
export function followLearnedLimit(
  coordinator: ReconfigurableCoordinator,
  source: LimitSource,
): () => void {
  applyServerConcurrencyLimit(coordinator, source.limit);
  return source.onLimit((limit) => applyServerConcurrencyLimit(coordinator, limit));
}
