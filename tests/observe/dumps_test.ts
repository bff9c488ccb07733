import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { QueueSet } from "../../src/fairqueuing/queue_set.ts";
import type { QueueSetSnapshot, RequestDescriptor } from "../../src/fairqueuing/types.ts";
import {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  dumpQueuesJson,
  dumpRequests,
  dumpRequestsJson,
} from "../../src/observe/dumps.ts";
import { DUMP_TABWRITER, tabwrite } from "../../src/observe/_tabwriter.ts";
import { formatGoDuration, formatRfc3339Nano, wallTimeNs } from "../../src/observe/_go_format.ts";
import type { CoordinatorSnapshot, PriorityLevelSnapshot } from "../../src/observe/types.ts";

Deno.test("tabwrite ends a column block at the first line with fewer cells", () => {
  const text = "a,\tbb,\tc\nlonger-name,\tx\nshort\ny,\tz,\tlast-not-padded\n";
  assert.equal(
    tabwrite(text, DUMP_TABWRITER),
    [
      "a,           bb,     c",
      "longer-name, x",
      "short",
      "y,      z,      last-not-padded",
      "",
    ].join("\n"),
  );
  // Column 1 exists only in lines 0-1 of the first block: its width is local to them.
  assert.equal(
    tabwrite("a,\tb,\tc\na,\tbbbbbbbbbbbb,\tc\nq,\tr\na,\tb,\tc\n", DUMP_TABWRITER),
    "a,      b,            c\na,      bbbbbbbbbbbb, c\nq,      r\na,      b,      c\n",
  );
  // Unicode counts in code points; an unterminated last line is written without a newline.
  assert.equal(tabwrite("µs,\tx\nab,\ty", DUMP_TABWRITER), "µs,     x\nab,     y");
});

Deno.test("Go time and duration formats", () => {
  assert.equal(formatRfc3339Nano(0n), "1970-01-01T00:00:00Z");
  assert.equal(formatRfc3339Nano(1704164645123456789n), "2024-01-02T03:04:05.123456789Z");
  assert.equal(formatRfc3339Nano(1704164645120000000n), "2024-01-02T03:04:05.12Z");
  assert.equal(formatRfc3339Nano(-1n), "1969-12-31T23:59:59.999999999Z");
  // Clock time 1000 was wall time 1704164645123; clock time 400.5 is 599.5 ms earlier.
  assert.equal(wallTimeNs(1704164645123, 1000, 400.5), 1704164644523500000n);
  assert.equal(wallTimeNs(1704164645123.25, 5, 5), 1704164645123250000n);
  const cases: Array<[number, string]> = [
    [0, "0s"],
    [0.00075, "750ns"],
    [0.0015, "1.5µs"],
    [5, "5ms"],
    [1.25, "1.25ms"],
    [999.999999, "999.999999ms"],
    [999.9999999, "1s"],
    [1000, "1s"],
    [1500, "1.5s"],
    [90000, "1m30s"],
    [3600000, "1h0m0s"],
    [3723004.000005, "1h2m3.004000005s"],
    [-5, "-5ms"],
  ];
  for (const [ms, want] of cases) assert.equal(formatGoDuration(ms), want, `${ms} ms`);
});

/** A level snapshot with just what the dumps read. */
function level(
  name: string,
  qs: Partial<QueueSetSnapshot>,
  extra: Partial<PriorityLevelSnapshot> = {},
): PriorityLevelSnapshot {
  return {
    name,
    type: "Limited",
    quiescing: false,
    nominalLimit: 0,
    lowerLimit: 0,
    upperLimit: 0,
    currentLimit: 0,
    demand: { highWatermark: 0, average: 0, stdDev: 0, smoothed: 0, target: 0 },
    queueSet: {
      nowMs: 0,
      type: "Limited",
      concurrencyLimit: 0,
      desiredQueues: 0,
      isIdle: true,
      closed: false,
      waitingRequests: 0,
      executingRequests: 0,
      seatsInUse: 0,
      seatsWaiting: 0,
      currentR: 0,
      lastChangeR: 0,
      robinIndex: 0,
      rebases: 0,
      dispatched: 0,
      rejected: { "queue-full": 0, "concurrency-limit": 0, "time-out": 0, cancelled: 0 },
      queues: [],
      ...qs,
    },
    ...extra,
  };
}

const queue = (index: number, waiting: number) => ({
  index,
  waitingRequests: waiting,
  executingRequests: 0,
  seatsInUse: 0,
  waitingInitialSeats: waiting,
  waitingSeats: waiting,
  waitingWork: 0.003 * waiting,
  nextDispatchR: 0.003,
});

Deno.test("dumpPriorityLevels renders Kubernetes' tabwriter layout byte for byte (docs/semantics.md §9.1)", () => {
  const snapshot: CoordinatorSnapshot = {
    nowMs: 0,
    wallClockMs: 0,
    serverConcurrencyLimit: 600,
    seatFairFraction: 0,
    levels: [
      level("workload-low", {
        isIdle: false,
        waitingRequests: 3,
        executingRequests: 37,
        dispatched: 1234,
        rejected: { "queue-full": 2, "concurrency-limit": 0, "time-out": 3, cancelled: 5 },
        queues: [queue(0, 2), queue(1, 0), queue(2, 1)],
      }),
      level("catch-all", {}),
    ],
  };
  assert.equal(
    dumpPriorityLevels(snapshot),
    "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests\n" +
      "catch-all,         0,            true,   false,       0,               0,                 0,                  0,                0,                0\n" +
      "workload-low,      2,            false,  false,       3,               37,                1234,               5,                0,                5\n",
  );
  assert.deepEqual(dumpPriorityLevelsJson(snapshot)[1], {
    priorityLevelName: "workload-low",
    activeQueues: 2,
    isIdle: false,
    isQuiescing: false,
    waitingRequests: 3,
    executingRequests: 37,
    dispatchedRequests: 1234,
    rejectedRequests: 5,
    timedoutRequests: 0,
    cancelledRequests: 5,
  });
  assert.equal(
    dumpQueues(snapshot),
    "PriorityLevelName, Index,  PendingRequests, ExecutingRequests, SeatsInUse, NextDispatchR, InitialSeatsSum, MaxSeatsSum, TotalWorkSum\n" +
      "workload-low,      0,      2,               0,                 0,          0.00300000ss,  2,               2,           0.00600000ss\n" +
      "workload-low,      1,      0,               0,                 0,          0.00300000ss,  0,               0,           0.00000000ss\n" +
      "workload-low,      2,      1,               0,                 0,          0.00300000ss,  1,               1,           0.00300000ss\n",
  );
  assert.equal(dumpQueuesJson(snapshot).length, 3);
});

const who = (flowSchema: string, distinguisher: string, apiGroup = ""): RequestDescriptor => ({
  flowSchema,
  distinguisher,
  details: {
    user: "alice",
    verb: "list",
    path: "/apis/apps/v1/namespaces/ns/deployments",
    namespace: "ns",
    name: "",
    apiGroup,
    apiVersion: "v1",
    resource: "deployments",
    subresource: "",
  },
});

Deno.test("dumpRequests lists waiting, executing and unqueued requests with Go times", () => {
  const clock = new FakeEventClock(1000);
  const limited = new QueueSet(
    {
      type: "Limited",
      concurrencyLimit: 1,
      queuing: { queues: 2, queueLengthLimit: 5, handSize: 1 },
    },
    { clock },
  );
  const exempt = new QueueSet({ type: "Exempt" }, { clock });
  const running = limited.startRequest({
    hash: { hi: 0, lo: 0 },
    descriptor: who("fs-a", "d1", "apps"),
  });
  clock.advance(1.5);
  const waiting = limited.startRequest({
    hash: { hi: 0, lo: 0 },
    descriptor: who("fs-b", ""),
    work: { initialSeats: 1, finalSeats: 2, additionalLatencyMs: 90000 },
  });
  const ex = exempt.startRequest({ descriptor: who("exempt", "") });
  clock.advance(0.25);
  const snap = (qs: QueueSet) => qs.snapshot({ includeRequests: true });
  const snapshot: CoordinatorSnapshot = {
    nowMs: clock.now(),
    wallClockMs: Date.UTC(2024, 0, 2, 3, 4, 5, 123),
    serverConcurrencyLimit: 1,
    seatFairFraction: 0,
    levels: [
      level("exempt", {}, { type: "Exempt", queueSet: snap(exempt) }),
      level("global", {}, { queueSet: snap(limited) }),
    ],
  };
  assert.equal(
    dumpRequests(snapshot),
    "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,                 InitialSeats, FinalSeats, AdditionalLatency, StartTime\n" +
      "exempt,            exempt,         -1,         -1,                  ,                2024-01-02T03:04:05.12275Z, 1,            0,          0s,                2024-01-02T03:04:05.12275Z\n" +
      "global,            fs-b,           0,          0,                   ,                2024-01-02T03:04:05.12275Z, 1,            2,          1m30s,             0001-01-01T00:00:00Z\n" +
      "global,            fs-a,           0,          -1,                  d1,              2024-01-02T03:04:05.12125Z, 1,            0,          0s,                2024-01-02T03:04:05.12125Z\n",
  );
  const rows = dumpRequestsJson(snapshot, { includeRequestDetails: true });
  assert.deepEqual(rows[2]!.details, {
    userName: "alice",
    verb: "list",
    apiPath: "/apis/apps/v1/namespaces/ns/deployments",
    namespace: "ns",
    name: "",
    apiVersion: "apps/v1",
    resource: "deployments",
    subResource: "",
  });
  assert.equal(rows[1]!.startTime, null);
  assert.equal(rows[1]!.details!.apiVersion, "v1");
  const withDetails = dumpRequests(snapshot, { includeRequestDetails: true }).split("\n");
  assert.equal(
    withDetails[0]!.slice(withDetails[0]!.indexOf("StartTime")),
    "StartTime,                  UserName, Verb,   APIPath,                                 Namespace, Name,   APIVersion, Resource,    SubResource",
  );
  assert.equal(
    withDetails[3]!.slice(withDetails[3]!.indexOf("alice")),
    "alice,    list,   /apis/apps/v1/namespaces/ns/deployments, ns,        ,       apps/v1,    deployments, ",
  );
  running.finish();
  waiting.finish();
  ex.finish();
  limited.close();
});
