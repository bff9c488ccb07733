import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { QueueSet } from "../../src/fairqueuing/queue_set.ts";
import type { QueueSetConfig, RequestDescriptor } from "../../src/fairqueuing/types.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import { parseExposition, sampleValue } from "../../src/observe/_parse.ts";
import { Registry } from "../../src/observe/registry.ts";
import type { CoordinatorSnapshot } from "../../src/observe/types.ts";

const P = "apiserver_flowcontrol_";

/** The sample lines of metric `name` (and its `_bucket`/`_sum`/`_count`), without the prefix. */
function series(text: string, name: string): string[] {
  return text.split("\n").filter((l) => /^[a-z]/.test(l) && l.startsWith(P + name))
    .map((l) => l.slice(P.length));
}

function setup(config: QueueSetConfig, level = "pl", exempt = false) {
  const clock = new FakeEventClock();
  const metrics = new FlowcontrolMetrics();
  const qs = new QueueSet(config, {
    clock,
    observer: metrics.observerFor(level, { exempt }),
    onError: (e) => {
      throw e;
    },
  });
  return { clock, metrics, qs };
}

const fs = (flowSchema: string, verb = "get"): RequestDescriptor => ({
  flowSchema,
  distinguisher: "",
  details: {
    user: "u",
    verb,
    path: "/",
    namespace: "",
    name: "",
    apiGroup: "",
    apiVersion: "v1",
    resource: "",
    subresource: "",
  },
});

Deno.test("FlowcontrolMetrics records dispatch, queue-full and wait times like the Kubernetes filter", () => {
  const { clock, metrics, qs } = setup({
    type: "Limited",
    concurrencyLimit: 1,
    queuing: { queues: 1, queueLengthLimit: 1, handSize: 1 },
  });
  const r1 = qs.startRequest({ descriptor: fs("a") });
  const r2 = qs.startRequest({ descriptor: fs("a") });
  const r3 = qs.startRequest({ descriptor: fs("b") });
  assert.deepEqual([r1.decision, r2.decision, r3.decision], ["execute", null, "queue-full"]);
  let text = metrics.expose();
  assert.deepEqual(series(text, "current_inqueue_"), [
    'current_inqueue_requests{flow_schema="a",priority_level="pl"} 1',
    'current_inqueue_seats{flow_schema="a",priority_level="pl"} 1',
  ]);
  assert.deepEqual(series(text, "rejected_requests_total"), [
    'rejected_requests_total{flow_schema="b",priority_level="pl",reason="queue-full"} 1',
  ]);
  clock.advance(2000);
  assert.equal(r1.finish(), true);
  assert.equal(r2.decision, "execute");
  clock.advance(30);
  r2.finish();
  text = metrics.expose();
  assert.deepEqual(series(text, "request_wait_duration_seconds_count"), [
    'request_wait_duration_seconds_count{execute="false",flow_schema="b",priority_level="pl"} 1',
    'request_wait_duration_seconds_count{execute="true",flow_schema="a",priority_level="pl"} 2',
  ]);
  assert.deepEqual(series(text, "request_wait_duration_seconds_sum"), [
    'request_wait_duration_seconds_sum{execute="false",flow_schema="b",priority_level="pl"} 0',
    'request_wait_duration_seconds_sum{execute="true",flow_schema="a",priority_level="pl"} 2',
  ]);
  assert.deepEqual(series(text, "request_execution_seconds_sum"), [
    'request_execution_seconds_sum{flow_schema="a",priority_level="pl",type="regular"} 2.03',
  ]);
  assert.deepEqual(series(text, "current_"), [
    'current_executing_requests{flow_schema="a",priority_level="pl"} 0',
    'current_executing_seats{flow_schema="a",priority_level="pl"} 0',
    'current_inqueue_requests{flow_schema="a",priority_level="pl"} 0',
    'current_inqueue_seats{flow_schema="a",priority_level="pl"} 0',
  ]);
  assert.deepEqual(series(text, "dispatched_requests_total"), [
    'dispatched_requests_total{flow_schema="a",priority_level="pl"} 2',
  ]);
  assert.deepEqual(series(text, "request_queue_length_after_enqueue_count"), [
    'request_queue_length_after_enqueue_count{flow_schema="a",priority_level="pl"} 2',
  ]);
  // The first arrival saw a queue of 1 (itself), the second too (the first had left).
  assert.deepEqual(series(text, "request_queue_length_after_enqueue_sum"), [
    'request_queue_length_after_enqueue_sum{flow_schema="a",priority_level="pl"} 2',
  ]);
  assert.deepEqual(series(text, "work_estimated_seats_count"), [
    'work_estimated_seats_count{flow_schema="a",priority_level="pl"} 2',
    'work_estimated_seats_count{flow_schema="b",priority_level="pl"} 1',
  ]);
  const fams = parseExposition(text);
  const wait = (le: string) =>
    sampleValue(fams, `${P}request_wait_duration_seconds_bucket`, {
      execute: "true",
      flow_schema: "a",
      priority_level: "pl",
      le,
    });
  assert.deepEqual(["0", "1", "2", "+Inf"].map(wait), [1, 1, 2, 2]);
});

Deno.test("FlowcontrolMetrics labels a queued request that times out execute=true (the Kubernetes quirk)", () => {
  const { clock, metrics, qs } = setup({
    type: "Limited",
    concurrencyLimit: 1,
    queuing: { queues: 1, queueLengthLimit: 5, handSize: 1 },
  });
  const r1 = qs.startRequest({ descriptor: fs("a") });
  const r2 = qs.startRequest({ descriptor: fs("a"), waitLimitMs: 500 });
  const ac = new AbortController();
  const r3 = qs.startRequest({ descriptor: fs("c"), signal: ac.signal });
  clock.advance(250);
  ac.abort();
  clock.advance(250);
  assert.deepEqual([r2.decision, r3.decision], ["time-out", "cancelled"]);
  const text = metrics.expose();
  assert.deepEqual(series(text, "request_wait_duration_seconds_sum"), [
    'request_wait_duration_seconds_sum{execute="true",flow_schema="a",priority_level="pl"} 0.5',
    'request_wait_duration_seconds_sum{execute="true",flow_schema="c",priority_level="pl"} 0.25',
  ]);
  assert.deepEqual(series(text, "rejected_requests_total"), [
    'rejected_requests_total{flow_schema="a",priority_level="pl",reason="time-out"} 1',
    'rejected_requests_total{flow_schema="c",priority_level="pl",reason="cancelled"} 1',
  ]);
  assert.deepEqual(series(text, "current_inqueue_requests"), [
    'current_inqueue_requests{flow_schema="a",priority_level="pl"} 0',
    'current_inqueue_requests{flow_schema="c",priority_level="pl"} 0',
  ]);
  r1.finish();
});

Deno.test("FlowcontrolMetrics: exempt levels observe no wait; reject levels observe execute=false", () => {
  const ex = setup({ type: "Exempt" }, "exempt", true);
  ex.qs.startRequest({ descriptor: fs("system", "watch") }).finish();
  let text = ex.metrics.expose();
  assert.deepEqual(series(text, "request_wait_duration_seconds"), []);
  assert.deepEqual(series(text, "request_execution_seconds_count"), [
    'request_execution_seconds_count{flow_schema="system",priority_level="exempt",type="watch"} 1',
  ]);
  const rj = setup({ type: "Limited", concurrencyLimit: 1, queuing: null }, "rej");
  const held = rj.qs.startRequest({ descriptor: fs("x") });
  rj.qs.startRequest({ descriptor: fs("x") });
  text = rj.metrics.expose();
  assert.deepEqual(series(text, "request_wait_duration_seconds_count"), [
    'request_wait_duration_seconds_count{execute="false",flow_schema="x",priority_level="rej"} 1',
    'request_wait_duration_seconds_count{execute="true",flow_schema="x",priority_level="rej"} 1',
  ]);
  assert.deepEqual(series(text, "rejected_requests_total"), [
    'rejected_requests_total{flow_schema="x",priority_level="rej",reason="concurrency-limit"} 1',
  ]);
  held.finish();
});

Deno.test("FlowcontrolMetrics counts seats through the final phase, capped final seats included", () => {
  const { clock, metrics, qs } = setup({
    type: "Limited",
    concurrencyLimit: 2,
    queuing: { queues: 1, queueLengthLimit: 5, handSize: 1 },
  });
  const gauges = () => series(metrics.expose(), "current_");
  const first = qs.startRequest({ descriptor: fs("a") });
  const wide = qs.startRequest({
    descriptor: fs("list"),
    work: { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 100 },
  });
  // Waiting: max(1, 3) = 3 seats in queue.
  assert.deepEqual(gauges(), [
    'current_executing_requests{flow_schema="a",priority_level="pl"} 1',
    'current_executing_seats{flow_schema="a",priority_level="pl"} 1',
    'current_inqueue_requests{flow_schema="a",priority_level="pl"} 0',
    'current_inqueue_requests{flow_schema="list",priority_level="pl"} 1',
    'current_inqueue_seats{flow_schema="a",priority_level="pl"} 0',
    'current_inqueue_seats{flow_schema="list",priority_level="pl"} 3',
  ]);
  first.finish();
  // Dispatch caps the final seats to the limit (2): it holds 2 seats, 3 leave the queue.
  assert.equal(wide.decision, "execute");
  assert.equal(wide.finalSeats, 2);
  clock.advance(10);
  wide.finish();
  assert.deepEqual(gauges().filter((l) => l.includes("list")), [
    'current_executing_requests{flow_schema="list",priority_level="pl"} 0',
    'current_executing_seats{flow_schema="list",priority_level="pl"} 2',
    'current_inqueue_requests{flow_schema="list",priority_level="pl"} 0',
    'current_inqueue_seats{flow_schema="list",priority_level="pl"} 0',
  ]);
  clock.advance(200); // the lingering (capped: 150 ms) ends
  assert.deepEqual(gauges().filter((l) => l.includes("executing_seats")), [
    'current_executing_seats{flow_schema="a",priority_level="pl"} 0',
    'current_executing_seats{flow_schema="list",priority_level="pl"} 0',
  ]);
  assert.deepEqual(series(metrics.expose(), "work_estimated_seats_sum"), [
    'work_estimated_seats_sum{flow_schema="a",priority_level="pl"} 1',
    'work_estimated_seats_sum{flow_schema="list",priority_level="pl"} 3',
  ]);
});

const snapshot = (levels: Array<[string, "Exempt" | "Limited", number]>): CoordinatorSnapshot => ({
  nowMs: 0,
  wallClockMs: 0,
  serverConcurrencyLimit: 600,
  seatFairFraction: 0.75,
  levels: levels.map(([name, type, r]) => ({
    name,
    type,
    quiescing: false,
    nominalLimit: 10,
    lowerLimit: 5,
    upperLimit: 20,
    currentLimit: 12,
    demand: { highWatermark: 7, average: 2.5, stdDev: 0.5, smoothed: 3, target: 4 },
    queueSet: { currentR: r + 1, lastChangeR: r, type } as CoordinatorSnapshot["levels"][number][
      "queueSet"
    ],
  })),
});

Deno.test("FlowcontrolMetrics reads limit and demand gauges from the snapshot at every scrape", () => {
  let snap = snapshot([["exempt", "Exempt", 0], ["global", "Limited", 1.25]]);
  const registry = new Registry();
  const metrics = new FlowcontrolMetrics({ registry, snapshot: () => snap });
  const text = registry.expose();
  assert.deepEqual(series(text, "current_limit_seats").concat(series(text, "current_r")), [
    'current_limit_seats{priority_level="exempt"} 12',
    'current_limit_seats{priority_level="global"} 12',
    'current_r{priority_level="exempt"} 0',
    'current_r{priority_level="global"} 1.25',
  ]);
  const fams = parseExposition(text);
  const get = (n: string, pl?: string) =>
    sampleValue(fams, P + n, pl === undefined ? {} : { priority_level: pl });
  assert.deepEqual(
    [
      get("nominal_limit_seats", "global"),
      get("lower_limit_seats", "global"),
      get("upper_limit_seats", "global"),
      get("demand_seats_high_watermark", "global"),
      get("demand_seats_average", "global"),
      get("demand_seats_stdev", "global"),
      get("demand_seats_smoothed", "global"),
      get("target_seats", "global"),
      get("seat_fair_frac"),
    ],
    [10, 5, 20, 7, 2.5, 0.5, 3, 4, 0.75],
  );
  assert.equal(
    fams.get(`${P}nominal_limit_seats`)!.help,
    "[BETA] Nominal number of execution seats configured for each priority level",
  );
  snap = snapshot([["global", "Limited", 2]]);
  assert.deepEqual(series(metrics.expose(), "current_limit_seats"), [
    'current_limit_seats{priority_level="global"} 12',
  ]);
});

Deno.test("current_r is R as the last operation left it, standing still between operations", () => {
  // Kubernetes sets the gauge when it syncs R (at each operation of the set): "R(time of last
  // change)". A scrape in between shows the old value, and the scrape itself moves nothing.
  const clock = new FakeEventClock();
  const qs = new QueueSet({
    type: "Limited",
    concurrencyLimit: 1,
    queuing: { queues: 1, queueLengthLimit: 10, handSize: 1 },
  }, { clock });
  const metrics = new FlowcontrolMetrics({
    snapshot: () => ({
      nowMs: clock.now(),
      wallClockMs: 0,
      serverConcurrencyLimit: 1,
      seatFairFraction: 0,
      levels: [{
        name: "q",
        type: "Limited",
        quiescing: false,
        nominalLimit: 1,
        lowerLimit: 1,
        upperLimit: 1,
        currentLimit: 1,
        demand: { highWatermark: 0, average: 0, stdDev: 0, smoothed: 0, target: 0 },
        queueSet: qs.snapshot(),
      }],
    }),
  });
  const r = () => series(metrics.expose(), "current_r");
  const a = qs.startRequest({});
  clock.advance(1000);
  assert.deepEqual(r(), ['current_r{priority_level="q"} 0']);
  assert.equal(qs.snapshot().currentR, 1, "the snapshot's own R is at its moment");
  clock.advance(1000);
  a.finish();
  assert.deepEqual(r(), ['current_r{priority_level="q"} 2']);
});

Deno.test("FlowcontrolMetrics.observerFor shares one observer per level", () => {
  const metrics = new FlowcontrolMetrics();
  const a = metrics.observerFor("pl");
  assert.equal(a.exempt, false);
  assert.equal(metrics.observerFor("pl", { exempt: true }), a);
  assert.equal(a.exempt, true);
  assert.throws(() => new FlowcontrolMetrics({ registry: metrics.registry }), {
    name: "TypeError",
    message:
      "Cannot register metric apiserver_flowcontrol_dispatched_requests_total: the name is already registered",
  });
});
