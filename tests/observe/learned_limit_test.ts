/**
 * A learned server concurrency limit (`serverConcurrencyLimit: "auto"`) in
 * the admin routes: its line after Kubernetes' `dump_priority_levels` table
 * (the table byte for byte as without it, the JSON rows unchanged), and its
 * state and history in the dashboard's data; a source without
 * `adaptiveSnapshot()`, or answering `null` or a refusal, shows nothing new.
 */

import assert from "node:assert/strict";
import type { GradientSnapshot } from "../../src/adaptive/types.ts";
import { resolveConfiguration } from "../../src/config/resolve.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Admission } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { adminRouter, DEBUG_PREFIX } from "../../src/observe/admin_router.ts";
import { type AdminSource, AdminUnavailable } from "../../src/observe/admin_source.ts";
import {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  learnedLimitLine,
} from "../../src/observe/dumps.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import type { LiveFrame } from "../../src/observe/live_view.ts";
import type { LearnedLimitSnapshot } from "../../src/observe/types.ts";

/** The controller a while into sampling: minRTT 50 ms, the last window a little slower. */
const SAMPLING: LearnedLimitSnapshot = {
  limit: 13,
  estimate: 13.4249,
  phase: "sampling",
  minRttMs: 50,
  sampleRttMs: 61.2,
  gradient: 1.0213,
  samples: 4,
  windows: 12,
  minRttMeasurements: 1,
  min: 3,
  max: 1000,
};

Deno.test("learnedLimitLine: the limit in force, then phase, estimate, minRTT, sampleRTT, gradient and bounds", () => {
  assert.equal(
    learnedLimitLine(SAMPLING),
    "# serverConcurrencyLimit: learned 13 (phase sampling, estimate 13.42, minRTT 50ms, " +
      "sampleRTT 61.2ms, gradient 1.02, bounds 3..1000)",
  );
  // Before the first measurement and window: none.
  const start: GradientSnapshot = {
    limit: 20,
    estimate: 20,
    phase: "warming-up",
    minRttMs: null,
    sampleRttMs: null,
    gradient: null,
    samples: 0,
    windows: 0,
    minRttMeasurements: 0,
    min: 4,
    max: 200,
  };
  assert.equal(
    learnedLimitLine(start),
    "# serverConcurrencyLimit: learned 20 (phase warming-up, estimate 20, minRTT none, " +
      "sampleRTT none, gradient none, bounds 4..200)",
  );
  // Measuring: the pinned limit, the estimate restored after; durations to the microsecond, Go's
  // units; a window of refusals has an infinite sampleRTT and the floor gradient.
  assert.equal(
    learnedLimitLine({
      ...SAMPLING,
      phase: "measuring-min-rtt",
      limit: 3,
      minRttMs: 1234.56789,
      sampleRttMs: Infinity,
      gradient: 0.5,
    }),
    "# serverConcurrencyLimit: learned 3 (phase measuring-min-rtt, estimate 13.42, " +
      "minRTT 1.234568s, sampleRTT +Inf, gradient 0.50, bounds 3..1000)",
  );
  assert.match(learnedLimitLine({ ...SAMPLING, minRttMs: 0.4004 }), /minRTT 400µs,/);
});

/** A default configuration with requests holding seats: one exempt, three of global-default. */
async function setup() {
  const clock = new FakeEventClock(1_700_000_000_000);
  const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
    snapshot: () => coordinator.snapshot(),
  });
  const coordinator = new EmbeddedCoordinator(resolveConfiguration(undefined), {
    clock,
    metrics,
  });
  const admissions: Admission[] = [
    await coordinator.acquire({ priorityLevel: "exempt", flowSchema: "exempt" }),
  ];
  for (const user of ["alice", "bob", "carol"]) {
    admissions.push(
      await coordinator.acquire({
        priorityLevel: "global-default",
        flowSchema: "global-default",
        distinguisher: user,
        flowHash: { hi: 0, lo: user.charCodeAt(0) },
        waitLimitMs: 5_000,
      }),
    );
  }
  assert.ok(admissions.every((a) => a.admitted));
  const reads: string[] = [];
  /** A source over the coordinator whose `adaptiveSnapshot` answers `learned()`. */
  const source = (learned?: () => ReturnType<NonNullable<AdminSource["adaptiveSnapshot"]>>) => {
    const s: AdminSource = {
      snapshot: (options) => {
        reads.push("snapshot");
        return coordinator.snapshot(options);
      },
      metrics,
    };
    if (learned !== undefined) {
      s.adaptiveSnapshot = () => {
        reads.push("adaptive");
        return learned();
      };
    }
    return s;
  };
  return {
    clock,
    coordinator,
    reads,
    source,
    [Symbol.dispose]() {
      for (const a of admissions) if (a.admitted) a.seat.release();
      coordinator.close();
    },
  };
}

const get = (path: string) => new Request(`http://admin.test${DEBUG_PREFIX}/${path}`);

Deno.test("dump_priority_levels: Kubernetes' table byte for byte, then the learned limit's line", async () => {
  using s = await setup();
  const snapshot = s.coordinator.snapshot();
  const table = dumpPriorityLevels(snapshot);
  assert.equal(dumpPriorityLevels(snapshot, { learnedLimit: null }), table);

  const router = adminRouter(s.source(() => SAMPLING), { authorize: () => true });
  const res = (await router(get("dump_priority_levels")))!;
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("Content-Type"), "text/plain; charset=UTF-8");
  const text = await res.text();
  assert.equal(text, `${table}${learnedLimitLine(SAMPLING)}\n`);
  assert.equal(text, dumpPriorityLevels(snapshot, { learnedLimit: SAMPLING }));
  // One line more than the table, the only one starting with "#": a parser of the table skips it.
  const lines = text.trimEnd().split("\n");
  assert.equal(lines.length, table.trimEnd().split("\n").length + 1);
  assert.deepEqual(lines.filter((l) => l.startsWith("#")), [lines.at(-1)]);
  assert.ok(lines.slice(1, -1).every((l) => /^[a-z0-9.-]+,\s/.test(l)), text);
  // Read after the snapshot (a middleware creates its learned limit with its coordinator).
  assert.deepEqual(s.reads, ["snapshot", "adaptive"]);

  // The JSON rows and the other dumps stay as they are.
  const json = (await router(get("dump_priority_levels?format=json")))!;
  assert.deepEqual(await json.json(), dumpPriorityLevelsJson(snapshot));
  const queues = (await router(get("dump_queues")))!;
  assert.equal(await queues.text(), dumpQueues(snapshot));
});

Deno.test("dump_priority_levels: no line without adaptiveSnapshot, or when it answers null or refuses; a promise is awaited", async () => {
  using s = await setup();
  const table = dumpPriorityLevels(s.coordinator.snapshot());
  const text = async (source: AdminSource) => {
    const router = adminRouter(source, { authorize: () => true, clock: s.clock, timeoutMs: 100 });
    const res = (await router(get("dump_priority_levels")))!;
    assert.equal(res.status, 200);
    return await res.text();
  };
  assert.equal(await text(s.source()), table);
  assert.equal(await text(s.source(() => null)), table);
  assert.equal(await text(s.source(() => new AdminUnavailable(503, "not now"))), table);
  assert.equal(await text(s.source(() => Promise.resolve(null))), table);
  assert.equal(
    await text(s.source(() => Promise.resolve(SAMPLING))),
    `${table}${learnedLimitLine(SAMPLING)}\n`,
  );
});

Deno.test("live: a learned limit adds its state and, with ?history=1, its points; a static limit adds nothing", async () => {
  using s = await setup();
  let learned: LearnedLimitSnapshot | null = SAMPLING;
  const router = adminRouter(s.source(() => learned), { authorize: () => true, clock: s.clock });
  const live = async (query = "") => {
    const res = (await router(get(`live${query}`)))!;
    assert.equal(res.status, 200);
    return await res.json() as LiveFrame;
  };

  const first = await live("?history=1");
  assert.deepEqual(first.adaptive, {
    limit: 13,
    estimate: 13.4249,
    phase: "sampling",
    minRttMs: 50,
    sampleRttMs: 61.2,
    gradient: 1.0213,
    windows: 12,
    minRttMeasurements: 1,
    min: 3,
    max: 1000,
    // The three seats of global-default; the exempt one is under no limit.
    seatsInUse: 3,
  });
  assert.equal(first.levels.find((l) => l.name === "exempt")!.seatsInUse, 1);
  assert.deepEqual(first.adaptiveHistory, [{ t: first.atMs, limit: 13, seatsInUse: 3 }]);

  // A second sample a second later: the limit moved, a window of refusals (+Inf in JSON).
  s.clock.advance(1_000);
  learned = { ...SAMPLING, limit: 8, estimate: 8.1, sampleRttMs: Infinity, gradient: 0.5 };
  const second = await live("?history=1");
  assert.equal(second.adaptive!.sampleRttMs, "+Inf");
  assert.equal(second.adaptive!.limit, 8);
  assert.deepEqual(second.adaptiveHistory, [
    { t: first.atMs, limit: 13, seatsInUse: 3 },
    { t: second.atMs, limit: 8, seatsInUse: 3 },
  ]);
  // Without ?history=1: the state, not the points.
  const plain = await live();
  assert.equal(plain.adaptive!.limit, 8);
  assert.equal("adaptiveHistory" in plain, false);

  // The bounds are the controller's.
  assert.deepEqual([plain.adaptive!.min, plain.adaptive!.max], [SAMPLING.min, SAMPLING.max]);

  // A static limit: the frame has no key more than a source without adaptiveSnapshot gives.
  s.clock.advance(1_000);
  learned = null;
  const fixed = await live("?history=1");
  assert.equal("adaptive" in fixed, false);
  assert.equal("adaptiveHistory" in fixed, false);
  const without = adminRouter(s.source(), { authorize: () => true, clock: s.clock });
  const plainFrame = await (await without(get("live?history=1")))!.json() as LiveFrame;
  assert.deepEqual(Object.keys(fixed), Object.keys(plainFrame));
});
