import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { type UpstreamScenario, WorkerPoolUpstream } from "../../src/sim/upstream.ts";

function pool(scenario: Partial<UpstreamScenario>, durationMs = 100_000, random = Math.random) {
  const clock = new FakeEventClock();
  const upstream = new WorkerPoolUpstream(
    { workers: 2, workMs: 50, jitter: 0, changes: [], ...scenario },
    { clock, random, durationMs },
  );
  return { clock, upstream };
}

Deno.test("WorkerPoolUpstream serves K at a time, first come first served", () => {
  const { clock, upstream } = pool({ workers: 2 });
  const done: [number, number][] = [];
  for (let i = 0; i < 5; i++) upstream.submit((ms) => done.push([i, ms]));
  assert.equal(upstream.inFlight, 5);
  clock.runUntilIdle();
  assert.deepEqual(done, [[0, 50], [1, 50], [2, 100], [3, 100], [4, 150]]);
  assert.equal(upstream.inFlight, 0);
});

Deno.test("WorkerPoolUpstream changes K at the given times", () => {
  const { clock, upstream } = pool({
    workers: 1,
    changes: [{ atMs: 10, workers: 3 }, { atMs: 200, workers: 1 }],
  });
  const done: number[] = [];
  for (let i = 0; i < 4; i++) upstream.submit((ms) => done.push(ms));
  clock.runUntilIdle();
  // One worker until 10 ms, then three: the first ends at 50, two start at 10 and end at 60,
  // the last starts at 50.
  assert.deepEqual(done, [50, 60, 60, 100]);
  assert.equal(upstream.workers, 1);
  upstream.close();
});

Deno.test("WorkerPoolUpstream's work times vary by the jitter", () => {
  let r = 0;
  const { clock, upstream } = pool({ workers: 3, jitter: 0.2 }, 1000, () => [0, 0.5, 0.999][r++]!);
  const done: number[] = [];
  for (let i = 0; i < 3; i++) upstream.submit((ms) => done.push(ms));
  clock.runUntilIdle();
  assert.deepEqual(done.map((ms) => Math.round(ms * 100) / 100), [40, 50, 59.98]);
});

Deno.test("WorkerPoolUpstream measures in-flight percentiles and throughput per settled phase", () => {
  const { clock, upstream } = pool(
    { workers: 2, changes: [{ atMs: 20_000, workers: 1 }] },
    40_000,
  );
  // Closed loop: 4 clients, each sending again at once, so 4 are inside at every instant.
  const loop = () =>
    upstream.submit(() => {
      if (clock.now() < 40_000) loop();
    });
  for (let i = 0; i < 4; i++) loop();
  clock.runUntilIdle();
  const result = upstream.result();
  assert.deepEqual(result.inFlight, { p50: 4, p90: 4, mean: 4, max: 4 });
  assert.deepEqual(result.phases.map((p) => [p.fromMs, p.toMs, p.workers, p.settledFromMs]), [
    [0, 20_000, 2, 10_000],
    [20_000, 40_000, 1, 30_000],
  ]);
  // 2 workers, 50 ms: 40 per second; then 20.
  assert.deepEqual(result.phases.map((p) => [p.throughputPerSecond, p.throughputRatio]), [
    [40, 1],
    [20, 1],
  ]);
  // Every 50 ms, two until 20 s (800), then one, the one due at 40 s not counted (399).
  assert.equal(result.completed, 800 + 399);
});
