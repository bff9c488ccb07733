/**
 * Kubernetes' QueueSet scenario tests (`queueset_test.go`;
 * `docs/semantics.md` §10.2), run through the simulator with their
 * expectations and margins.
 *
 * Kubernetes keeps time in integer nanoseconds, so its margin 0 means
 * "exactly"; here time is float milliseconds, so margins are floored at
 * 1e-9 (relative), far below any algorithmic difference.
 */

import assert from "node:assert/strict";
import { fairAlloc, uniformDemands } from "../../src/sim/fair_alloc.ts";
import { callbackBudget, simulate } from "../../src/sim/run.ts";
import { scenarioFromJson } from "../../src/sim/scenario.ts";
import type { RejectionCounts, Scenario } from "../../src/sim/types.ts";

const S = 1000;
const NS = 1e-6;
/** Q of TestSeatSecondsRollover: 91 days. */
const Q = 91 * 24 * 3600 * S;

type ClientSpec = [
  hash: string,
  threads: number,
  calls: number,
  execMs: number,
  thinkMs: number,
  seats: [initial: number, final: number],
  extra?: { padMs?: number; split?: boolean },
];

interface Check {
  /** Expected fairness and margin at each checkpoint. */
  fair: [expectFair: boolean, margin: number][];
  /** Capacity for fairAlloc when no override is given. */
  evalCL: number;
  /** Expected averages per checkpoint, overriding fairAlloc. */
  expected?: number[][];
  /** Default true: no call fails. */
  allRequests?: boolean;
  /** The reason every failure must have. */
  rejectReason?: keyof RejectionCounts;
  /** Default true: the set's seat-demand integral matches an independent one. */
  seatDemand?: boolean;
}

function scenario(
  name: string,
  pl: { type?: "Exempt"; cl: number; queuing: [number, number, number] | null },
  clients: ClientSpec[],
  durationMs: number,
  requestWaitLimitMs: number | null = null,
): Scenario {
  return scenarioFromJson({
    name,
    priorityLevel: {
      type: pl.type ?? "Limited",
      concurrencyLimit: pl.cl,
      queuing: pl.queuing &&
        { queues: pl.queuing[0], queueLengthLimit: pl.queuing[1], handSize: pl.queuing[2] },
    },
    requestWaitLimitMs,
    durationMs,
    clients: clients.map(([hash, threads, calls, execMs, thinkMs, [initial, final], extra]) => ({
      name: hash,
      flowHash: hash,
      threads,
      calls,
      execMs,
      thinkMs,
      initialSeats: initial,
      finalSeats: final,
      additionalLatencyMs: extra?.padMs ?? 0,
      split: extra?.split ?? false,
    })),
  });
}

function check(sc: Scenario, c: Check): void {
  const run = simulate(sc);
  const { result } = run;
  assert.ok(run.callbacks <= callbackBudget(sc), `${sc.name}: ${run.callbacks} callbacks`);
  result.checkpointsMs.forEach((_, k) => {
    const expected = c.expected?.[k] ??
      fairAlloc(uniformDemands(sc, result.checkpointsMs.length === 2 ? k as 0 | 1 : 1), c.evalCL);
    const [expectFair, margin] = c.fair[k]!;
    const m = Math.max(margin, 1e-9);
    result.clients.forEach((client, i) => {
      const avg = client.averageSeats[k]!;
      const exp = expected[i]!;
      const fair = exp > 0 ? Math.abs(avg - exp) / exp <= m : Math.abs(avg) <= m;
      assert.equal(
        fair,
        expectFair,
        `${sc.name}: client ${client.name} checkpoint ${k}: average ${avg}, expected ${exp}, ` +
          `margin ${margin}, wanted ${expectFair ? "fair" : "unfair"}`,
      );
    });
  });
  const failures = result.clients.map((cl) =>
    Object.values(cl.rejected).reduce((a, b) => a + b, 0)
  );
  const total = failures.reduce((a, b) => a + b, 0);
  if (c.allRequests ?? true) assert.equal(total, 0, `${sc.name}: failures ${failures}`);
  else assert.ok(total > 0, `${sc.name}: expected some failures`);
  if (c.rejectReason !== undefined) {
    result.clients.forEach((cl, i) => assert.equal(cl.rejected[c.rejectReason!], failures[i]));
  }
  // Every call ended: nothing waits or executes, no seat is held.
  assert.equal(run.stranded, 0);
  assert.equal(run.final.waitingRequests, 0);
  assert.equal(run.final.executingRequests, 0);
  assert.equal(run.final.seatsInUse, 0);
  assert.equal(run.final.seatsWaiting, 0);
  const calls = sc.clients.reduce((n, cl) => {
    const late = cl.split ? cl.threads - Math.floor(cl.threads / 2) : 0;
    return n + (cl.threads - late) * cl.calls + late * Math.floor(cl.calls / 2);
  }, 0);
  const dispatched = result.clients.reduce((n, cl) => n + cl.dispatched, 0);
  assert.ok(dispatched + total <= calls, `${sc.name}: more outcomes than calls`);
  if (c.allRequests ?? true) assert.equal(dispatched, calls, `${sc.name}: every call executed`);
  if (c.seatDemand ?? true) {
    const a = run.seatDemand, b = run.independentSeatDemand;
    const close = (x: number, y: number) =>
      Math.abs(x - y) <= 1e-10 * Math.max(Math.abs(x), Math.abs(y), 1e-300);
    assert.ok(close(a.durationMs, b.durationMs), `${sc.name}: duration ${a.durationMs}`);
    assert.ok(close(a.average, b.average), `${sc.name}: average ${a.average} vs ${b.average}`);
    assert.ok(
      close(a.deviation, b.deviation),
      `${sc.name}: stddev ${a.deviation} vs ${b.deviation}`,
    );
  }
}

const A = "1001001001", B = "2002002002";

Deno.test("k8s TestNoRestraint/no-competition: fair at capacity 10", () => {
  const sc = scenario("no-competition", { type: "Exempt", cl: 0, queuing: null }, [
    [A, 5, 15, S, S, [1, 1]],
    [B, 2, 15, S, S / 2, [1, 1]],
  ], 18 * S);
  check(sc, { fair: [[true, 0.001]], evalCL: 10, seatDemand: false });
});

Deno.test("k8s TestNoRestraint/with-competition: unfair at capacity 2", () => {
  const sc = scenario("with-competition", { type: "Exempt", cl: 0, queuing: null }, [
    [A, 5, 15, S, S, [1, 1]],
    [B, 2, 15, S, S / 2, [1, 1]],
  ], 18 * S);
  check(sc, { fair: [[false, 0.25]], evalCL: 2, seatDemand: false });
});

Deno.test("k8s TestBaseline", () => {
  const sc = scenario("TestBaseline", { cl: 1, queuing: [9, 8, 3] }, [
    [A, 1, 21, S, 0, [1, 1]],
  ], 20 * S);
  check(sc, { fair: [[true, 0]], evalCL: 1 });
});

for (const cl of [0, 2]) {
  Deno.test(`k8s TestExampt/concurrency=${cl}`, () => {
    const sc = scenario("TestBaseline", { type: "Exempt", cl, queuing: null }, [
      [A, 5, 20, S, S, [3, 1]],
    ], 40 * S);
    check(sc, { fair: [[true, 1e-8]], evalCL: 1, expected: [[7.5]] });
  });
}

const SEPARATIONS: [
  think: number,
  final: number,
  pad: number,
  n: number,
  conc: number,
  exp?: number,
][] = [
  [S, 1, 0, 1, 1],
  [S, 1, 0, 1, 2],
  [S, 2, 0, 1, 2],
  [S, 1, 0, 2, 1],
  [S, 1, 0, 2, 2],
  [S, 2, 0, 2, 2],
  [0, 1, S, 1, 1, 0.5],
  [0, 1, S, 1, 2],
  [0, 2, S, 1, 2, 0.5],
  [0, 1, S, 2, 1, 0.25],
  [0, 1, S, 2, 2, 0.5],
  [0, 2, S, 2, 2, 0.25],
  [S, 1, S / 2, 1, 1],
  [S, 1, S / 2, 1, 2],
  [S, 2, S / 2, 1, 2],
  [S, 1, S / 2, 2, 1, 1 / 3],
  [S, 1, S / 2, 2, 2],
  [S, 2, S / 2, 2, 2, 1 / 3],
  [S / 2, 1, S, 1, 1, 0.5],
  [S / 2, 1, S, 1, 2],
  [S / 2, 2, S, 1, 2, 0.5],
  [S / 2, 1, S, 2, 1, 0.25],
  [S / 2, 1, S, 2, 2, 0.5],
  [S / 2, 2, S, 2, 2, 0.25],
];

const goDuration = (ms: number) => ms === 0 ? "0s" : ms % S === 0 ? `${ms / S}s` : `${ms}ms`;

for (const [think, final, pad, n, conc, exp] of SEPARATIONS) {
  const name = `think=${goDuration(think)},finalSeats=${final},pad=${
    goDuration(pad)
  },nClients=${n},conc=${conc}`;
  Deno.test(`k8s TestSeparations/${name}`, () => {
    const clients = [A, B].slice(0, n).map((hash): ClientSpec => [
      hash,
      1,
      25,
      S,
      think,
      [1, final],
      { padMs: pad },
    ]);
    const sc = scenario(
      `TestSeparations/${name}`,
      { cl: conc, queuing: [9, 8, 3] },
      clients,
      24 * S,
    );
    check(sc, {
      fair: [[true, 0]],
      evalCL: conc,
      ...(exp === undefined ? {} : { expected: [clients.map(() => exp)] }),
    });
  });
}

Deno.test("k8s TestUniformFlowsHandSize1", () => {
  const sc = scenario("TestUniformFlowsHandSize1", { cl: 4, queuing: [9, 8, 1] }, [
    [A, 8, 20, S, S - NS, [1, 1]],
    [B, 8, 20, S, S - NS, [1, 1]],
  ], 50 * S);
  check(sc, { fair: [[true, 0.01]], evalCL: 4 });
});

Deno.test("k8s TestUniformFlowsHandSize3", () => {
  const sc = scenario("TestUniformFlowsHandSize3", { cl: 4, queuing: [8, 16, 3] }, [
    ["400900100100", 8, 30, S, S - NS, [1, 1]],
    ["300900200200", 8, 30, S, S - NS, [1, 1]],
  ], 60 * S);
  check(sc, { fair: [[true, 0.03]], evalCL: 4 });
});

Deno.test("k8s TestDifferentFlowsExpectEqual", () => {
  const sc = scenario("DiffFlowsExpectEqual", { cl: 4, queuing: [9, 8, 1] }, [
    [A, 8, 20, S, S, [1, 1]],
    [B, 7, 30, S, S / 2, [1, 1]],
  ], 40 * S);
  check(sc, { fair: [[true, 0.01]], evalCL: 4 });
});

Deno.test("k8s TestSeatSecondsRollover: 40 × 91 days stay fair across rebases", () => {
  const sc = scenario("TestSeatSecondsRollover", { cl: 2000, queuing: [9, 8, 1] }, [
    [A, 8, 20, Q, Q, [500, 1]],
    [B, 7, 30, Q, Q / 2, [500, 1]],
  ], 40 * Q);
  check(sc, { fair: [[true, 0.01]], evalCL: 2000 });
  assert.ok(simulate(sc).final.rebases > 0, "virtual time was rebased");
});

Deno.test("k8s TestDifferentFlowsExpectUnequal", () => {
  const sc = scenario("DiffFlowsExpectUnequal", { cl: 3, queuing: [9, 6, 1] }, [
    [A, 4, 20, S, S - NS, [1, 1]],
    [B, 2, 20, S, S - NS, [1, 1]],
  ], 20 * S);
  check(sc, { fair: [[true, 0.01]], evalCL: 3 });
});

Deno.test("k8s TestDifferentWidths", () => {
  const sc = scenario("TestDifferentWidths", { cl: 6, queuing: [64, 13, 7] }, [
    ["10010010010010", 13, 10, S, S - NS, [1, 1]],
    ["20020020020020", 7, 10, S, S - NS, [2, 1]],
  ], 20 * S);
  check(sc, { fair: [[true, 0.155]], evalCL: 6 });
});

Deno.test("k8s TestTooWide", () => {
  const sc = scenario("TestTooWide", { cl: 6, queuing: [64, 35, 7] }, [
    ["40040040040040", 15, 21, S, S - NS, [2, 1]],
    ["50050050050050", 15, 21, S, S - NS, [2, 1]],
    ["60060060060060", 15, 21, S, S - NS, [2, 1]],
    ["70070070070070", 15, 21, S, S - NS, [2, 1]],
    ["90090090090090", 15, 21, S, S - NS, [7, 1]],
  ], 400 * S);
  check(sc, { fair: [[true, 0.35]], evalCL: 6 });
});

for (const [bound, second] of [["upper", [true, 0.26]], ["lower", [false, 0.1]]] as const) {
  Deno.test(`k8s TestWindup/${bound}-bound`, () => {
    const sc = scenario("TestWindup", { cl: 3, queuing: [9, 6, 1] }, [
      [A, 2, 40, S, -NS, [1, 1]],
      [B, 2, 40, S, -NS, [1, 1], { split: true }],
    ], 40 * S);
    check(sc, {
      fair: [[true, 0.01], [...second]],
      evalCL: 3,
      expected: [[2, 1], [1.5, 1.5]],
    });
  });
}

Deno.test("k8s TestDifferentFlowsWithoutQueuing", () => {
  const sc = scenario("TestDifferentFlowsWithoutQueuing", { cl: 4, queuing: null }, [
    [A, 6, 10, S, 57, [1, 1]],
    [B, 4, 15, S, 750, [1, 1]],
  ], 13 * S);
  check(sc, {
    fair: [[false, 0.2]],
    evalCL: 4,
    allRequests: false,
    rejectReason: "concurrency-limit",
  });
});

Deno.test("k8s TestTimeout (release-1.27): lazy wait limit 0", () => {
  const sc = scenario(
    "TestTimeout",
    { cl: 1, queuing: [128, 128, 1] },
    [
      [A, 5, 100, S, S, [1, 1]],
    ],
    10 * S,
    0,
  );
  check(sc, { fair: [[true, 0.01]], evalCL: 1, allRequests: false, rejectReason: "time-out" });
});
