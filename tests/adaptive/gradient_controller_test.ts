import assert from "node:assert/strict";
import { GradientController } from "../../src/adaptive/gradient_controller.ts";
import type { GradientControllerOptions } from "../../src/adaptive/gradient_options.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { ClosedLoopUpstream, xorshift } from "../_helpers/closed_loop_upstream.ts";

const S = 50;

/** A controller on a fake clock, with a fixed random source. */
function setup(options: GradientControllerOptions = {}) {
  const clock = new FakeEventClock();
  const controller = new GradientController(options, { clock, random: xorshift(3) });
  return { clock, controller };
}

/** Advances to `toMs` in steps of `stepMs`, returning the limit at each step while sampling. */
function limitsUntil(
  clock: FakeEventClock,
  controller: GradientController,
  toMs: number,
  stepMs = 100,
): number[] {
  const limits: number[] = [];
  while (clock.now() < toMs) {
    clock.advanceTo(Math.min(toMs, clock.now() + stepMs));
    if (controller.snapshot().phase === "sampling") limits.push(controller.limit);
  }
  return limits;
}

/** Ends the window at the initial limit, when the controller is still in it. */
function warmUp(clock: FakeEventClock, controller: GradientController) {
  if (controller.snapshot().phase === "warming-up") {
    clock.advance(controller.options.sampleWindowMs);
  }
}

/** Ends the first minRTT measurement (`minRttRequests: 1`) with one request of `latencyMs`. */
function measure(clock: FakeEventClock, controller: GradientController, latencyMs = S) {
  warmUp(clock, controller);
  clock.advance(latencyMs);
  controller.record({ latencyMs, outcome: "ok" });
}

function closeAll(
  clock: FakeEventClock,
  controller: GradientController,
  load?: ClosedLoopUpstream,
) {
  load?.stop();
  controller.close();
  clock.runUntilIdle();
  assert.equal(clock.pendingTimers, 0);
}

Deno.test("GradientController starts at the initial limit for a window, measures the minRTT at the pinned limit, then restores the initial one", () => {
  const { clock, controller } = setup({ minRttRequests: 10 });
  assert.equal(controller.limit, 20);
  assert.equal(controller.snapshot().phase, "warming-up");
  const changes: number[] = [];
  controller.onLimit((l) => changes.push(l));
  // Samples of the first window teach nothing: there is no minRTT to compare them with.
  controller.record({ latencyMs: 1, outcome: "ok" });
  clock.advance(999);
  assert.equal(controller.snapshot().phase, "warming-up");
  clock.advance(1);
  assert.equal(controller.limit, 3);
  assert.equal(controller.snapshot().phase, "measuring-min-rtt");
  clock.advance(100);
  for (let i = 1; i <= 10; i++) controller.record({ latencyMs: 10 * i, outcome: "ok" });
  // p90 of 10..100 by nearest rank: the 9th value.
  assert.deepEqual(
    controller.snapshot(),
    {
      limit: 20,
      estimate: 20,
      phase: "sampling",
      minRttMs: 90,
      sampleRttMs: null,
      gradient: null,
      samples: 0,
      windows: 0,
      minRttMeasurements: 1,
      min: 3,
      max: 1000,
    },
  );
  assert.deepEqual(changes, [3, 20]);
  closeAll(clock, controller);
});

Deno.test("GradientController's minRTT ignores requests started before it, refusals and errors", () => {
  const { clock, controller } = setup({ minRttRequests: 3 });
  warmUp(clock, controller);
  clock.advance(1000);
  // The measurement began at 1000: this one started at 1900 and counts, the next at 500 and does not.
  controller.record({ latencyMs: 100, outcome: "ok" });
  controller.record({ latencyMs: 1500, outcome: "ok" });
  controller.record({ latencyMs: 1, outcome: "rejected" });
  controller.record({ latencyMs: 1, outcome: "error" });
  assert.equal(controller.snapshot().samples, 1);
  controller.record({ latencyMs: 200, outcome: "timeout" });
  controller.record({ latencyMs: 100, outcome: "ok" });
  assert.equal(controller.snapshot().minRttMs, 200);
  closeAll(clock, controller);
});

Deno.test("GradientController settles between K and 2K in front of K workers", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 20_000);
  const limits = limitsUntil(clock, controller, 50_000);
  assert.ok(Math.min(...limits) >= 8, `min ${Math.min(...limits)}`);
  assert.ok(Math.max(...limits) <= 16, `max ${Math.max(...limits)}`);
  // K/S = 160 per second; the minRTT measurement at about 60 s is outside this span.
  assert.ok(load.throughput(20_000, 50_000) >= 0.9 * 160, `${load.throughput(20_000, 50_000)}`);
  closeAll(clock, controller, load);
});

Deno.test("GradientController follows K from 8 to 4 and back within 10 s", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 30_000);
  const before = controller.limit;
  load.workers = 4;
  const afterDrop = limitsUntil(clock, controller, 40_000).slice(-10); // the last second
  assert.ok(Math.max(...afterDrop) <= 8, `${afterDrop}: at most 2K within 10 s`);
  assert.ok(Math.min(...afterDrop) >= 4, `${afterDrop}`);
  assert.ok(load.throughput(38_000, 40_000) >= 0.9 * 80);
  limitsUntil(clock, controller, 50_000);
  load.workers = 8;
  const afterReturn = limitsUntil(clock, controller, 60_000).slice(-10);
  assert.ok(Math.min(...afterReturn) >= 8, `${afterReturn}: at least K within 10 s`);
  assert.ok(Math.abs(controller.limit - before) <= 2, `${controller.limit} vs ${before}`);
  assert.ok(load.throughput(55_000, 60_000) >= 0.9 * 160);
  closeAll(clock, controller, load);
});

Deno.test("GradientController holds within ±20% of its limit on noisy latencies", () => {
  for (const seed of [1, 2, 3]) {
    const clock = new FakeEventClock();
    const controller = new GradientController({}, { clock, random: xorshift(seed) });
    const load = new ClosedLoopUpstream(controller, clock, {
      workers: 8,
      workMs: S,
      noise: 0.2,
      random: xorshift(seed + 10),
    });
    limitsUntil(clock, controller, 30_000);
    // Three minutes, two or three minRTT measurements included (their pinned limit is not counted).
    const limits = limitsUntil(clock, controller, 210_000);
    const mean = limits.reduce((a, b) => a + b, 0) / limits.length;
    assert.ok(mean >= 8 && mean <= 16, `seed ${seed}: mean ${mean}`);
    for (const l of [Math.min(...limits), Math.max(...limits)]) {
      assert.ok(Math.abs(l - mean) <= 0.2 * mean, `seed ${seed}: ${l} vs mean ${mean}`);
    }
    assert.ok(controller.snapshot().minRttMeasurements >= 3);
    closeAll(clock, controller, load);
  }
});

Deno.test("GradientController lowers the limit on a latency step up, and re-anchors at the next minRTT", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 20_000);
  const before = controller.limit;
  load.workMs = 2 * S; // each request now takes twice as long: the minRTT is stale
  const after = limitsUntil(clock, controller, 25_000).at(-1)!;
  assert.ok(after <= 0.6 * before, `${after} vs ${before}`);
  // The next measurement (60 s to 69 s after the first) finds the new minRTT.
  limitsUntil(clock, controller, 85_000);
  assert.equal(controller.snapshot().minRttMs, 2 * S);
  assert.ok(controller.limit >= 8 && controller.limit <= 16, `${controller.limit}`);
  closeAll(clock, controller, load);
});

Deno.test("GradientController measures again after 5 windows at its lower bound", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 20_000);
  load.workMs = 10 * S; // much slower: the limit falls to 3 and stays there
  let remeasuredAt = -1;
  while (clock.now() < 40_000 && remeasuredAt < 0) {
    clock.advance(100);
    if (controller.snapshot().minRttMeasurements === 2) remeasuredAt = clock.now();
  }
  assert.ok(remeasuredAt > 0 && remeasuredAt < 40_000, `${remeasuredAt}`);
  assert.equal(controller.snapshot().minRttMs, 10 * S);
  limitsUntil(clock, controller, 60_000);
  assert.ok(controller.limit >= 8 && controller.limit <= 16, `${controller.limit}`);
  closeAll(clock, controller, load);
});

Deno.test("GradientController raises the limit when the work gets faster", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 20_000);
  const before = controller.limit;
  load.workMs = S / 2;
  limitsUntil(clock, controller, 25_000);
  assert.ok(controller.limit > before, `${controller.limit} vs ${before}`);
  closeAll(clock, controller, load);
});

Deno.test("GradientController brings the limit to its lower bound when requests time out", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 20_000);
  load.fate = () => ({ outcome: "timeout", latencyMs: 1000 }); // the upstream hangs
  const limits = limitsUntil(clock, controller, 30_000);
  // The first timeouts come back after 1 s; each window then at least halves the limit, plus
  // the headroom.
  assert.ok(limits[39]! <= limits[0]! / 2, `${limits}: halved within 4 s`);
  assert.equal(limits.at(-1), 3, `${limits}: at the lower bound within 10 s`);
  closeAll(clock, controller, load);
});

Deno.test("GradientController: a tail of timeouts above 1 − percentile lowers the limit, a thinner one does not", () => {
  for (const [share, lowers] of [[0.2, true], [0.05, false]] as const) {
    const { clock, controller } = setup();
    const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
    limitsUntil(clock, controller, 20_000);
    const before = controller.limit;
    const pick = xorshift(5);
    load.fate = () => pick() < share ? { outcome: "timeout", latencyMs: 1000 } : undefined;
    const limits = limitsUntil(clock, controller, 30_000).slice(-20);
    if (lowers) assert.ok(Math.max(...limits) <= 4, `${share}: ${limits} from ${before}`);
    else assert.ok(Math.min(...limits) >= before - 3, `${share}: ${limits} from ${before}`);
    closeAll(clock, controller, load);
  }
});

Deno.test("GradientController lowers the limit when the upstream refuses requests", () => {
  const { clock, controller } = setup();
  const load = new ClosedLoopUpstream(controller, clock, { workers: 8, workMs: S });
  limitsUntil(clock, controller, 20_000);
  // The upstream answers 503 at once beyond 6 requests.
  load.fate = (n) => n > 6 ? { outcome: "rejected", latencyMs: 1 } : undefined;
  const limits = limitsUntil(clock, controller, 40_000).slice(-100);
  // It probes just above the upstream's 6 and backs off: it no longer sits at 13 or so.
  assert.ok(Math.max(...limits) <= 8, `${limits}`);
  assert.ok(Math.min(...limits) >= 5, `${limits}`);
  closeAll(clock, controller, load);
});

Deno.test("GradientController ignores failures faster than the minRTT, and counts slow ones", () => {
  const { clock, controller } = setup({ minRttRequests: 1 });
  measure(clock, controller); // minRTT 50; limit 20
  for (let i = 0; i < 100; i++) controller.record({ latencyMs: 1, outcome: "error" });
  clock.advance(1000);
  assert.equal(controller.limit, 20);
  assert.equal(controller.snapshot().windows, 0); // no news: no window evaluated
  for (let i = 0; i < 100; i++) controller.record({ latencyMs: 500, outcome: "error" });
  clock.advance(1000);
  assert.equal(controller.snapshot().gradient, 0.5);
  assert.ok(controller.limit < 20);
  closeAll(clock, controller);
});

Deno.test("GradientController does not raise the limit while demand stays below half of it", () => {
  const { clock, controller } = setup({ minRttRequests: 1 });
  measure(clock, controller);
  for (const [demand, grows] of [[9, false], [10, true]] as const) {
    const before = controller.limit;
    for (let i = 0; i < 10; i++) controller.record({ latencyMs: 50, outcome: "ok", demand });
    clock.advance(1000);
    assert.equal(controller.limit > before, grows, `demand ${demand}: ${controller.limit}`);
  }
  // Without a demand, nothing holds it back.
  const before = controller.limit;
  controller.record({ latencyMs: 50, outcome: "ok" });
  clock.advance(1000);
  assert.ok(controller.limit > before);
  closeAll(clock, controller);
});

Deno.test("GradientController stays within [min, max]", () => {
  const { clock, controller } = setup({ minRttRequests: 1, min: 5, max: 30, initial: 25 });
  measure(clock, controller);
  for (let w = 0; w < 10; w++) {
    controller.record({ latencyMs: 10, outcome: "ok" });
    clock.advance(1000);
  }
  assert.equal(controller.limit, 30);
  for (let w = 0; w < 8; w++) {
    controller.record({ latencyMs: 1000, outcome: "ok" });
    clock.advance(1000);
  }
  assert.equal(controller.limit, 5);
  closeAll(clock, controller);
});

Deno.test("GradientController measures the minRTT again every interval plus jitter", () => {
  const clock = new FakeEventClock();
  const controller = new GradientController(
    { minRttRequests: 1, minRttIntervalMs: 10_000, jitter: 0.2 },
    { clock, random: () => 0.5 },
  );
  measure(clock, controller); // ends at 1,050 ms: a window at the initial limit, then 50 ms
  clock.advanceTo(12_049);
  assert.equal(controller.snapshot().phase, "sampling");
  clock.advanceTo(12_050); // 1,050 ms + 10 s × (1 + 0.5 × 0.2)
  assert.equal(controller.snapshot().phase, "measuring-min-rtt");
  assert.equal(controller.limit, 3);
  clock.advance(10);
  controller.record({ latencyMs: 5, outcome: "ok" });
  assert.equal(controller.snapshot().minRttMs, 5);
  assert.equal(controller.limit, 20);
  closeAll(clock, controller);
});

Deno.test("GradientController: listeners hear changes, unsubscribe, and a throwing one is reported", () => {
  const clock = new FakeEventClock();
  const errors: unknown[] = [];
  const controller = new GradientController({ minRttRequests: 1 }, {
    clock,
    onError: (e) => errors.push(e),
  });
  const heard: number[] = [];
  const stop = controller.onLimit((l) => heard.push(l));
  controller.onLimit(() => {
    throw new Error("boom");
  });
  measure(clock, controller);
  stop();
  controller.record({ latencyMs: 50, outcome: "ok" });
  clock.advance(1000);
  assert.deepEqual(heard, [3, 20]);
  assert.ok(controller.limit > 20);
  assert.equal(errors.length, 3);
  assert.equal((errors[0] as Error).message, "boom");
  assert.throws(() => controller.onLimit(42 as never), {
    name: "TypeError",
    message: "Cannot listen to the limit: listener must be a function, got number",
  });
  closeAll(clock, controller);
});

Deno.test("GradientController.close() disposes every timer and ignores later samples", () => {
  const clock = new FakeEventClock();
  {
    using controller = new GradientController({ minRttRequests: 1 }, { clock });
    measure(clock, controller);
    assert.equal(clock.pendingTimers, 2); // the window and the next measurement
  }
  assert.equal(clock.pendingTimers, 0);
  const controller = new GradientController({ minRttRequests: 1 }, { clock });
  controller.close();
  controller.close();
  measure(clock, controller);
  assert.equal(controller.limit, 20, "closed in its first window: it never pinned");
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("GradientController refuses bad samples with the value in the message", () => {
  const { clock, controller } = setup();
  assert.throws(() => controller.record({ latencyMs: -1, outcome: "ok" }), {
    name: "RangeError",
    message: "Cannot record a sample: latencyMs must be a finite number >= 0, got -1",
  });
  assert.throws(() => controller.record({ latencyMs: "5" as never, outcome: "ok" }), {
    name: "TypeError",
  });
  assert.throws(() => controller.record({ latencyMs: 5, outcome: "slow" as never }), {
    name: "TypeError",
    message:
      'Cannot record a sample: outcome must be one of "ok", "error", "rejected", "timeout", got "slow"',
  });
  assert.throws(() => controller.record({ latencyMs: 5, outcome: "ok", demand: NaN }), {
    name: "RangeError",
    message: "Cannot record a sample: demand must be a finite number >= 0, got NaN",
  });
  closeAll(clock, controller);
});

Deno.test("GradientController: windows of microsecond handlers a few microseconds slower do not lower the limit", () => {
  const { clock, controller } = setup({ minRttRequests: 1 });
  measure(clock, controller, 0.01); // a minRTT of 10 µs; limit 20
  for (let w = 0; w < 20; w++) {
    // Twice the minRTT, but within a millisecond of it: noise, not a queue.
    for (let i = 0; i < 10; i++) controller.record({ latencyMs: 0.02, outcome: "ok", demand: 1 });
    clock.advance(1000);
  }
  assert.equal(controller.limit, 20, "app-limited: no rise, and no fall");
  // A millisecond and more above it is a queue: the limit falls.
  for (let i = 0; i < 10; i++) controller.record({ latencyMs: 5, outcome: "ok", demand: 20 });
  clock.advance(1000);
  assert.ok(controller.limit < 20, `${controller.limit}`);
  closeAll(clock, controller);
});
