import assert from "node:assert/strict";
import { parseScenario, ScenarioError, scenarioFromJson } from "../../src/sim/scenario.ts";
import type { Scenario, ScenarioClient } from "../../src/sim/types.ts";

const DEFAULT_CLIENT: ScenarioClient = {
  name: "a",
  flowHash: 1001001001n,
  threads: 8,
  calls: 20,
  execMs: 1000,
  thinkMs: 999.999999,
  initialSeats: 1,
  finalSeats: 1,
  additionalLatencyMs: 0,
  split: false,
};

const DEFAULT_SCENARIO: Scenario = {
  name: "uniform-handsize-1",
  priorityLevel: {
    type: "Limited",
    concurrencyLimit: 4,
    queuing: { queues: 9, queueLengthLimit: 8, handSize: 1 },
  },
  requestWaitLimitMs: null,
  durationMs: 50000,
  clients: [DEFAULT_CLIENT],
};

/** Asserts that `value` is refused with exactly `message`, and the error carries `path`. */
function rejects(value: unknown, message: string, path: string): void {
  assert.throws(
    () => scenarioFromJson(value),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError, `expected a ScenarioError, got ${e}`);
      assert.equal(e.message, message);
      assert.equal(e.path, path);
      return true;
    },
  );
}

/** A scenario with one client made of `fields` over the defaults. */
function withClient(fields: Record<string, unknown>): unknown {
  return { clients: [{}, fields] };
}

Deno.test("scenarioFromJson fills every default into an empty object", () => {
  assert.deepEqual(scenarioFromJson({}), DEFAULT_SCENARIO);
  assert.deepEqual(parseScenario(" {} \n"), DEFAULT_SCENARIO);
});

Deno.test("scenarioFromJson fills the defaults of partial objects member by member", () => {
  const s = scenarioFromJson({
    name: "two",
    priorityLevel: { concurrencyLimit: 0, queuing: { handSize: 3 } },
    requestWaitLimitMs: 15_000.5,
    clients: [{ name: "b", threads: 2, thinkMs: -0.000001 }, { flowHash: "7", split: true }],
  });
  assert.deepEqual(s, {
    ...DEFAULT_SCENARIO,
    name: "two",
    priorityLevel: {
      type: "Limited",
      concurrencyLimit: 0,
      queuing: { queues: 9, queueLengthLimit: 8, handSize: 3 },
    },
    requestWaitLimitMs: 15_000.5,
    clients: [
      { ...DEFAULT_CLIENT, name: "b", threads: 2, thinkMs: -0.000001 },
      { ...DEFAULT_CLIENT, flowHash: 7n, split: true },
    ],
  });
});

Deno.test("scenarioFromJson keeps explicit nulls where they mean something", () => {
  const s = scenarioFromJson({
    priorityLevel: { type: "Exempt", queuing: null },
    requestWaitLimitMs: null,
  });
  assert.deepEqual(s.priorityLevel, { type: "Exempt", concurrencyLimit: 4, queuing: null });
  assert.equal(s.requestWaitLimitMs, null);
  // An explicit undefined (only possible from JS) is an omission.
  assert.deepEqual(scenarioFromJson({ name: undefined }), DEFAULT_SCENARIO);
});

Deno.test("scenarioFromJson names the offending field of the level", () => {
  rejects([], "the scenario must be a JSON object, got an array", "");
  rejects(null, "the scenario must be a JSON object, got null", "");
  rejects({ name: 3 }, "name: must be a string, got 3", "name");
  rejects(
    { priorityLevel: "x" },
    'priorityLevel: must be a JSON object, got "x"',
    "priorityLevel",
  );
  rejects(
    { priorityLevel: { type: "limited" } },
    'priorityLevel.type: must be "Limited" or "Exempt", got "limited"',
    "priorityLevel.type",
  );
  rejects(
    { priorityLevel: { concurrencyLimit: -1 } },
    "priorityLevel.concurrencyLimit: must be an integer >= 0, got -1",
    "priorityLevel.concurrencyLimit",
  );
  rejects(
    { priorityLevel: { concurrencyLimit: 1.5 } },
    "priorityLevel.concurrencyLimit: must be an integer >= 0, got 1.5",
    "priorityLevel.concurrencyLimit",
  );
  for (const key of ["queues", "queueLengthLimit", "handSize"]) {
    rejects(
      { priorityLevel: { queuing: { [key]: 0 } } },
      `priorityLevel.queuing.${key}: must be an integer >= 1, got 0`,
      `priorityLevel.queuing.${key}`,
    );
  }
});

Deno.test("scenarioFromJson refuses hands a Dealer refuses", () => {
  rejects(
    { priorityLevel: { queuing: { queues: 4, handSize: 5 } } },
    "priorityLevel.queuing.handSize: must be at most queues (4), got 5",
    "priorityLevel.queuing.handSize",
  );
  rejects(
    { priorityLevel: { queuing: { queues: 512, handSize: 8 } } },
    "priorityLevel.queuing.handSize: required entropy bits of deckSize 512 and handSize 8 " +
      "is greater than 60",
    "priorityLevel.queuing.handSize",
  );
  rejects(
    { priorityLevel: { queuing: { queues: 2 ** 26 + 1 } } },
    "priorityLevel.queuing.queues: deckSize 67108865 is impractically large",
    "priorityLevel.queuing.queues",
  );
  // The largest accepted hand for 128 queues: ceil(7 * 8) = 56 bits.
  const q = scenarioFromJson({ priorityLevel: { queuing: { queues: 128, handSize: 8 } } });
  assert.deepEqual(q.priorityLevel.queuing, { queues: 128, queueLengthLimit: 8, handSize: 8 });
});

Deno.test("scenarioFromJson checks the wait limit and the duration", () => {
  rejects(
    { requestWaitLimitMs: -1 },
    "requestWaitLimitMs: must be a finite number >= 0, got -1",
    "requestWaitLimitMs",
  );
  rejects(
    { requestWaitLimitMs: "1s" },
    'requestWaitLimitMs: must be a finite number >= 0, got "1s"',
    "requestWaitLimitMs",
  );
  rejects({ durationMs: 0 }, "durationMs: must be a finite number > 0, got 0", "durationMs");
  rejects(
    { durationMs: Infinity },
    "durationMs: must be a finite number > 0, got Infinity",
    "durationMs",
  );
  assert.equal(scenarioFromJson({ requestWaitLimitMs: 0 }).requestWaitLimitMs, 0);
  assert.equal(scenarioFromJson({ durationMs: 0.5 }).durationMs, 0.5);
});

Deno.test("scenarioFromJson names the offending field of a client", () => {
  rejects(
    { clients: [] },
    "clients: must be a non-empty array of clients, got an array",
    "clients",
  );
  rejects(
    { clients: {} },
    "clients: must be a non-empty array of clients, got an object",
    "clients",
  );
  rejects({ clients: [{}, 3] }, "clients[1]: must be a JSON object, got 3", "clients[1]");
  const cases: [Record<string, unknown>, string][] = [
    [{ name: "" }, 'name: must be a non-empty string, got ""'],
    [{ threads: 0 }, "threads: must be an integer >= 1, got 0"],
    [{ threads: 100_001 }, "threads: must be at most 100000, got 100001"],
    [{ calls: -1 }, "calls: must be an integer >= 0, got -1"],
    [{ calls: 10_000_001, threads: 1 }, "calls: must be at most 10000000, got 10000001"],
    [{ execMs: -0.5 }, "execMs: must be a finite number >= 0, got -0.5"],
    [{ thinkMs: null }, "thinkMs: must be a finite number, got null"],
    [{ execMs: 1, thinkMs: -1.5 }, "thinkMs: execMs + thinkMs must be >= 0, got 1 + -1.5"],
    [{ initialSeats: 0 }, "initialSeats: must be an integer >= 1, got 0"],
    [{ finalSeats: -1 }, "finalSeats: must be an integer >= 0, got -1"],
    [{ additionalLatencyMs: -1 }, "additionalLatencyMs: must be a finite number >= 0, got -1"],
    [{ split: "yes" }, 'split: must be a boolean, got "yes"'],
  ];
  for (const [fields, problem] of cases) {
    const key = problem.slice(0, problem.indexOf(":"));
    rejects(withClient(fields), `clients[1].${problem}`, `clients[1].${key}`);
  }
  // Kubernetes' TestWindup thinks for -1ns: a negative think with a non-negative cycle is fine.
  const windup = scenarioFromJson(withClient({ execMs: 1000, thinkMs: -0.000001 }));
  assert.equal(windup.clients[1]!.thinkMs, -0.000001);
});

Deno.test("scenarioFromJson caps the clients and the total work", () => {
  rejects(
    { clients: new Array(10_001).fill({}) },
    "clients: must have at most 10000 clients, got 10001",
    "clients",
  );
  rejects(
    { clients: [{ threads: 50_000, calls: 1000 }, { threads: 1, calls: 1 }] },
    "clients: total calls (threads * calls summed over clients) must be at most 50000000, " +
      "got 50000001",
    "clients",
  );
  const full = scenarioFromJson({ clients: [{ threads: 50_000, calls: 1000 }] });
  assert.equal(full.clients[0]!.threads * full.clients[0]!.calls, 50_000_000);
});

Deno.test("scenarioFromJson reads flow hashes as unsigned 64-bit integers", () => {
  const hash = (flowHash: unknown) =>
    scenarioFromJson(withClient({ flowHash })).clients[1]!.flowHash;
  assert.equal(hash("0"), 0n);
  assert.equal(hash("18446744073709551615"), 2n ** 64n - 1n);
  assert.equal(hash("0018446744073709551615"), 2n ** 64n - 1n);
  assert.equal(hash(12345), 12345n);
  assert.equal(hash(Number.MAX_SAFE_INTEGER), 2n ** 53n - 1n);
  const at = "clients[1].flowHash";
  rejects(
    withClient({ flowHash: "18446744073709551616" }),
    `${at}: must be less than 2^64, got "18446744073709551616"`,
    at,
  );
  rejects(
    withClient({ flowHash: "9".repeat(400) }),
    `${at}: must be less than 2^64, got "${"9".repeat(400)}"`,
    at,
  );
  for (const bad of ["-1", "", " 1", "1e3", "0x10", "1.0"]) {
    rejects(
      withClient({ flowHash: bad }),
      `${at}: must be an unsigned 64-bit integer as a decimal string, got ${JSON.stringify(bad)}`,
      at,
    );
  }
  for (const bad of [-1, 1.5, 2 ** 53]) {
    rejects(
      withClient({ flowHash: bad }),
      `${at}: must be a non-negative safe integer when given as a number (use a decimal string), ` +
        `got ${bad}`,
      at,
    );
  }
});

Deno.test("scenarioFromJson names unknown fields at every level", () => {
  rejects(
    { nmae: "x" },
    "nmae: unknown field (expected one of name, priorityLevel, requestWaitLimitMs, durationMs, " +
      "clients)",
    "nmae",
  );
  assert.throws(() => scenarioFromJson({ priorityLevel: { limited: {} } }), {
    name: "ScenarioError",
    message: /^priorityLevel\.limited: unknown field/,
  });
  assert.throws(() => scenarioFromJson({ priorityLevel: { queuing: { desiredQueues: 1 } } }), {
    message: /^priorityLevel\.queuing\.desiredQueues: unknown field/,
  });
  assert.throws(() => scenarioFromJson(withClient({ think: 1 })), {
    message: /^clients\[1\]\.think: unknown field/,
  });
  // JSON.parse makes "__proto__" an own key; it must not slip through as a prototype.
  assert.throws(() => parseScenario('{"__proto__": {"name": "x"}}'), {
    message: /^__proto__: unknown field/,
  });
});

Deno.test("parseScenario wraps JSON syntax errors", () => {
  for (const text of ["", "{", "{'name': 1}", "[1,]"]) {
    assert.throws(
      () => parseScenario(text),
      (e: unknown) =>
        e instanceof ScenarioError && e.path === "" && e.message.startsWith("invalid JSON: "),
    );
  }
  assert.throws(() => parseScenario("42"), {
    message: "the scenario must be a JSON object, got 42",
  });
});
