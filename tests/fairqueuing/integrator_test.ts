import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import {
  Integrator,
  type IntegratorResults,
  SEAT_DEMAND_SMOOTHING,
  SeatDemandStats,
} from "../../src/fairqueuing/integrator.ts";
import { assertClose } from "../_helpers/assert_close.ts";

/** Integrator results are exact to within rounding. */
const EXACT = 1e-12;

function observation(fields: Partial<IntegratorResults>): IntegratorResults {
  return { durationMs: 10_000, average: 0, deviation: 0, min: 0, max: 0, ...fields };
}

Deno.test("Integrator averages a signal of 4 for 1s then 0 for 1s to 2, with deviation 2", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(4);
  clock.advance(1000);
  demand.set(0);
  clock.advance(1000);
  assert.deepEqual(demand.results(), {
    durationMs: 2000,
    average: 2,
    deviation: 2,
    min: 0,
    max: 4,
  });
});

Deno.test("Integrator weights each value by how long it was held", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(1);
  clock.advance(1000);
  demand.set(3);
  clock.advance(3000);
  // avg = (1·1 + 3·3)/4 = 2.5; E[x²] = (1·1 + 9·3)/4 = 7; variance = 7 − 6.25 = 0.75.
  const r = demand.results();
  assert.equal(r.durationMs, 4000);
  assert.equal(r.average, 2.5);
  assertClose(r.deviation, Math.sqrt(0.75), EXACT);
  assert.equal(r.min, 0);
  assert.equal(r.max, 3);
});

Deno.test("Integrator integrates a three-level signal over uneven spans", () => {
  const clock = new FakeEventClock(1_000_000);
  const demand = new Integrator(clock);
  clock.advance(500); // 0 for 0.5 s
  demand.set(10);
  clock.advance(250); // 10 for 0.25 s
  demand.set(2);
  clock.advance(1250); // 2 for 1.25 s
  // ∫dt = 2000, ∫x = 2500 + 2500 = 5000, ∫x² = 25000 + 5000 = 30000.
  // avg = 2.5, variance = 15 − 6.25 = 8.75.
  const r = demand.results();
  assert.equal(r.durationMs, 2000);
  assert.equal(r.average, 2.5);
  assertClose(r.deviation, Math.sqrt(8.75), EXACT);
  assert.equal(r.min, 0);
  assert.equal(r.max, 10);
});

Deno.test("Integrator starts at the clock's current time with value 0", () => {
  const clock = new FakeEventClock(500);
  clock.advance(10_000);
  const demand = new Integrator(clock);
  assert.equal(demand.value, 0);
  clock.advance(1000);
  assert.deepEqual(demand.results(), {
    durationMs: 1000,
    average: 0,
    deviation: 0,
    min: 0,
    max: 0,
  });
});

Deno.test("Integrator min and max cover every value set, even for no time", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(5);
  demand.set(-3);
  demand.set(12);
  demand.set(7);
  clock.advance(100);
  const r = demand.results();
  assert.equal(r.min, -3);
  assert.equal(r.max, 12);
  // Only the value held for a while counts toward the average.
  assert.equal(r.average, 7);
  assert.equal(r.deviation, 0);
});

Deno.test("Integrator.results with no elapsed time gives a NaN average and deviation", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(3);
  const r = demand.results();
  assert.equal(r.durationMs, 0);
  assert.ok(Number.isNaN(r.average));
  assert.ok(Number.isNaN(r.deviation));
  assert.equal(r.min, 0);
  assert.equal(r.max, 3);
});

Deno.test("Integrator.results does not reset the window", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(6);
  clock.advance(1000);
  assert.equal(demand.results().average, 6);
  demand.set(0);
  clock.advance(2000);
  const r = demand.results();
  assert.equal(r.durationMs, 3000);
  assert.equal(r.average, 2);
  assertClose(r.deviation, Math.sqrt(12 - 4), EXACT);
});

Deno.test("Integrator reports a NaN deviation, as Kubernetes does, when rounding makes the variance negative", () => {
  // 0.1 held for 3 ms: ∫x²/∫dt − avg² is -1.7e-18 in floating point. Kubernetes' AvgAndStdDev
  // gives NaN then; the seat-demand statistics read it as 0.
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(0.1);
  clock.advance(3);
  const r = demand.results();
  const average = (0.1 * 3) / 3;
  assertClose(r.average, 0.1, EXACT);
  assert.ok((0.1 * 0.1 * 3) / 3 - average * average < 0, "the case no longer rounds below 0");
  assert.ok(Number.isNaN(r.deviation));
  const stats = new SeatDemandStats();
  stats.update(r);
  assert.equal(stats.stdDev, 0);
  assertClose(stats.smoothed, 0.1, EXACT);
});

Deno.test("Integrator.reset returns the window and starts a new one at the current value", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.set(4);
  clock.advance(1000);
  demand.set(1);
  clock.advance(1000);
  const first = demand.reset();
  assert.equal(first.durationMs, 2000);
  assert.equal(first.average, 2.5);
  assert.equal(first.deviation, 1.5);
  assert.equal(first.min, 0);
  assert.equal(first.max, 4);

  const fresh = demand.results();
  assert.equal(fresh.durationMs, 0);
  assert.ok(Number.isNaN(fresh.average));
  assert.equal(fresh.min, 1);
  assert.equal(fresh.max, 1);

  clock.advance(500);
  demand.set(3);
  clock.advance(500);
  assert.deepEqual(demand.reset(), { durationMs: 1000, average: 2, deviation: 1, min: 1, max: 3 });
  assert.equal(demand.value, 3);
  clock.advance(1000);
  assert.deepEqual(demand.results(), {
    durationMs: 1000,
    average: 3,
    deviation: 0,
    min: 3,
    max: 3,
  });
});

Deno.test("Integrator.add changes the value by a delta", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  demand.add(3);
  clock.advance(1000);
  demand.add(-1);
  clock.advance(1000);
  demand.add(-2);
  assert.equal(demand.value, 0);
  const r = demand.results();
  assert.equal(r.durationMs, 2000);
  assert.equal(r.average, 2.5);
  assert.equal(r.min, 0);
  assert.equal(r.max, 3);
});

Deno.test("SeatDemandStats starts at zero and takes the first envelope as is", () => {
  const stats = new SeatDemandStats();
  assert.deepEqual(
    { ...stats },
    { average: 0, stdDev: 0, highWatermark: 0, smoothed: 0 },
  );
  stats.update(observation({ average: 3, deviation: 1, min: 2, max: 5 }));
  assert.deepEqual(
    { ...stats },
    { average: 3, stdDev: 1, highWatermark: 5, smoothed: 4 },
  );
});

Deno.test("SeatDemandStats rounds the high watermark to the nearest integer", () => {
  const stats = new SeatDemandStats();
  const cases: [max: number, expected: number][] = [
    [2.5, 3],
    [2.49, 2],
    [7, 7],
    [0.5, 1],
    [0.4, 0],
    [99.5, 100],
  ];
  for (const [max, expected] of cases) {
    stats.update(observation({ max }));
    assert.equal(stats.highWatermark, expected, `max ${max}`);
  }
});

Deno.test("SeatDemandStats ignores a zero-duration observation except for the high watermark", () => {
  const stats = new SeatDemandStats();
  stats.update(observation({ average: 3, deviation: 1, max: 5 }));
  for (const durationMs of [0, -1, NaN]) {
    stats.update({ durationMs, average: NaN, deviation: NaN, min: 6, max: 7.6 });
    assert.deepEqual(
      { ...stats },
      { average: 3, stdDev: 1, highWatermark: 8, smoothed: 4 },
      `durationMs ${durationMs}`,
    );
  }
});

Deno.test("SeatDemandStats treats a NaN deviation as 0", () => {
  const stats = new SeatDemandStats();
  stats.update(observation({ average: 3, deviation: NaN, max: 3 }));
  assert.equal(stats.stdDev, 0);
  assert.equal(stats.average, 3);
  assert.equal(stats.smoothed, 3);
});

Deno.test("SeatDemandStats smooths the envelope with A=0.977 but never below the latest envelope", () => {
  assert.equal(SEAT_DEMAND_SMOOTHING, 0.977);
  const stats = new SeatDemandStats();
  // [average, deviation, expected smoothed] computed by hand.
  const steps: [number, number, number][] = [
    [3, 1, 4], // max(4, 0.023·4)
    [2, 0, 3.954], // 0.977·4 + 0.023·2
    [1, 0, 3.886058], // 0.977·3.954 + 0.023·1
    [6, 4, 10], // envelope 10 beats 0.977·3.886058 + 0.23 = 4.026578666
    [0, 0, 9.77], // 0.977·10 + 0
    [9.8, 0, 9.8], // envelope 9.8 beats 9.54529 + 0.2254 = 9.77069
    [5, 2.5, 9.7471], // 0.977·9.8 + 0.023·7.5 = 9.5746 + 0.1725
  ];
  for (const [average, deviation, expected] of steps) {
    stats.update(observation({ average, deviation, max: average + deviation }));
    assert.equal(stats.average, average);
    assert.equal(stats.stdDev, deviation);
    assertClose(stats.smoothed, expected, EXACT);
  }
});

Deno.test("SeatDemandStats decays toward a lower demand with a half-life of about 30 periods", () => {
  const stats = new SeatDemandStats();
  stats.update(observation({ average: 100 }));
  for (let i = 0; i < 30; i++) stats.update(observation({ average: 0 }));
  assertClose(stats.smoothed, 100 * 0.977 ** 30, 1e-9);
  assert.ok(stats.smoothed > 49 && stats.smoothed < 51, `smoothed ${stats.smoothed}`);
});

Deno.test("SeatDemandStats folds in an Integrator's window end to end", () => {
  const clock = new FakeEventClock();
  const demand = new Integrator(clock);
  const stats = new SeatDemandStats();
  // A brand-new integrator reset at once: only the high watermark (0) is updated.
  stats.update(demand.reset());
  assert.deepEqual({ ...stats }, { average: 0, stdDev: 0, highWatermark: 0, smoothed: 0 });

  demand.set(4);
  clock.advance(5000);
  demand.set(0);
  clock.advance(5000);
  stats.update(demand.reset());
  assert.deepEqual({ ...stats }, { average: 2, stdDev: 2, highWatermark: 4, smoothed: 4 });

  clock.advance(10_000);
  stats.update(demand.reset());
  assert.equal(stats.average, 0);
  assert.equal(stats.stdDev, 0);
  assert.equal(stats.highWatermark, 0);
  assertClose(stats.smoothed, 0.977 * 4, EXACT);
});
