/**
 * Deterministic random numbers for the simulator, so that a scenario gives
 * the same result on every run. Private to the simulator.
 *
 * @module
 */

/** A small deterministic generator of numbers in [0, 1) (a 32-bit xorshift). */
export function seededRandom(seed: number): () => number {
  let x = (seed * 2654435761) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}
