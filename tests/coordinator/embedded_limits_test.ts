/**
 * EmbeddedCoordinator limits: the default limits of `docs/semantics.md` §6.3,
 * borrowing dynamics (flooding, decay with smoothing, exempt usage), and the
 * adjustment timer.
 */

import assert from "node:assert/strict";
import { bootstrapConfiguration } from "../../src/config/bootstrap.ts";
import { allocateCurrentLimits, type BorrowingLevel } from "../../src/config/borrowing.ts";
import { effectiveConfiguration } from "../../src/config/effective.ts";
import { type BorrowingAdjustment, EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Admission, Seat } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { PriorityLevelSnapshot } from "../../src/observe/types.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

function levelOf(c: EmbeddedCoordinator, name: string): PriorityLevelSnapshot {
  const l = c.snapshot().levels.find((l) => l.name === name);
  assert.ok(l !== undefined, `level ${name}`);
  return l;
}

const currentLimits = (c: EmbeddedCoordinator) =>
  Object.fromEntries(c.snapshot().levels.map((l) => [l.name, l.currentLimit]));

Deno.test("EmbeddedCoordinator reproduces the default limits at ServerCL 600 (docs/semantics.md §6.3)", () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(effectiveConfiguration(bootstrapConfiguration()), { clock });
  assert.deepEqual(currentLimits(c), {
    "catch-all": 30,
    exempt: 0,
    "global-default": 56,
    "leader-election": 58,
    "node-high": 170,
    system: 117,
    "workload-high": 114,
    "workload-low": 56,
  });
  const table = Object.fromEntries(
    c.snapshot().levels.map((l) => [l.name, [l.nominalLimit, l.lowerLimit, l.upperLimit]]),
  );
  assert.deepEqual(table, {
    exempt: [0, 0, 600],
    "catch-all": [13, 13, 613],
    system: [74, 50, 674],
    "node-high": [98, 73, 698],
    "leader-election": [25, 25, 625],
    "workload-high": [98, 49, 698],
    "workload-low": [245, 24, 845],
    "global-default": [49, 24, 649],
  });
  const snap = c.snapshot();
  assert.equal(snap.serverConcurrencyLimit, 600);
  assert.ok(Math.abs(snap.seatFairFraction - 602 / 258) < 1e-12, `${snap.seatFairFraction}`);
  // The queue sets enforce the same limits.
  for (const l of snap.levels) assert.equal(l.queueSet.concurrencyLimit, l.currentLimit);
  // With no demand, the 10 s adjustments change nothing.
  clock.advance(60_000);
  assert.equal(currentLimits(c).system, 117);
});

Deno.test("EmbeddedCoordinator at ServerCL 100 has the nominal limits of docs/semantics.md §6.3", () => {
  const clock = new FakeEventClock();
  const config = effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: 100 });
  using c = new EmbeddedCoordinator(config, { clock });
  const nominal = Object.fromEntries(c.snapshot().levels.map((l) => [l.name, l.nominalLimit]));
  assert.deepEqual(nominal, {
    exempt: 0,
    "catch-all": 3,
    system: 13,
    "node-high": 17,
    "leader-election": 5,
    "workload-high": 17,
    "workload-low": 41,
    "global-default": 9,
  });
  assert.equal(Object.values(nominal).reduce((a, b) => a + b, 0), 105);
});

// ServerCL 100: a and b (40 shares, half lendable), catch-all (20 shares, nothing lendable).
// NominalCL 40/40/20, MinCL 20/20/20, MaxCL 140/140/120, nominalSum 100. With no demand
// the targets are the MinCLs (60 in all): fairProp 100/60, current limits 33/33/33.
function floodConfig() {
  return configOf(100, [
    exempt(),
    limited("a", {
      shares: 40,
      lendablePercent: 50,
      queuing: { queues: 1, handSize: 1, queueLengthLimit: 100 },
    }),
    limited("b", {
      shares: 40,
      lendablePercent: 50,
      queuing: { queues: 1, handSize: 1, queueLengthLimit: 100 },
    }),
    limited("catch-all", { shares: 20 }),
  ]);
}

const A = 0.977;

Deno.test("EmbeddedCoordinator lets a flooded level borrow, then decays with smoothing", async () => {
  const clock = new FakeEventClock();
  const adjustments: BorrowingAdjustment[] = [];
  using c = new EmbeddedCoordinator(floodConfig(), {
    clock,
    onAdjust: (a) => adjustments.push(a),
  });
  assert.deepEqual(currentLimits(c), { a: 33, b: 33, "catch-all": 33, exempt: 0 });

  // Flood a with 60 one-seat requests at t=0: 33 run, 27 wait.
  const outcomes: (Admission | undefined)[] = new Array(60).fill(undefined);
  for (let i = 0; i < 60; i++) {
    c.acquire({ priorityLevel: "a", flowSchema: "fs" }).then((o) => outcomes[i] = o);
  }
  await settle();
  assert.equal(outcomes.filter((o) => o?.admitted).length, 33);
  assert.equal(levelOf(c, "a").queueSet.waitingRequests, 27);

  // At 10 s: a's demand was 60 all along (average 60, deviation 0, high watermark 60), so
  // minCurrentCL = min(nominal 40, 60) = 40 and target 60; b and catch-all stay at 20.
  // remaining 100 > ΣminCurrentCL 80: fair allocation of 100 over targets 60+20+20, fairProp 1.
  clock.advance(10_000);
  await settle();
  assert.deepEqual(currentLimits(c), { a: 60, b: 20, "catch-all": 20, exempt: 0 });
  const a = levelOf(c, "a");
  assert.deepEqual(a.demand, {
    highWatermark: 60,
    average: 60,
    stdDev: 0,
    smoothed: 60,
    target: 60,
  });
  assert.equal(c.snapshot().seatFairFraction, 1);
  // The raised limit dispatched every waiting request at once.
  assert.equal(a.queueSet.waitingRequests, 0);
  assert.equal(a.queueSet.seatsInUse, 60);
  const waited = outcomes.map((o) => o?.admitted ? o.waitedMs : -1);
  assert.deepEqual(waited, [...new Array(33).fill(0), ...new Array(27).fill(10_000)]);

  // The flood stops right after the adjustment.
  for (const o of outcomes) assert.equal((o as { seat: Seat }).seat.release(), true);
  assert.equal(levelOf(c, "a").queueSet.seatsInUse, 0);

  // Expected from here on: the demand is 0, so each period smoothed = A·smoothed (the
  // envelope is 0); the high watermark is 60 once more (the value at the window's start)
  // and then 0. The allocation of each step is computed independently below.
  const input = (hw: number, smoothed: number): BorrowingLevel[] => [
    { exempt: true, nominal: 0, min: 0, max: 100, highWatermark: 0, smoothed: 0, current: 0 },
    { exempt: false, nominal: 40, min: 20, max: 140, highWatermark: hw, smoothed, current: 0 },
    { exempt: false, nominal: 40, min: 20, max: 140, highWatermark: 0, smoothed: 0, current: 0 },
    { exempt: false, nominal: 20, min: 20, max: 120, highWatermark: 0, smoothed: 0, current: 0 },
  ];
  let smoothed = 60;
  const history: number[] = [];
  for (let step = 1; step <= 60; step++) {
    const before = adjustments.length;
    clock.advance(10_000);
    assert.equal(adjustments.length, before + 1, "one adjustment per 10 s");
    smoothed = Math.max(0, A * smoothed + (1 - A) * 0);
    const hw = step === 1 ? 60 : 0;
    const expected = allocateCurrentLimits(input(hw, smoothed), 100).currentLimits;
    const got = adjustments.at(-1)!;
    const la = got.levels.find((l) => l.name === "a")!;
    assert.equal(la.smoothed, smoothed, `smoothed at step ${step}`);
    assert.equal(la.highWatermark, hw);
    assert.equal(la.average, 0);
    assert.deepEqual(
      got.levels.map((l) => l.currentLimit),
      expected,
      `limits at step ${step}`,
    );
    history.push(la.currentLimit);
  }
  // Hand-checked points: at 20 s smoothed 58.62 and target 58.62 against 20 + 20, fairProp
  // 100/98.62: a gets 59.44 → 59; ten minutes on, smoothed ≈ 14.6 < MinCL, back to 33.
  assert.equal(history[0], 59);
  assert.ok(Math.abs(adjustments.at(-60)!.levels[1]!.smoothed - 58.62) < 1e-9);
  assert.equal(history.at(-1), 33);
  for (let i = 1; i < history.length; i++) assert.ok(history[i]! <= history[i - 1]!, "decays");
  assert.ok(history.includes(50) && history.includes(40), "decays gradually");
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator: exempt seats in use take their share off the top (docs/semantics.md §6.2)", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(floodConfig(), { clock });
  const hold = async (level: string, n: number, seats = 1): Promise<Seat[]> => {
    const out: Seat[] = [];
    for (let i = 0; i < n; i++) {
      const r = c.acquire({
        priorityLevel: level,
        flowSchema: "fs",
        work: { initialSeats: seats },
      });
      r.then((o) => o.admitted && out.push(o.seat));
    }
    await settle();
    return out;
  };

  // Exempt holds 45 seats over an adjustment: its current limit is max(MinCL 0, 45), so
  // remaining = 100 − 45 = 55 <= ΣMinCL 60, and every other level falls to its MinCL.
  const ex = await hold("exempt", 45);
  assert.equal(ex.length, 45);
  clock.advance(10_000);
  assert.deepEqual(currentLimits(c), { a: 20, b: 20, "catch-all": 20, exempt: 45 });

  // Exempt 30 and a flooded (33 running, 27 waiting): remaining 70 between ΣMinCL 60 and
  // ΣminCurrentCL 80 (a: min(40, 60)): a gets 20 + round(20 · (70 − 60) / (80 − 60)) = 30.
  for (const s of ex.slice(30)) s.release();
  clock.advance(10_000); // the window still saw 45: nothing moves yet
  assert.deepEqual(currentLimits(c), { a: 20, b: 20, "catch-all": 20, exempt: 45 });
  const flood = await hold("a", 60);
  assert.equal(flood.length, 20, "a runs at its lowered limit");
  clock.advance(10_000);
  await settle();
  assert.deepEqual(currentLimits(c), { a: 30, b: 20, "catch-all": 20, exempt: 30 });
  assert.equal(flood.length, 30, "the raised limit dispatched 10 more");
  assert.equal(c.snapshot().seatFairFraction, 0);

  for (let round = 0; levelOf(c, "a").queueSet.executingRequests > 0; round++) {
    assert.ok(round < 5);
    for (const s of flood) s.release();
    await settle();
  }
  for (const s of ex.slice(0, 30)) s.release();
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator: exempt usage within the others' slack leaves them their share", async () => {
  // Kubernetes allocates nominalSum (not what exempt leaves) among the limited levels when
  // remaining > ΣminCurrentCL: exempt 30 seats on top of 33/33/33.
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(floodConfig(), { clock });
  const seats: Seat[] = [];
  for (let i = 0; i < 30; i++) {
    const o = await c.acquire({ priorityLevel: "exempt", flowSchema: "exempt" });
    assert.ok(o.admitted);
    seats.push(o.seat);
  }
  clock.advance(10_000);
  assert.deepEqual(currentLimits(c), { a: 33, b: 33, "catch-all": 33, exempt: 30 });
  for (const s of seats) s.release();
  clock.advance(10_000); // the window started at 30
  assert.equal(currentLimits(c).exempt, 30);
  clock.advance(10_000);
  assert.equal(currentLimits(c).exempt, 0);
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator adjusts at construction and every 10 s, and close() stops it", () => {
  const clock = new FakeEventClock(5_000);
  const at: number[] = [];
  const c = new EmbeddedCoordinator(floodConfig(), { clock, onAdjust: (a) => at.push(a.atMs) });
  assert.deepEqual(at, [5_000]);
  assert.equal(clock.pendingTimers, 1);
  clock.advance(9_999);
  assert.deepEqual(at, [5_000]);
  clock.advance(1);
  assert.deepEqual(at, [5_000, 15_000]);
  clock.advance(25_000);
  assert.deepEqual(at, [5_000, 15_000, 25_000, 35_000]);
  const manual = c.adjustLimits();
  assert.equal(manual.atMs, 40_000);
  assert.deepEqual(at, [5_000, 15_000, 25_000, 35_000, 40_000]);
  assert.deepEqual(manual.levels.map((l) => [l.name, l.currentLimit]), [
    ["exempt", 0],
    ["a", 33],
    ["b", 33],
    ["catch-all", 33],
  ]);
  // A manual adjustment does not move the timer.
  clock.advance(5_000);
  assert.deepEqual(at.at(-1), 45_000);
  c.close();
  assert.equal(c.closed, true);
  assert.equal(clock.pendingTimers, 0);
  clock.advance(60_000);
  assert.equal(at.length, 6);
  c.close(); // idempotent
});

Deno.test("EmbeddedCoordinator reports a throwing onAdjust and keeps adjusting", () => {
  const clock = new FakeEventClock();
  const errors: unknown[] = [];
  const at: number[] = [];
  const c = new EmbeddedCoordinator(floodConfig(), {
    clock,
    onAdjust: (a) => {
      at.push(a.atMs);
      throw new Error(`boom at ${a.atMs}`);
    },
    onError: (e) => errors.push(e),
  });
  clock.advance(20_000);
  // A configuration change is committed; the callback's error does not refuse it.
  c.configure(floodConfig());
  assert.deepEqual(at, [0, 10_000, 20_000, 20_000]);
  assert.deepEqual(errors.map((e) => (e as Error).message), [
    "boom at 0",
    "boom at 10000",
    "boom at 20000",
    "boom at 20000",
  ]);
  assert.equal(clock.pendingTimers, 1, "the 10 s timer is still armed");
  c.close();
  assert.equal(clock.pendingTimers, 0);
});
