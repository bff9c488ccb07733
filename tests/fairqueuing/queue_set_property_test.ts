/**
 * Property tests of the QueueSet on random workloads: every request gets
 * exactly one outcome, every seat taken is given back, the bookkeeping the
 * set reports matches an independent model, and seats in use never exceed
 * the limit except for a single too-wide request.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { QueueSet } from "../../src/fairqueuing/queue_set.ts";
import type { QueueSetConfig, QueueSetRequest } from "../../src/fairqueuing/types.ts";

type Op =
  | {
    kind: "start";
    hash: bigint;
    initial: number;
    final: number;
    latency: number;
    waitLimit: number | null;
    signal: boolean;
  }
  | { kind: "advance"; ms: number }
  | { kind: "finish"; pick: number; executionMs: number | null }
  | { kind: "abort"; pick: number }
  | { kind: "cancel"; pick: number }
  | { kind: "limit"; cl: number }
  | { kind: "configure"; config: QueueSetConfig };

const configArb: fc.Arbitrary<QueueSetConfig> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(
      fc.integer({ min: 0, max: 6 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 1, max: 4 }),
    ).map(([cl, queues, qll, hand]) => ({
      type: "Limited" as const,
      concurrencyLimit: cl,
      queuing: { queues, queueLengthLimit: qll, handSize: Math.min(hand, queues) },
    })),
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 0, max: 6 }).map((cl) => ({
      type: "Limited" as const,
      concurrencyLimit: cl,
      queuing: null,
    })),
  },
  { weight: 1, arbitrary: fc.constant({ type: "Exempt" as const }) },
);

const opArb = (reconfigure: boolean): fc.Arbitrary<Op> => {
  const ops: fc.WeightedArbitrary<Op>[] = [
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant("start" as const),
        hash: fc.oneof(
          fc.constantFrom(0n, 1n, 7n, 12345n),
          fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        ),
        initial: fc.integer({ min: 1, max: 8 }),
        final: fc.integer({ min: 0, max: 8 }),
        latency: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 })),
        waitLimit: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 80 })),
        signal: fc.boolean(),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant("advance" as const),
        ms: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })),
      }),
    },
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("finish" as const),
        pick: fc.nat(),
        executionMs: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 30 })),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("abort" as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat() }) },
  ];
  if (reconfigure) {
    ops.push(
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant("limit" as const),
          cl: fc.integer({ min: 0, max: 8 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({ kind: fc.constant("configure" as const), config: configArb }),
      },
    );
  }
  return fc.oneof(...ops);
};

interface Tracked {
  r: QueueSetRequest;
  controller: AbortController | null;
  decisions: number;
  firstDecision: string | null;
  finishedAt: number | null;
  waitLimit: number | null;
  /** max(initial, final) as asked, before any cap at dispatch. */
  asked: number;
}

const seatsOf = (r: QueueSetRequest) => Math.max(r.initialSeats, r.finalSeats);

function runWorkload(config: QueueSetConfig, ops: Op[]): void {
  const clock = new FakeEventClock();
  const qs = new QueueSet(config, { clock });
  let cfg = config;
  let reconfigured = false;
  const all: Tracked[] = [];
  const pick = <T>(xs: T[], i: number): T | undefined => xs.length ? xs[i % xs.length] : undefined;
  const limit = () => cfg.type === "Exempt" ? Infinity : cfg.concurrencyLimit!;

  const check = (): void => {
    const now = clock.now();
    let waiting = 0, executing = 0, inUse = 0, seatsWaiting = 0;
    const running: Tracked[] = [];
    for (const t of all) {
      assert.ok(t.decisions <= 1, "at most one decision callback");
      assert.equal(t.decisions === 1, t.r.decision !== null, "callback iff decided");
      if (t.firstDecision !== null) {
        assert.equal(t.r.decision, t.firstDecision, "decisions are final");
      }
      if (t.r.decision === null) {
        waiting++;
        seatsWaiting += seatsOf(t.r);
      } else if (t.r.decision === "execute") {
        if (t.finishedAt === null) {
          executing++;
          inUse += seatsOf(t.r);
          running.push(t);
        } else if (now < t.finishedAt + t.r.additionalLatencyMs) {
          inUse += seatsOf(t.r);
        }
      } else if (t.r.decision === "time-out") {
        assert.ok(t.waitLimit !== null, "only requests with a wait limit time out");
      }
    }
    assert.equal(qs.waitingRequests, waiting);
    assert.equal(qs.executingRequests, executing);
    assert.equal(qs.seatsInUse, inUse);
    assert.equal(qs.seatsWaiting, seatsWaiting);
    assert.equal(qs.isIdle, waiting === 0 && executing === 0);
    const cl = limit();
    if (waiting > 0 && cl > 0) assert.ok(inUse > 0, "nobody waits while the set is empty");
    if (!reconfigured && inUse > cl) {
      assert.ok(
        running.length <= 1,
        `over the limit (${inUse} > ${cl}) with ${running.length} running`,
      );
      // Too wide as asked: capping final seats at dispatch may shrink it afterwards.
      if (running.length === 1) assert.ok(running[0]!.asked > cl, "only a too-wide request");
    }
  };

  for (const op of ops) {
    switch (op.kind) {
      case "start": {
        const controller = op.signal ? new AbortController() : null;
        const t: Tracked = {
          r: undefined as unknown as QueueSetRequest,
          controller,
          decisions: 0,
          firstDecision: null,
          finishedAt: null,
          waitLimit: op.waitLimit,
          asked: Math.max(op.initial, op.final),
        };
        const fullBefore = qs.seatsInUse >= limit();
        t.r = qs.startRequest({
          hash: op.hash,
          work: { initialSeats: op.initial, finalSeats: op.final, additionalLatencyMs: op.latency },
          ...(op.waitLimit === null ? {} : { waitLimitMs: op.waitLimit }),
          ...(controller ? { signal: controller.signal } : {}),
          onDecision: (r) => {
            t.decisions++;
            t.firstDecision = r.decision;
          },
        });
        all.push(t);
        if (!reconfigured && t.r.decision === "queue-full") {
          assert.ok(fullBefore, "queue-full needs no free seat");
        }
        if (t.r.decision === "concurrency-limit") {
          assert.equal(cfg.type !== "Exempt" && cfg.queuing, null);
        }
        break;
      }
      case "advance":
        clock.advance(op.ms);
        break;
      case "finish": {
        const t = pick(
          all.filter((x) => x.r.decision === "execute" && x.finishedAt === null),
          op.pick,
        );
        if (t) {
          assert.equal(
            t.r.finish(op.executionMs === null ? undefined : { executionMs: op.executionMs }),
            true,
          );
          t.finishedAt = clock.now();
          assert.equal(t.r.finish(), false, "a second finish releases nothing");
        }
        break;
      }
      case "abort":
        pick(all.filter((x) => x.controller && !x.controller.signal.aborted), op.pick)?.controller
          ?.abort();
        break;
      case "cancel": {
        const t = pick(all, op.pick);
        if (t) {
          const wasWaiting = t.r.decision === null;
          assert.equal(t.r.cancel(), wasWaiting);
        }
        break;
      }
      case "limit":
        if (cfg.type !== "Exempt") {
          qs.setConcurrencyLimit(op.cl);
          cfg = { ...cfg, concurrencyLimit: op.cl };
          reconfigured = true;
        }
        break;
      case "configure":
        qs.configure(op.config);
        cfg = op.config;
        reconfigured = true;
        break;
    }
    check();
  }

  // Wind down: finish what runs, cancel what waits, let lingering seats go.
  for (;;) {
    const runningNow = all.filter((x) => x.r.decision === "execute" && x.finishedAt === null);
    const waitingNow = all.filter((x) => x.r.decision === null);
    if (runningNow.length === 0 && waitingNow.length === 0) break;
    for (const t of runningNow) {
      t.r.finish();
      t.finishedAt = clock.now();
    }
    for (const t of waitingNow) if (t.r.decision === null && runningNow.length === 0) t.r.cancel();
    check();
  }
  clock.advance(1000);
  check();
  assert.equal(qs.seatsInUse, 0);
  assert.equal(qs.seatsWaiting, 0);
  assert.ok(qs.isIdle);
  assert.equal(clock.pendingTimers, 0, "no timer left behind");
  for (const t of all) assert.equal(t.decisions, 1, "exactly one outcome per request");
  const snap = qs.snapshot();
  const outcomes = snap.dispatched + Object.values(snap.rejected).reduce((a, b) => a + b, 0);
  assert.equal(outcomes, all.length, "the set's counters account for every request");
}

Deno.test("QueueSet property: one outcome per request, seats given back, limit respected", () => {
  fc.assert(
    fc.property(
      configArb,
      fc.array(opArb(false), { minLength: 10, maxLength: 200, size: "+1" }),
      (config, ops) => {
        runWorkload(config, ops);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("QueueSet property: the same holds across limit and configuration changes", () => {
  fc.assert(
    fc.property(
      configArb,
      fc.array(opArb(true), { minLength: 10, maxLength: 200, size: "+1" }),
      (config, ops) => {
        runWorkload(config, ops);
      },
    ),
    { numRuns: 300 },
  );
});
