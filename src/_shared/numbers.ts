/**
 * Numeric primitives shared by the configuration model and the queue set,
 * which must not import each other: rounding as Go does it, and the hash
 * entropy rule of shuffle sharding (Kubernetes' `RequiredEntropyBits` in
 * `pkg/util/shufflesharding/shufflesharding.go`). This room sits below
 * every other one and imports nothing.
 *
 * @module
 */

/**
 * Rounds half away from zero, like Go's `math.Round` (JavaScript's
 * `Math.round` rounds halves up, so `-2.5` would become `-2`).
 *
 * @example
 * ```ts
 * import { roundHalfAwayFromZero } from "./numbers.ts";
 * roundHalfAwayFromZero(24.5); // 25
 * roundHalfAwayFromZero(-2.5); // -3
 * ```
 */
export function roundHalfAwayFromZero(x: number): number {
  // `+ 0` turns -0 into 0, as Go's int conversion does.
  return (x < 0 ? -Math.round(-x) : Math.round(x)) + 0;
}

/** Most hash bits shuffle sharding may consume (Kubernetes' `MaxHashBits`). */
export const MAX_HASH_BITS = 60;

/**
 * Hash bits that shuffle sharding needs to deal `handSize` cards from a deck
 * of `deckSize`: `ceil(log2(deckSize) * handSize)`.
 *
 * @example
 * ```ts
 * import { requiredEntropyBits } from "./numbers.ts";
 * requiredEntropyBits(64, 8); // 48
 * ```
 */
export function requiredEntropyBits(deckSize: number, handSize: number): number {
  return Math.ceil(Math.log2(deckSize) * handSize);
}
