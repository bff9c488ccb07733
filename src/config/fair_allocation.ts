/**
 * The fair allocation behind borrowing (Kubernetes'
 * `computeConcurrencyAllocation`, in `pkg/util/flowcontrol/conc_alloc.go`):
 * find one proportion `fairProp` such that the allocations
 * `clamp(fairProp * target_i, lowerBound_i, upperBound_i)` sum to the required total.
 *
 * @module
 */

/** One class (priority level) of the allocation problem. */
export interface AllocationItem {
  /** Least the class may get. */
  lowerBound: number;
  /** Most the class may get. */
  upperBound: number;
  /** What the class would like; at least `lowerBound`. */
  target: number;
}

/** The solution: one allocation per class, and the common proportion. */
export interface Allocation {
  /** Allocations, in the order of the classes. */
  allocations: number[];
  /** The proportion of each target that was granted before clamping. */
  fairProp: number;
}

/** Targets below this are raised to it, so that no target divides by zero. */
export const MIN_TARGET = 0.001;
const EPSILON = 1e-7;
const MAX_FLOAT32 = 3.4028234663852886e38;

/**
 * Solves the allocation problem for `requiredSum`. Throws a `RangeError` when
 * the problem has no solution (bounds that cannot meet the sum, negative or
 * inverted bounds).
 *
 * @example
 * ```ts
 * import { computeConcurrencyAllocation } from "./mod.ts";
 * const { allocations } = computeConcurrencyAllocation(10, [
 *   { lowerBound: 1, upperBound: 10, target: 1 },
 *   { lowerBound: 1, upperBound: 10, target: 4 },
 * ]);
 * // allocations: [2, 8]
 * ```
 */
export function computeConcurrencyAllocation(
  requiredSum: number,
  classes: readonly AllocationItem[],
): Allocation {
  if (requiredSum < 0) throw new RangeError(`Cannot allocate a negative sum: ${requiredSum}`);
  let lowSum = 0;
  let highSum = 0;
  let targetSum = 0;
  let lbMin = MAX_FLOAT32, lbMax = 0, ubMin = MAX_FLOAT32, ubMax = 0;
  const targets: number[] = [];
  const bounds: { value: number; item: number; lower: boolean }[] = [];
  classes.forEach((c, i) => {
    if (c.lowerBound < 0) {
      throw new RangeError(`Cannot allocate: lower bound ${i} is ${c.lowerBound}`);
    }
    if (c.target < c.lowerBound) {
      throw new RangeError(
        `Cannot allocate: target ${i} is ${c.target}, below its lower bound ${c.lowerBound}`,
      );
    }
    if (c.upperBound < c.lowerBound) {
      throw new RangeError(
        `Cannot allocate: upper bound ${i} is ${c.upperBound}, below its lower bound`,
      );
    }
    const target = c.target < MIN_TARGET ? MIN_TARGET : c.target;
    lowSum += c.lowerBound;
    highSum += c.upperBound;
    targetSum += target;
    targets.push(target);
    const rl = c.lowerBound / target;
    const ru = c.upperBound / target;
    lbMin = Math.min(lbMin, rl);
    lbMax = Math.max(lbMax, rl);
    ubMin = Math.min(ubMin, ru);
    ubMax = Math.max(ubMax, ru);
    bounds.push({ value: rl, item: i, lower: true }, { value: ru, item: i, lower: false });
  });
  if (lbMax > 1) throw new RangeError(`Cannot allocate: a relative lower bound is ${lbMax} > 1`);
  if (lowSum - requiredSum > EPSILON) {
    throw new RangeError(`Cannot allocate: lower bounds sum to ${lowSum} > ${requiredSum}`);
  }
  if (requiredSum - highSum > EPSILON) {
    throw new RangeError(`Cannot allocate: upper bounds sum to ${highSum} < ${requiredSum}`);
  }
  if (requiredSum === 0) return { allocations: classes.map(() => 0), fairProp: 0 };
  if (lowSum - requiredSum > -EPSILON) {
    return { allocations: classes.map((c) => c.lowerBound), fairProp: lbMin };
  }
  if (requiredSum - highSum > -EPSILON) {
    return { allocations: classes.map((c) => c.upperBound), fairProp: ubMax };
  }
  let fairProp = requiredSum / targetSum;
  if (lbMax <= fairProp && fairProp <= ubMin) {
    return { allocations: targets.map((t) => t * fairProp), fairProp };
  }
  // Some bounds bind: sweep fairProp upward through the sorted relative bounds,
  // tracking the classes whose allocation still moves with fairProp.
  bounds.sort((a, b) => a.value - b.value);
  let sumSoFar = lowSum;
  fairProp = lbMin;
  let sensitiveTargetSum = 0, deltaTargetSum = 0;
  let sensitiveCount = 0, deltaCount = 0;
  let next = 0;
  while (sumSoFar < requiredSum) {
    let nextBound: number;
    for (;;) {
      sensitiveTargetSum += deltaTargetSum;
      sensitiveCount += deltaCount;
      const bound = bounds[next++];
      if (bound === undefined) throw new RangeError("Cannot allocate: ran out of bounds");
      const target = targets[bound.item] as number;
      deltaCount = bound.lower ? 1 : -1;
      deltaTargetSum = bound.lower ? target : -target;
      nextBound = bound.value;
      if (nextBound > fairProp) break;
    }
    if (sensitiveCount === 0) {
      fairProp = nextBound;
      continue;
    }
    const nextProp = fairProp + (requiredSum - sumSoFar) / sensitiveTargetSum;
    if (nextProp <= nextBound) {
      fairProp = nextProp;
      break;
    }
    sumSoFar += (nextBound - fairProp) * sensitiveTargetSum;
    fairProp = nextBound;
  }
  const allocations = classes.map((c, i) =>
    Math.max(c.lowerBound, Math.min(c.upperBound, fairProp * (targets[i] as number)))
  );
  return { allocations, fairProp };
}
