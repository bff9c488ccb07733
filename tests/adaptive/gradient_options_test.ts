import assert from "node:assert/strict";
import { GradientController } from "../../src/adaptive/gradient_controller.ts";
import {
  GRADIENT_OPTION_NAMES,
  type GradientControllerOptions,
  resolveGradientOptions,
} from "../../src/adaptive/gradient_options.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";

Deno.test("gradient options: the defaults", () => {
  assert.deepEqual(resolveGradientOptions(), {
    min: 3,
    max: 1000,
    initial: 20,
    sampleWindowMs: 1000,
    minRttIntervalMs: 60_000,
    jitter: 0.15,
    minRttRequests: 50,
    minRttLimit: 3,
    percentile: 0.9,
    buffer: 0.25,
    maxGradient: 2,
    smoothing: 0.5,
  });
  assert.deepEqual(Object.keys(resolveGradientOptions()), GRADIENT_OPTION_NAMES);
});

Deno.test("gradient options: defaults follow the bounds given", () => {
  const o = resolveGradientOptions({ min: 30, max: 40 });
  assert.equal(o.initial, 30);
  assert.equal(resolveGradientOptions({ max: 10 }).initial, 10);
  assert.equal(resolveGradientOptions({ min: 1, max: 2 }).minRttLimit, 2);
  assert.equal(resolveGradientOptions({ min: 2000 }).max, 2000);
  assert.equal(resolveGradientOptions({ min: undefined }).min, 3);
});

Deno.test("gradient options: each bad value is refused with its name and value", () => {
  const cases: [GradientControllerOptions, string, string][] = [
    [{ min: 0 }, "RangeError", "min must be an integer >= 1, got 0"],
    [{ min: 2.5 }, "RangeError", "min must be an integer >= 1, got 2.5"],
    [{ max: 2 }, "RangeError", "max must be an integer >= 3, got 2"],
    [{ initial: 1001 }, "RangeError", "initial must be an integer in [3, 1000], got 1001"],
    [{ sampleWindowMs: 0 }, "RangeError", "sampleWindowMs must be a finite number > 0, got 0"],
    [
      { minRttIntervalMs: Infinity },
      "RangeError",
      "minRttIntervalMs must be a finite number > 0, got Infinity",
    ],
    [{ jitter: 1.5 }, "RangeError", "jitter must be a number in [0, 1], got 1.5"],
    [{ minRttRequests: 0 }, "RangeError", "minRttRequests must be an integer >= 1, got 0"],
    [{ minRttLimit: 1001 }, "RangeError", "minRttLimit must be an integer in [1, 1000], got 1001"],
    [{ percentile: 0 }, "RangeError", "percentile must be a number in (0, 1], got 0"],
    [{ percentile: NaN }, "RangeError", "percentile must be a number in (0, 1], got NaN"],
    [{ buffer: -0.1 }, "RangeError", "buffer must be a number in [0, 10], got -0.1"],
    [{ maxGradient: 0.9 }, "RangeError", "maxGradient must be a number in [1, 100], got 0.9"],
    [{ smoothing: 0 }, "RangeError", "smoothing must be a number in (0, 1], got 0"],
    [{ min: "5" as never }, "TypeError", 'min must be an integer >= 1, got "5"'],
    [{ buffer: null as never }, "TypeError", "buffer must be a number in [0, 10], got null"],
  ];
  for (const [options, name, message] of cases) {
    assert.throws(() => resolveGradientOptions(options), {
      name,
      message: `Cannot create the gradient controller: ${message}`,
    });
  }
});

Deno.test("gradient options: unknown names are refused, with the nearest known one", () => {
  assert.throws(() => resolveGradientOptions({ percentil: 0.5 } as never), {
    name: "TypeError",
    message:
      'Cannot create the gradient controller: unknown option "percentil" (did you mean "percentile"?)',
  });
  assert.throws(() => resolveGradientOptions("auto" as never), {
    name: "TypeError",
    message: 'Cannot create the gradient controller: options must be an object, got "auto"',
  });
});

Deno.test("gradient options: the controller checks them before it starts anything", () => {
  const clock = new FakeEventClock();
  assert.throws(() => new GradientController({ percentile: 2 }, { clock }), RangeError);
  assert.equal(clock.pendingTimers, 0);
});
