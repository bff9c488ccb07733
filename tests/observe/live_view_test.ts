/**
 * The dashboard's data on the fake clock: its numbers are the dumps' and the
 * metrics' (seats, waiting, limits, Retry-After), its rates the counters'
 * differences, its wait quantiles the histogram's; one sample per interval
 * whoever asks; the history kept for its window; levels in matching order.
 */

import assert from "node:assert/strict";
import { BudgetHolder } from "../../src/budgets/holder.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Admission, SeatRequest } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import {
  type LiveFlow,
  type LiveSource,
  LiveView,
  topFlows,
  waitQuantiles,
} from "../../src/observe/live_view.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

/** `work`: 4 seats (as many shares as the mandatory catch-all), 8 queues of 3, hands of 2. */
const CONFIG = configOf(8, [
  exempt(),
  limited("work", { shares: 5, queuing: { queues: 8, handSize: 2, queueLengthLimit: 3 } }),
]);

function setup() {
  const clock = new FakeEventClock(1_700_000_000_000);
  const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
    snapshot: () => coordinator.snapshot(),
  });
  const coordinator = new EmbeddedCoordinator(CONFIG, { clock, metrics });
  let samples = 0;
  const source: LiveSource = {
    snapshot: () => {
      samples++;
      return coordinator.snapshot({ includeRequests: true });
    },
    metrics: () => metrics.expose(),
  };
  return {
    clock,
    coordinator,
    metrics,
    source,
    samples: () => samples,
    [Symbol.dispose]() {
      coordinator.close();
    },
  };
}

const lo = 0;
const request = (flowSchema: string, distinguisher: string, waitLimitMs = 5_000): SeatRequest => ({
  priorityLevel: "work",
  flowSchema,
  distinguisher,
  // One flow, one hash: a flow's requests share their queues.
  flowHash: { hi: distinguisher.length, lo: distinguisher.charCodeAt(0) * 7919 + lo },
  waitLimitMs,
});

Deno.test("live view: a level's numbers are the snapshot's; rates come from two samples a second apart", async () => {
  using s = setup();
  const view = new LiveView({ clock: s.clock });
  // The elephant takes the 4 seats and fills its queues; the mouse waits.
  const held: Promise<Admission>[] = [];
  for (let i = 0; i < 4; i++) held.push(s.coordinator.acquire(request("fs-users", "elephant")));
  await settle();
  const waiting: Promise<Admission>[] = [];
  for (let i = 0; i < 10; i++) waiting.push(s.coordinator.acquire(request("fs-users", "elephant")));
  waiting.push(s.coordinator.acquire(request("fs-users", "mouse")));
  await settle();

  const first = (await view.frame(s.source))!;
  const work = first.levels.find((l) => l.name === "work")!;
  const snap = s.coordinator.snapshot().levels.find((l) => l.name === "work")!;
  assert.equal(work.seatsInUse, snap.queueSet.seatsInUse);
  assert.equal(work.seatsInUse, 4);
  assert.equal(work.waiting, snap.queueSet.waitingRequests);
  assert.equal(work.executing, 4);
  assert.deepEqual(work.limits, {
    nominal: snap.nominalLimit,
    lower: snap.lowerLimit,
    upper: snap.upperLimit,
    current: snap.currentLimit,
    lent: 0,
    borrowed: 0,
  });
  assert.equal(work.queues.length, 8);
  assert.equal(work.queues.reduce((sum, q) => sum + q.waiting, 0), work.waiting);
  assert.equal(work.dispatchedPerSecond, null, "no rate from one sample");
  assert.equal(work.rejectedPerSecond, null);
  assert.deepEqual(work.topBySeats, [{
    flowSchema: "fs-users",
    distinguisher: "elephant",
    seatsInUse: 4,
    executing: 4,
    waiting: work.waiting - 1,
  }]);
  assert.deepEqual(work.topByWaiting.map((f) => [f.distinguisher, f.waiting]), [
    ["elephant", work.waiting - 1],
    ["mouse", 1],
  ]);
  // The elephant's queues hold 6 (2 queues of 3): the other 4 were rejected queue-full.
  assert.equal(work.waiting, 7);
  assert.equal(work.retryAfterSeconds, snap.retryAfterSeconds);

  // A second later: 4 released (4 dispatched from the queues), and 8 more that fill the queues.
  const rejectedBefore = snap.queueSet.rejected["queue-full"];
  assert.equal(rejectedBefore, 4);
  s.clock.advance(1_000);
  for (const a of held) {
    const admission = await a;
    if (admission.admitted) admission.seat.release();
  }
  await settle();
  for (let i = 0; i < 8; i++) waiting.push(s.coordinator.acquire(request("fs-users", "elephant")));
  await settle();
  const second = (await view.frame(s.source))!;
  const work2 = second.levels.find((l) => l.name === "work")!;
  const rejected = s.coordinator.snapshot().levels.find((l) => l.name === "work")!.queueSet
    .rejected["queue-full"] - rejectedBefore;
  assert.ok(rejected > 0);
  assert.equal(work2.dispatchedPerSecond, 4);
  assert.deepEqual(work2.rejectedPerSecond, {
    "queue-full": rejected,
    "concurrency-limit": 0,
    "time-out": 0,
    "cancelled": 0,
  });
  assert.deepEqual(work2.topRejecting, [{
    flowSchema: "fs-users",
    perSecond: rejected,
    byReason: { "queue-full": rejected, "concurrency-limit": 0, "time-out": 0, "cancelled": 0 },
  }]);
  // The 4 dispatched waited 1 s each: both quantiles fall in the bucket up to 1 s.
  assert.equal(work2.waitSeconds?.count, 4);
  assert.ok(
    work2.waitSeconds!.p50 > 0.5 && work2.waitSeconds!.p50 <= 1,
    `${work2.waitSeconds!.p50}`,
  );
  assert.ok(work2.waitSeconds!.p99 > 0.5 && work2.waitSeconds!.p99 <= 1);
  const rejectedMetric = s.metrics.expose().match(
    /^apiserver_flowcontrol_rejected_requests_total\{flow_schema="fs-users",priority_level="work",reason="queue-full"\} (\d+)$/m,
  );
  assert.equal(
    Number(rejectedMetric?.[1]),
    rejectedBefore + rejected,
    "the metrics count the same rejections",
  );

  s.coordinator.close();
  for (const p of waiting) {
    const a = await p;
    if (a.admitted) a.seat.release();
  }
});

Deno.test("live view: one sample per interval, however many ask; the history is kept for its window", async () => {
  using s = setup();
  const view = new LiveView({ clock: s.clock, intervalMs: 1_000, historyMs: 5_000 });
  await Promise.all([view.frame(s.source), view.frame(s.source), view.frame(s.source)]);
  assert.equal(s.samples(), 1, "concurrent asks share one sample");
  s.clock.advance(500);
  await view.frame(s.source);
  assert.equal(s.samples(), 1, "within the interval: the same sample");
  for (let i = 0; i < 10; i++) {
    s.clock.advance(1_000);
    await view.frame(s.source);
  }
  assert.equal(s.samples(), 11);
  assert.equal(view.samplesTaken, 11);
  const frame = (await view.frame(s.source, { history: true }))!;
  const points = frame.history!.work!;
  assert.equal(points.length, 6, "5 s of history at one point a second, both ends included");
  assert.ok(points.every((p, i) => i === 0 || p.t - points[i - 1]!.t === 1_000));
  assert.equal(points.at(-1)!.t, frame.atMs);
  assert.equal((await view.frame(s.source))!.history, undefined, "history only when asked");
});

Deno.test("live view: levels in matching order, the exempt level first when not named", async () => {
  using s = setup();
  const view = new LiveView({ clock: s.clock });
  const byName = (await view.frame(s.source))!.levels.map((l) => l.name);
  assert.deepEqual(byName, ["exempt", "catch-all", "work"]);
  s.clock.advance(1_000);
  const ordered = (await view.frame({ ...s.source, levelOrder: () => ["work", "exempt"] }))!;
  assert.deepEqual(ordered.levels.map((l) => l.name), ["work", "exempt", "catch-all"]);
});

Deno.test("live view: without metrics there are no wait times nor rejecting schemas; a source that cannot tell gives null", async () => {
  using s = setup();
  const view = new LiveView({ clock: s.clock });
  const frame = (await view.frame({ ...s.source, metrics: () => null }))!;
  assert.ok(frame.levels.every((l) => l.waitSeconds === null && l.topRejecting.length === 0));
  const none = new LiveView({ clock: s.clock });
  assert.equal(await none.frame({ snapshot: () => null, metrics: () => null }), null);
  assert.throws(() => new LiveView({ intervalMs: 0 }), RangeError);
  assert.throws(() => new LiveView({ topFlows: 1.5 }), RangeError);
});

Deno.test("waitQuantiles interpolates inside a bucket, as histogram_quantile does", () => {
  // 10 waits between two samples: 2 up to 0.1 s, 6 more up to 0.2 s, 2 more up to 1 s.
  const then = new Map([[0.1, 5], [0.2, 5], [1, 5], [Infinity, 5]]);
  const now = new Map([[0.1, 7], [0.2, 13], [1, 15], [Infinity, 15]]);
  const q = waitQuantiles(now, then)!;
  assert.equal(q.count, 10);
  // Rank 5 of 10 falls in (0.1, 0.2], 3 of its 6: 0.1 + 0.1 × 3/6.
  assert.ok(Math.abs(q.p50 - 0.15) < 1e-9, `${q.p50}`);
  // Rank 9.9 falls in (0.2, 1], 1.9 of its 2.
  assert.ok(Math.abs(q.p99 - (0.2 + 0.8 * 1.9 / 2)) < 1e-9, `${q.p99}`);
  // In the +Inf bucket: the highest finite bound.
  const inf = waitQuantiles(new Map([[1, 0], [Infinity, 4]]), undefined)!;
  assert.equal(inf.p50, 1);
  assert.equal(waitQuantiles(now, now), null, "nothing counted in the window");
  assert.equal(waitQuantiles(undefined, undefined), null);
});

Deno.test("live view: on a budget holder, each level carries its share and the ledger's lines", async () => {
  const clock = new FakeEventClock(1_700_000_000_000);
  const store = new MemoryBudgetStore();
  const holder = new BudgetHolder(CONFIG, { store, clock, id: "gw-1", random: () => 0 });
  try {
    await holder.ready();
    const view = new LiveView({ clock });
    const frame = (await view.frame({
      snapshot: () => holder.snapshot({ includeRequests: true }),
      metrics: () => holder.metrics.expose(),
    }))!;
    const work = frame.levels.find((l) => l.name === "work")!;
    assert.equal(work.budget?.mode, "budget");
    assert.equal(work.budget?.limit, 4);
    assert.deepEqual([work.limits.lent, work.limits.borrowed], [0, 0], "from the level's limit");
    assert.deepEqual(work.budget?.holders?.map((h) => [h.id, h.self]), [["gw-1", true]]);
    assert.equal(frame.levels.find((l) => l.name === "exempt")!.budget, undefined);
  } finally {
    holder.close();
  }
});

Deno.test("topFlows keeps the k largest above 0, ties by flow schema then distinguisher, as a full sort would", () => {
  // A fixed pseudo-random sequence with many ties (values 0 to 3, 3 schemas, 5 users).
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed % n;
  };
  const reference = (flows: LiveFlow[], by: (f: LiveFlow) => number, k: number) =>
    flows.filter((f) => by(f) > 0).sort((a, b) =>
      by(b) - by(a) || (a.flowSchema < b.flowSchema ? -1 : a.flowSchema > b.flowSchema ? 1 : 0) ||
      (a.distinguisher < b.distinguisher ? -1 : a.distinguisher > b.distinguisher ? 1 : 0)
    ).slice(0, k);
  for (let round = 0; round < 200; round++) {
    const flows: LiveFlow[] = Array.from({ length: next(40) }, () => ({
      flowSchema: `fs-${next(3)}`,
      distinguisher: `user-${next(5)}`,
      seatsInUse: next(4),
      executing: 0,
      waiting: next(4),
    }));
    for (const k of [1, 2, 5, 50]) {
      for (const by of [(f: LiveFlow) => f.seatsInUse, (f: LiveFlow) => f.waiting]) {
        assert.deepEqual(topFlows(flows, by, k), reference(flows, by, k), `round ${round}, k ${k}`);
      }
    }
  }
  assert.deepEqual(topFlows([], (f) => f.waiting, 5), []);
});
