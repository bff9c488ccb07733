import assert from "node:assert/strict";
import fc from "fast-check";
import { fairAlloc, uniformDemands } from "../../src/sim/fair_alloc.ts";
import { scenarioFromJson } from "../../src/sim/scenario.ts";

Deno.test("fairAlloc matches Kubernetes' TestFairAlloc vectors", () => {
  const vectors: [number[], number, number[]][] = [
    [[0, 0], 42, [0, 0]],
    [[47, 0], 42, [42, 0]],
    [[1, 47], 42, [1, 41]],
    [[3, 7, 9, 1], 14, [3, 5, 5, 1]],
    [[1, 9, 7, 3], 21, [1, 9, 7, 3]],
  ];
  for (const [demands, capacity, expected] of vectors) {
    assert.deepEqual(fairAlloc(demands, capacity), expected, `${demands} into ${capacity}`);
  }
});

Deno.test("fairAlloc handles the edges: nothing to share, nothing asked, no demands", () => {
  assert.deepEqual(fairAlloc([], 5), []);
  assert.deepEqual(fairAlloc([2, 3], 0), [0, 0]);
  assert.deepEqual(fairAlloc([2, 2, 2], 3), [1, 1, 1]);
  assert.deepEqual(fairAlloc([0.5, 10], Infinity), [0.5, 10]);
  const demands = [5, 1, 5];
  fairAlloc(demands, 4);
  assert.deepEqual(demands, [5, 1, 5], "the demands are not side-effected");
});

Deno.test("fairAlloc refuses negative or non-finite inputs", () => {
  assert.throws(() => fairAlloc([1, -1], 3), {
    name: "RangeError",
    message: "Cannot allocate: demand 1 must be a finite number >= 0, got -1",
  });
  assert.throws(() => fairAlloc([NaN], 3), { message: /demand 0 .* got NaN$/ });
  assert.throws(() => fairAlloc([1], -1), {
    name: "RangeError",
    message: "Cannot allocate: capacity must be a number >= 0, got -1",
  });
  assert.throws(() => fairAlloc([1], NaN), { message: /capacity .* got NaN$/ });
});

Deno.test("fairAlloc is max-min fair (property)", () => {
  const demand = fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: 100 }),
    fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }),
  );
  const capacity = fc.oneof(
    fc.integer({ min: 0, max: 1000 }),
    fc.double({ min: 0, max: 1e7, noNaN: true, noDefaultInfinity: true }),
  );
  fc.assert(
    fc.property(fc.array(demand, { maxLength: 40 }), capacity, (demands, cap) => {
      const alloc = fairAlloc(demands, cap);
      assert.equal(alloc.length, demands.length);
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      const want = Math.min(cap, sum(demands));
      // Relative, except among subnormals, where a rounding step is most of the value.
      const tolerance = Math.max(1e-9 * want, 1e-300);
      assert.ok(Math.abs(sum(alloc) - want) <= tolerance, `sum ${sum(alloc)} != ${want}`);
      const top = Math.max(0, ...alloc);
      alloc.forEach((a, i) => {
        assert.ok(a >= 0 && a <= demands[i]!, `alloc ${i} = ${a} outside [0, ${demands[i]}]`);
        // Max-min: a client that got less than it asked for got at least
        // as much as anyone (else capacity could move to it from the richer one).
        if (a < demands[i]!) {
          assert.ok(a >= top * (1 - 1e-9), `unsatisfied ${i} got ${a} < ${top}`);
        }
      });
    }),
    { numRuns: 500 },
  );
});

Deno.test("uniformDemands: threads · seats · exec / (exec + think), halved threads for split", () => {
  const scenario = scenarioFromJson({
    clients: [
      { threads: 8, execMs: 1000, thinkMs: 1000 },
      { threads: 5, initialSeats: 3, execMs: 1000, thinkMs: 500, split: true },
      { threads: 2, execMs: 0, thinkMs: 0 },
      { threads: 2, execMs: 0, thinkMs: 10 },
      { threads: 1, execMs: 1000, thinkMs: -1e-6 },
    ],
  });
  const first = uniformDemands(scenario, 0);
  const second = uniformDemands(scenario, 1);
  // floor(5 / 2) = 2 threads of 3 seats, busy 2/3 of the time.
  assert.deepEqual(first.slice(0, 4), [4, 4, 2, 0]);
  assert.deepEqual(second.slice(0, 4), [4, 10, 2, 0]);
  // A negative think (TestWindup) demands slightly more than the threads.
  assert.ok(first[4]! > 1 && first[4]! < 1 + 1e-8);
  assert.equal(first[4], second[4]);
});

Deno.test("uniformDemands of the default scenario: 8 threads busy half the time", () => {
  const [demand] = uniformDemands(scenarioFromJson({}), 1);
  assert.ok(Math.abs(demand! - 8 * 1000 / 1999.999999) < 1e-12);
  assert.deepEqual(fairAlloc([demand!], 4), [4]);
});
