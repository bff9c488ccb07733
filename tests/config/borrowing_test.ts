import assert from "node:assert/strict";
import { roundHalfAwayFromZero } from "../../src/_shared/numbers.ts";
import { allocateCurrentLimits, type BorrowingLevel } from "../../src/config/borrowing.ts";

/** A non-exempt level with no demand unless overridden. */
function limited(nominal: number, min: number, max: number, o: Partial<BorrowingLevel> = {}) {
  return { exempt: false, nominal, min, max, highWatermark: 0, smoothed: 0, current: -1, ...o };
}

/** An exempt level (nominal and max do not matter to the allocation). */
function exempt(min: number, highWatermark: number, current = -1): BorrowingLevel {
  return { exempt: true, nominal: min, min, max: 600, highWatermark, smoothed: 0, current };
}

Deno.test("roundHalfAwayFromZero rounds halves away from zero", () => {
  assert.equal(roundHalfAwayFromZero(0.5), 1);
  assert.equal(roundHalfAwayFromZero(2.5), 3);
  assert.equal(roundHalfAwayFromZero(-2.5), -3);
  assert.equal(roundHalfAwayFromZero(-0.5), -1);
  assert.equal(roundHalfAwayFromZero(24.5), 25);
  assert.equal(roundHalfAwayFromZero(220.5), 221);
  assert.equal(roundHalfAwayFromZero(1.4999), 1);
  assert.equal(roundHalfAwayFromZero(-1.6), -2);
  assert.equal(roundHalfAwayFromZero(116.666), 117);
  assert.equal(roundHalfAwayFromZero(7), 7);
  assert.equal(roundHalfAwayFromZero(0), 0);
});

// `docs/semantics.md` §6.3: default configuration with ServerCL 600.
const DEFAULT_600: BorrowingLevel[] = [
  exempt(0, 0, 0), // exempt
  limited(13, 13, 613, { current: 13 }), // catch-all
  limited(74, 50, 674, { current: 62 }), // system
  limited(98, 73, 698, { current: 86 }), // node-high
  limited(25, 25, 625, { current: 25 }), // leader-election
  limited(98, 49, 698, { current: 74 }), // workload-high
  limited(245, 24, 845, { current: 135 }), // workload-low
  limited(49, 24, 649, { current: 37 }), // global-default
];

Deno.test("docs/semantics.md §6.3: default config, ServerCL 600, zero demand", () => {
  const { currentLimits, fairFraction } = allocateCurrentLimits(DEFAULT_600, 602);
  assert.deepEqual(currentLimits, [0, 30, 117, 170, 58, 114, 56, 56]);
  assert.ok(Math.abs(fairFraction - 602 / 258) < 1e-12, `fairFraction ${fairFraction}`);
  assert.equal(currentLimits.reduce((s, x) => s + x, 0), 601);
});

Deno.test("the default-config allocation does not modify its input levels", () => {
  const copy = structuredClone(DEFAULT_600);
  allocateCurrentLimits(DEFAULT_600, 602);
  assert.deepEqual(DEFAULT_600, copy);
});

Deno.test("remaining <= minCLSum: every limited level gets its minCL", () => {
  const a = limited(10, 5, 20, { highWatermark: 10, smoothed: 10, current: 7 });
  const b = limited(10, 5, 20, { highWatermark: 10, smoothed: 10, current: 9 });
  // Exempt usage 20 leaves remaining 0.
  assert.deepEqual(allocateCurrentLimits([exempt(0, 20), a, b], 20), {
    currentLimits: [20, 5, 5],
    fairFraction: 0,
  });
  // Boundary: remaining 10 == minCLSum 10.
  assert.deepEqual(allocateCurrentLimits([a, exempt(0, 10), b], 20), {
    currentLimits: [5, 10, 5],
    fairFraction: 0,
  });
  // Boundary with no demand (minCurrentCLSum == minCLSum == remaining): still minCL.
  const idle = [limited(10, 5, 20, { current: 7 }), exempt(0, 10), limited(10, 5, 20)];
  assert.deepEqual(allocateCurrentLimits(idle, 20), {
    currentLimits: [5, 10, 5],
    fairFraction: 0,
  });
});

Deno.test("minCLSum < remaining <= minCurrentCLSum: proportional share of the gap", () => {
  const a = limited(10, 5, 20, { highWatermark: 10, smoothed: 12 }); // minCurrent 10
  const b = limited(10, 5, 20, { highWatermark: 8, smoothed: 8 }); // minCurrent 8
  // remaining 15: share = (15 - 10) / (18 - 10) = 0.625 → 5 + round(3.125), 5 + round(1.875).
  assert.deepEqual(allocateCurrentLimits([exempt(0, 5), a, b], 20), {
    currentLimits: [5, 8, 7],
    fairFraction: 0,
  });
  // Boundary: remaining 18 == minCurrentCLSum → everyone at minCurrentCL.
  assert.deepEqual(allocateCurrentLimits([exempt(0, 2), a, b], 20).currentLimits, [2, 10, 8]);
});

Deno.test("proportional share rounds halves away from zero", () => {
  const a = limited(10, 5, 20, { highWatermark: 10 }); // gap 5
  const b = limited(10, 5, 20, { highWatermark: 8 }); // gap 3
  // remaining 14: share 0.5 → 5 + round(2.5) = 8, 5 + round(1.5) = 7 (sum 15 > 14).
  assert.deepEqual(allocateCurrentLimits([exempt(0, 6), a, b], 20).currentLimits, [6, 8, 7]);
});

Deno.test("minCurrentCL caps the high watermark at nominalCL", () => {
  const a = limited(10, 5, 20, { highWatermark: 50, smoothed: 50 }); // minCurrent 10, not 50
  const b = limited(10, 5, 20, { highWatermark: 50, smoothed: 50 }); // minCurrent 10
  // remaining 15: share = (15 - 10) / (20 - 10) = 0.5 → 5 + round(2.5) = 8 each.
  assert.deepEqual(allocateCurrentLimits([exempt(0, 5), a, b], 20).currentLimits, [5, 8, 8]);
});

Deno.test("fair allocation with demand: high watermark raises the floor, smoothed the target", () => {
  const a = limited(10, 5, 30, { highWatermark: 10, smoothed: 30 }); // lb 10, target 30
  const b = limited(10, 5, 30); // lb 5, target 5
  // Σ = 20; b stays at its lower bound 5, a gets 15 = 0.5 * 30.
  const r = allocateCurrentLimits([a, b], 20);
  assert.deepEqual(r.currentLimits, [15, 5]);
  assert.ok(Math.abs(r.fairFraction - 0.5) < 1e-12, `fairFraction ${r.fairFraction}`);
});

Deno.test("fair allocation: upper bound (maxCL) binds and the rest goes to others", () => {
  const a = limited(10, 5, 12, { highWatermark: 3, smoothed: 40 }); // lb 5, ub 12, target 40
  const b = limited(10, 5, 40, { highWatermark: 3, smoothed: 20 }); // lb 5, ub 40, target 20
  // fairProp 0.4: a = min(12, 16) = 12, b = 0.4 * 20 = 8.
  const r = allocateCurrentLimits([a, b], 20);
  assert.deepEqual(r.currentLimits, [12, 8]);
  assert.ok(Math.abs(r.fairFraction - 0.4) < 1e-12, `fairFraction ${r.fairFraction}`);
});

Deno.test("fair allocation rounds the fractional allocations", () => {
  const levels = [limited(10, 2, 20), limited(10, 2, 20), limited(10, 2, 20)];
  // 31 / 3 = 10.33 each.
  const r = allocateCurrentLimits(levels, 31);
  assert.deepEqual(r.currentLimits, [10, 10, 10]);
  assert.ok(Math.abs(r.fairFraction - 31 / 6) < 1e-12);
  const s = limited(10, 2, 20, { smoothed: 3 });
  // targets 3, 2, 2 of 21: fairProp 3 → 9, 6, 6.
  assert.deepEqual(allocateCurrentLimits([s, levels[0]!, levels[1]!], 21).currentLimits, [9, 6, 6]);
  // Two equal targets sharing 21: 10.5 each rounds up to 11 (sum 22).
  assert.deepEqual(allocateCurrentLimits([levels[0]!, levels[1]!], 21).currentLimits, [11, 11]);
});

Deno.test("exempt levels take max(minCL, highWatermark), reducing remaining", () => {
  const a = limited(10, 5, 30, { highWatermark: 10, smoothed: 30 });
  const b = limited(10, 5, 30);
  // Exempt minCL 3 above its watermark 1: takes 3; remaining 17 > minCurrentCLSum 15.
  // The limited levels still share nominalSum (20), not remaining.
  const r1 = allocateCurrentLimits([exempt(3, 1), a, b], 20);
  assert.deepEqual(r1.currentLimits, [3, 15, 5]);
  assert.ok(Math.abs(r1.fairFraction - 0.5) < 1e-12);
  // Watermark 7 above minCL 3: takes 7; remaining 13 lies in (10, 15] → share (13-10)/5 = 0.6.
  assert.deepEqual(allocateCurrentLimits([exempt(3, 7), a, b], 20), {
    currentLimits: [7, 8, 5],
    fairFraction: 0,
  });
  // Two exempt levels both count: 4 + 6 leaves remaining 10 == minCLSum.
  assert.deepEqual(allocateCurrentLimits([exempt(0, 4), a, exempt(2, 6), b], 20), {
    currentLimits: [4, 5, 6, 5],
    fairFraction: 0,
  });
});

Deno.test("no limited levels: exempt levels are set, nothing else happens", () => {
  assert.deepEqual(allocateCurrentLimits([exempt(2, 5, 0), exempt(4, 1, 9)], 6), {
    currentLimits: [5, 4],
    fairFraction: 0,
  });
  assert.deepEqual(allocateCurrentLimits([], 0), { currentLimits: [], fairFraction: 0 });
  assert.deepEqual(allocateCurrentLimits([], 10), { currentLimits: [], fairFraction: 0 });
});

Deno.test("unsolvable allocation keeps the previous current limits", () => {
  // maxCL sum 16 < nominalSum 20: the fair allocation has no solution.
  const a = limited(10, 2, 8, { current: 7 });
  const b = limited(10, 2, 8, { current: 9 });
  assert.deepEqual(allocateCurrentLimits([exempt(1, 0, 42), a, b], 20), {
    currentLimits: [1, 7, 9],
    fairFraction: 0,
  });
});
