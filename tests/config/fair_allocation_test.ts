import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type AllocationItem,
  computeConcurrencyAllocation,
  MIN_TARGET,
} from "../../src/config/fair_allocation.ts";
import { assertClose } from "../_helpers/assert_close.ts";

/** Shorthand for one class: lower bound, target, upper bound. */
function item(lowerBound: number, target: number, upperBound: number): AllocationItem {
  return { lowerBound, target, upperBound };
}

function assertAllClose(actual: readonly number[], expected: readonly number[], tol = 1e-9) {
  assert.equal(actual.length, expected.length, `lengths differ: ${actual} vs ${expected}`);
  expected.forEach((e, i) => assertClose(actual[i]!, e, tol, `allocation ${i}:`));
}

Deno.test("MIN_TARGET is 0.001", () => {
  assert.equal(MIN_TARGET, 0.001);
});

Deno.test("no bound binds: allocations are proportional to the targets", () => {
  const a = computeConcurrencyAllocation(10, [item(1, 1, 10), item(1, 4, 10)]);
  assert.deepEqual(a.allocations, [2, 8]);
  assert.equal(a.fairProp, 2);

  const b = computeConcurrencyAllocation(12, [item(0, 1, 100), item(0, 2, 100), item(0, 3, 100)]);
  assert.deepEqual(b.allocations, [2, 4, 6]);
  assert.equal(b.fairProp, 2);

  // fairProp below 1 is fine when the lower bounds are all 0.
  const c = computeConcurrencyAllocation(3, [item(0, 4, 10), item(0, 2, 10)]);
  assertAllClose(c.allocations, [2, 1]);
  assertClose(c.fairProp, 0.5);
});

Deno.test("lower bound binds: the rest is shared in proportion to targets", () => {
  const { allocations, fairProp } = computeConcurrencyAllocation(10, [
    item(5, 5, 20),
    item(0, 10, 20),
  ]);
  assertAllClose(allocations, [5, 5]);
  assertClose(fairProp, 0.5);
});

Deno.test("upper bound binds: the rest is shared in proportion to targets", () => {
  const { allocations, fairProp } = computeConcurrencyAllocation(12, [
    item(0, 10, 2),
    item(0, 10, 20),
  ]);
  assertAllClose(allocations, [2, 10]);
  assertClose(fairProp, 1);
});

Deno.test("mixed: one class at its lower bound, one at its upper bound, one proportional", () => {
  const { allocations, fairProp } = computeConcurrencyAllocation(10, [
    item(5, 5, 10),
    item(0, 10, 1),
    item(0, 10, 50),
  ]);
  assertAllClose(allocations, [5, 1, 4]);
  assertClose(fairProp, 0.4);
});

Deno.test("ties between relative bounds are all crossed together", () => {
  // Relative bounds: c0 [1, 2], c1 [0, 2], c2 [0, 10], c3 [1, 1] (a fixed class).
  const classes = [item(2, 2, 4), item(0, 1, 2), item(0, 1, 10), item(3, 3, 3)];
  const at1 = computeConcurrencyAllocation(7, classes);
  assertAllClose(at1.allocations, [2, 1, 1, 3]);
  assertClose(at1.fairProp, 1);

  const at2 = computeConcurrencyAllocation(11, classes);
  assertAllClose(at2.allocations, [4, 2, 2, 3]);
  assertClose(at2.fairProp, 2);

  const at4 = computeConcurrencyAllocation(13, classes);
  assertAllClose(at4.allocations, [4, 2, 4, 3]);
  assertClose(at4.fairProp, 4);

  const between = computeConcurrencyAllocation(9, classes);
  assertAllClose(between.allocations, [3, 1.5, 1.5, 3]);
  assertClose(between.fairProp, 1.5);
});

Deno.test("requiredSum 0 gives all zeros and fairProp 0", () => {
  assert.deepEqual(computeConcurrencyAllocation(0, [item(0, 5, 10), item(0, 0, 3)]), {
    allocations: [0, 0],
    fairProp: 0,
  });
  assert.deepEqual(computeConcurrencyAllocation(0, []), { allocations: [], fairProp: 0 });
});

Deno.test("lowSum == requiredSum returns the lower bounds, fairProp = min relative lower bound", () => {
  const a = computeConcurrencyAllocation(5, [item(2, 4, 10), item(3, 3, 10)]);
  assert.deepEqual(a.allocations, [2, 3]);
  assert.equal(a.fairProp, 0.5);
  // Within epsilon (1e-7) above the sum still counts as equal, not as an error.
  const b = computeConcurrencyAllocation(5, [item(2.00000005, 4, 10), item(3, 3, 10)]);
  assert.deepEqual(b.allocations, [2.00000005, 3]);
  // Within epsilon below the sum also returns the lower bounds exactly.
  const c = computeConcurrencyAllocation(5, [item(2, 4, 10), item(2.99999995, 3, 10)]);
  assert.deepEqual(c, { allocations: [2, 2.99999995], fairProp: 0.5 });
});

Deno.test("highSum == requiredSum returns the upper bounds, fairProp = max relative upper bound", () => {
  const a = computeConcurrencyAllocation(5, [item(0, 4, 2), item(0, 1, 3)]);
  assert.deepEqual(a.allocations, [2, 3]);
  assert.equal(a.fairProp, 3);
  const b = computeConcurrencyAllocation(5, [item(0, 4, 2), item(0, 1, 2.99999995)]);
  assert.deepEqual(b.allocations, [2, 2.99999995]);
  const c = computeConcurrencyAllocation(5, [item(0, 4, 2), item(0, 1, 3.00000005)]);
  assert.deepEqual(c, { allocations: [2, 3.00000005], fairProp: 3.00000005 });
});

Deno.test("targets below MIN_TARGET are treated as MIN_TARGET", () => {
  // A zero target alone: fairProp = 5 / 0.001.
  const alone = computeConcurrencyAllocation(5, [item(0, 0, 100)]);
  assertAllClose(alone.allocations, [5]);
  assertClose(alone.fairProp, 5000);

  // 0.0005 counts as 0.001, so both classes get the same share.
  const raised = computeConcurrencyAllocation(2, [item(0, 0.0005, 10), item(0, 0.001, 10)]);
  assertAllClose(raised.allocations, [1, 1]);
  assertClose(raised.fairProp, 1000);

  // A zero-target class next to a real one gets a thousandth of its share.
  const mixed = computeConcurrencyAllocation(1.001, [item(0, 0, 10), item(0, 1, 10)]);
  assertAllClose(mixed.allocations, [0.001, 1]);
  assertClose(mixed.fairProp, 1);
});

Deno.test("error: negative requiredSum", () => {
  assert.throws(() => computeConcurrencyAllocation(-1, []), RangeError);
  assert.throws(() => computeConcurrencyAllocation(-0.5, [item(0, 1, 1)]), RangeError);
  // Even within epsilon of 0, where no sum check would catch it.
  assert.throws(() => computeConcurrencyAllocation(-1e-8, [item(0, 1, 1)]), RangeError);
});

Deno.test("error: negative lower bound", () => {
  assert.throws(() => computeConcurrencyAllocation(1, [item(-1, 1, 2)]), RangeError);
});

Deno.test("error: target below its lower bound", () => {
  assert.throws(() => computeConcurrencyAllocation(3, [item(2, 1, 3)]), RangeError);
  // Also when both are below MIN_TARGET (raising the target would hide it).
  assert.throws(() => computeConcurrencyAllocation(1, [item(0.0005, 0.0002, 2)]), RangeError);
});

Deno.test("error: upper bound below its lower bound", () => {
  assert.throws(() => computeConcurrencyAllocation(2, [item(2, 2, 1)]), RangeError);
  // Even when the sums alone would be feasible.
  assert.throws(() => computeConcurrencyAllocation(3, [item(2, 2, 1), item(0, 1, 10)]), RangeError);
});

Deno.test("error: lower bounds sum above requiredSum (beyond epsilon)", () => {
  assert.throws(() => computeConcurrencyAllocation(5, [item(3, 3, 5), item(3, 3, 5)]), RangeError);
  assert.throws(() => computeConcurrencyAllocation(5, [item(5.0000002, 6, 7)]), RangeError);
});

Deno.test("error: upper bounds sum below requiredSum (beyond epsilon)", () => {
  assert.throws(() => computeConcurrencyAllocation(11, [item(0, 1, 5), item(0, 1, 5)]), RangeError);
  assert.throws(() => computeConcurrencyAllocation(1, []), RangeError);
  assert.throws(() => computeConcurrencyAllocation(5, [item(0, 1, 4.9999998)]), RangeError);
});

/** A random feasible problem: lb <= target, lb <= ub, Σlb <= S <= Σub. */
const feasibleProblem = fc
  .array(
    fc.record({
      lb: fc.double({ min: 0, max: 50, noNaN: true }),
      extraTarget: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 50, noNaN: true })),
      extraUb: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 80, noNaN: true })),
      zeroLb: fc.boolean(),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .chain((raw) => {
    const classes = raw.map(({ lb, extraTarget, extraUb, zeroLb }) => {
      const lowerBound = zeroLb ? 0 : lb;
      return item(lowerBound, lowerBound + extraTarget, lowerBound + extraUb);
    });
    const lowSum = classes.reduce((s, c) => s + c.lowerBound, 0);
    const highSum = classes.reduce((s, c) => s + c.upperBound, 0);
    return fc
      .double({ min: 0, max: 1, noNaN: true })
      .map((u) => ({ classes, requiredSum: Math.min(highSum, lowSum + u * (highSum - lowSum)) }));
  });

Deno.test("property: feasible problems are solved by one clamped fair proportion", () => {
  fc.assert(
    fc.property(feasibleProblem, ({ classes, requiredSum }) => {
      const { allocations, fairProp } = computeConcurrencyAllocation(requiredSum, classes);
      assert.equal(allocations.length, classes.length);
      const sum = allocations.reduce((s, x) => s + x, 0);
      assert.ok(
        Math.abs(sum - requiredSum) <= 1e-6 * Math.max(1, requiredSum),
        `sum ${sum} != ${requiredSum}`,
      );
      classes.forEach((c, i) => {
        const a = allocations[i]!;
        const slack = 1e-9 * Math.max(1, c.upperBound);
        assert.ok(a >= c.lowerBound - slack && a <= c.upperBound + slack, `alloc ${i} = ${a}`);
        const expected = Math.min(
          c.upperBound,
          Math.max(c.lowerBound, fairProp * Math.max(c.target, MIN_TARGET)),
        );
        assert.ok(
          Math.abs(a - expected) <= 1e-6 * Math.max(1, expected),
          `alloc ${i} = ${a}, clamp(fairProp * target) = ${expected}`,
        );
      });
    }),
    { numRuns: 1000 },
  );
});
