import assert from "node:assert/strict";
import { callbackBudget, simulate } from "../../src/sim/run.ts";
import {
  MAX_CALLS,
  MAX_THREADS,
  MAX_TOTAL_CALLS,
  scenarioFromJson,
} from "../../src/sim/scenario.ts";

/** The FakeEventClock's default runaway guard, which once stopped large valid scenarios. */
const CLOCK_DEFAULT_GUARD = 10_000_000;

Deno.test("callbackBudget bounds the callbacks of every kind of call", () => {
  const scenarios = [
    {},
    // Lingering final seats: four timers per call.
    {
      durationMs: 1,
      priorityLevel: { concurrencyLimit: 300 },
      clients: [{ threads: 10, calls: 300, execMs: 1, thinkMs: 0, additionalLatencyMs: 1 }],
    },
    {
      durationMs: 3,
      priorityLevel: { concurrencyLimit: 3 },
      clients: [
        { threads: 10, calls: 50, execMs: 0.7, thinkMs: 0.3, additionalLatencyMs: 0.1 },
        { name: "b", flowHash: "7", threads: 4, calls: 9, split: true, finalSeats: 0 },
      ],
    },
    // Rejections end threads; negative think time (TestWindup).
    { priorityLevel: { concurrencyLimit: 1, queuing: null }, clients: [{ threads: 9 }] },
    { requestWaitLimitMs: 0.5, clients: [{ threads: 40, execMs: 1, thinkMs: -0.000001 }] },
    { priorityLevel: { type: "Exempt", concurrencyLimit: 0 }, clients: [{ calls: 0 }] },
  ];
  for (const json of scenarios) {
    const scenario = scenarioFromJson(json);
    const run = simulate(scenario);
    assert.ok(run.callbacks > 0);
    assert.ok(
      run.callbacks <= callbackBudget(scenario),
      `${JSON.stringify(json)}: ${run.callbacks} > ${callbackBudget(scenario)}`,
    );
  }
});

Deno.test("a scenario at the validation limits gets a guard it cannot hit", () => {
  // Four timer callbacks per call, 3M calls: 12M callbacks, which the fixed
  // 10M guard refused. Every call is dispatched, none rejected.
  const large = scenarioFromJson({
    clients: [{ threads: 100, calls: 30_000, execMs: 1, thinkMs: 0, additionalLatencyMs: 1 }],
  });
  assert.ok(callbackBudget(large) >= 100 + 4 * 3_000_000);
  assert.ok(callbackBudget(large) > CLOCK_DEFAULT_GUARD);

  for (
    const clients of [
      [{ threads: MAX_TOTAL_CALLS / MAX_CALLS, calls: MAX_CALLS }],
      [{ threads: MAX_THREADS, calls: MAX_TOTAL_CALLS / MAX_THREADS }],
    ]
  ) {
    // Validation accepts it, and the guard covers its worst case.
    const scenario = scenarioFromJson({ clients });
    const { threads, calls } = scenario.clients[0]!;
    assert.equal(threads * calls, MAX_TOTAL_CALLS);
    assert.ok(callbackBudget(scenario) >= threads * (1 + 4 * calls));
    assert.ok(Number.isSafeInteger(callbackBudget(scenario)));
  }
});

Deno.test("the simulator's guard is the scenario's budget, end to end", () => {
  // The large case above, scaled down: runs to the end within its budget.
  const scenario = scenarioFromJson({
    durationMs: 1,
    priorityLevel: { concurrencyLimit: 300 },
    clients: [{ threads: 100, calls: 300, execMs: 1, thinkMs: 0, additionalLatencyMs: 1 }],
  });
  const run = simulate(scenario);
  assert.equal(run.result.clients[0]!.dispatched, 100 * 300);
  assert.ok(run.callbacks >= 100 + 4 * 100 * 300 - 1, `${run.callbacks} callbacks`);
  assert.ok(run.callbacks <= callbackBudget(scenario));
});
