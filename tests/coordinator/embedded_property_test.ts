/**
 * Property test of the EmbeddedCoordinator on random workloads with random
 * reconfigurations: every request gets exactly one outcome, consistent with
 * how it was asked; the coordinator's bookkeeping matches an independent
 * model; every dispatch respects the limit in force (`docs/semantics.md` §4.5, §4.6);
 * quiescing levels go once idle; and everything ends idle.
 *
 * The limit invariant is checked at dispatch time, not after each step: a
 * lowered limit does not evict executing requests and lingering final seats
 * stay, so `seatsInUse <= currentLimit` does not hold in general. What holds
 * is that a request is only dispatched into a level whose seats in use then
 * stay within the limit, unless it is wider than the limit and runs alone.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import type { EffectiveConfiguration } from "../../src/config/effective.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Admission, Seat } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { QueueSetRequest } from "../../src/fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../../src/observe/types.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { configOf, exempt, limited, type LimitedOptions } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

const NAMES = ["exempt", "catch-all", "a", "b", "c", "unknown"] as const;

interface Variant {
  serverCL: number;
  exemptShares: number;
  catchAllShares: number;
  levels: { name: string; options: LimitedOptions }[];
}

const optionsArb: fc.Arbitrary<LimitedOptions> = fc.record({
  shares: fc.integer({ min: 0, max: 4 }),
  lendablePercent: fc.constantFrom(0, 50, 100),
  borrowingLimitPercent: fc.option(fc.constantFrom(0, 50, 200), { nil: undefined }),
  queuing: fc.option(
    fc.tuple(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 1, max: 3 }),
    ).map(([queues, hand, queueLengthLimit]) => ({
      queues,
      handSize: Math.min(hand, queues),
      queueLengthLimit,
    })),
    { nil: null },
  ),
}, { requiredKeys: ["shares", "lendablePercent", "queuing"] });

const variantArb: fc.Arbitrary<Variant> = fc.record({
  serverCL: fc.integer({ min: 3, max: 12 }),
  exemptShares: fc.constantFrom(0, 0, 1),
  catchAllShares: fc.integer({ min: 1, max: 3 }),
  levels: fc.tuple(
    ...["a", "b", "c"].map((name) =>
      fc.option(optionsArb.map((options) => ({ name, options })), { nil: null })
    ),
  ).map((ls) => ls.filter((l) => l !== null)),
});

function configOfVariant(v: Variant): EffectiveConfiguration {
  return configOf(v.serverCL, [
    exempt(v.exemptShares),
    limited("catch-all", { shares: v.catchAllShares }),
    ...v.levels.map((l) => limited(l.name, l.options)),
  ]);
}

type Op =
  | {
    kind: "acquire";
    level: number;
    flow: number;
    initial: number;
    final: number;
    latency: number;
    waitLimit: number | undefined;
    signal: "none" | "live" | "aborted";
  }
  | { kind: "release"; pick: number; executionMs: number | undefined; initialized: boolean }
  | { kind: "abort"; pick: number }
  | { kind: "advance"; ms: number }
  | { kind: "tick" }
  | { kind: "adjust" }
  | { kind: "configure"; variant: Variant };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant("acquire" as const),
      level: fc.integer({ min: 0, max: NAMES.length - 1 }),
      flow: fc.integer({ min: 0, max: 5 }),
      initial: fc.integer({ min: 1, max: 3 }),
      final: fc.integer({ min: 0, max: 3 }),
      latency: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 })),
      waitLimit: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
      signal: fc.constantFrom(
        "none" as const,
        "none" as const,
        "live" as const,
        "aborted" as const,
      ),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      pick: fc.nat(),
      executionMs: fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
      initialized: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("abort" as const), pick: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.integer({ min: 0, max: 40 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("adjust" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("configure" as const), variant: variantArb }),
  },
);

interface Tracked {
  id: string;
  level: string;
  arrivalMs: number;
  asked: number;
  /** The queue wait limit in force: min(asked ?? 15 s, 60 s). */
  waitLimitMs: number;
  /** desiredQueues of the level when asked: -1 exempt, 0 reject, > 0 queues; null if unknown. */
  desiredQueues: number | null;
  controller: AbortController | null;
  preAborted: boolean;
  outcome: Admission | undefined;
  resolutions: number;
  error: unknown;
  decisions: number;
  dispatchedAtMs: number;
  /** Seats held and the additional latency, as dispatched (final seats may be capped). */
  maxSeats: number;
  latencyMs: number;
  releasedAtMs: number | null;
  /** The level was removed after this request released: its lingering seats went with it. */
  gone: boolean;
  abortedWhileWaiting: boolean;
}

async function runWorkload(initial: Variant, ops: Op[]): Promise<void> {
  const clock = new FakeEventClock();
  const byId = new Map<string, Tracked>();
  const errors: unknown[] = [];
  let config = configOfVariant(initial);
  let coordinator: EmbeddedCoordinator | null = null;
  const observer = (pl: string) => ({
    dispatched(r: QueueSetRequest, waitedMs: number) {
      const t = byId.get(r.descriptor.distinguisher)!;
      t.decisions++;
      t.dispatchedAtMs = clock.now();
      t.maxSeats = Math.max(r.initialSeats, r.finalSeats);
      t.latencyMs = r.additionalLatencyMs;
      assert.equal(waitedMs, clock.now() - t.arrivalMs);
      // The limit in force at this very dispatch (`docs/semantics.md` §4.5, §4.6).
      const qs = coordinator!.snapshot().levels.find((l) => l.name === pl)!.queueSet;
      if (qs.type === "Exempt") return;
      const cl = qs.concurrencyLimit;
      assert.ok(
        qs.seatsInUse <= cl || (qs.executingRequests === 1 && t.asked > cl),
        `${pl}: dispatched ${t.id} (${t.asked} seats) to ${qs.seatsInUse} seats in use, ` +
          `${qs.executingRequests} executing, limit ${cl}`,
      );
      if (r.queueIndex >= 0) {
        assert.ok(qs.seatsInUse - t.maxSeats < cl, `${pl}: dispatched from a queue while full`);
      }
    },
    rejected(r: QueueSetRequest) {
      byId.get(r.descriptor.distinguisher)!.decisions++;
    },
  });
  coordinator = new EmbeddedCoordinator(config, {
    clock,
    metrics: { observerFor: (pl: string) => observer(pl) },
    onError: (e) => errors.push(e),
  });
  const c = coordinator;
  const all: Tracked[] = [];
  const pick = <T>(xs: T[], i: number): T | undefined => xs.length ? xs[i % xs.length] : undefined;
  const running = () => all.filter((t) => t.outcome?.admitted && t.releasedAtMs === null);
  const waiting = () => all.filter((t) => t.outcome === undefined);
  let seq = 0;

  const check = (snap: CoordinatorSnapshot): void => {
    if (errors.length > 0) throw errors[0];
    const now = clock.now();
    const present = new Set(snap.levels.map((l) => l.name));
    for (const t of all) if (!present.has(t.level) && t.releasedAtMs !== null) t.gone = true;
    for (const t of all) {
      assert.equal(t.error, undefined, "no acquire rejects its promise");
      assert.ok(t.resolutions <= 1);
      assert.ok(t.decisions <= 1, `${t.id}: one decision`);
      const o = t.outcome;
      if (t.desiredQueues === null) {
        assert.deepEqual(o, { admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
        continue;
      }
      if (t.abortedWhileWaiting) assert.equal(o?.admitted === false && o.reason, "cancelled");
      if (o === undefined) {
        assert.ok(now - t.arrivalMs < t.waitLimitMs, `${t.id} outstayed its wait limit`);
        continue;
      }
      assert.equal(t.decisions, 1, `${t.id}: decided once`);
      if (o.admitted) {
        assert.equal(o.waitedMs, t.dispatchedAtMs - t.arrivalMs);
        assert.ok(o.waitedMs <= t.waitLimitMs);
        if (t.desiredQueues < 0) assert.equal(o.waitedMs, 0, "exempt never waits");
        // An already-done request runs only if it need not wait (`docs/semantics.md` §4.10).
        if (t.preAborted) assert.equal(o.waitedMs, 0, "a pre-aborted request never waits");
        continue;
      }
      assert.ok(o.retryAfterSeconds >= 1 && o.retryAfterSeconds <= 32);
      switch (o.reason) {
        case "cancelled":
          assert.ok(t.preAborted || t.controller?.signal.aborted, "cancelled only when aborted");
          break;
        case "time-out":
          assert.ok(now - t.arrivalMs >= t.waitLimitMs, "time-out after the wait limit");
          break;
        case "concurrency-limit":
          assert.equal(t.desiredQueues, 0, "concurrency-limit only from Reject levels");
          break;
        case "queue-full":
          assert.ok(t.desiredQueues > 0, "queue-full only from queuing levels");
          break;
        default:
          assert.fail(`${t.id}: unexpected ${o.reason}`);
      }
      if (t.preAborted) assert.notEqual(o.reason, "time-out", "a pre-aborted request never waits");
    }
    // Levels: configured ones, plus removed ones still busy (quiescing).
    const configured = new Set(config.priorityLevels.map((l) => l.name));
    for (const l of snap.levels) {
      const qs = l.queueSet;
      assert.equal(l.quiescing, !configured.has(l.name), `${l.name} quiescing`);
      if (l.quiescing) assert.ok(!qs.isIdle, `${l.name}: an idle quiescing level is gone`);
      if (l.type === "Limited") assert.equal(qs.concurrencyLimit, l.currentLimit);
      const mine = all.filter((t) => t.level === l.name);
      const exec = mine.filter((t) => t.outcome?.admitted && t.releasedAtMs === null);
      const linger = mine.filter((t) =>
        !t.gone && t.releasedAtMs !== null && t.latencyMs > 0 && now < t.releasedAtMs + t.latencyMs
      );
      assert.deepEqual(
        {
          level: l.name,
          waiting: qs.waitingRequests,
          executing: qs.executingRequests,
          seatsInUse: qs.seatsInUse,
        },
        {
          level: l.name,
          waiting: mine.filter((t) => t.outcome === undefined).length,
          executing: exec.length,
          seatsInUse: [...exec, ...linger].reduce((s, t) => s + t.maxSeats, 0),
        },
      );
    }
    for (const name of configured) assert.ok(present.has(name), `${name} is served`);
  };

  const release = (t: Tracked, executionMs: number | undefined, initialized: boolean) => {
    const seat = (t.outcome as { seat: Seat }).seat;
    if (initialized) seat.initialized();
    else assert.equal(seat.release(executionMs === undefined ? {} : { executionMs }), true);
    t.releasedAtMs = clock.now();
    assert.equal(seat.release(), false, "released once");
  };

  for (const op of ops) {
    switch (op.kind) {
      case "acquire": {
        const name = NAMES[op.level]!;
        const lvl = c.snapshot().levels.find((l) => l.name === name);
        const controller = op.signal === "none" ? null : new AbortController();
        if (op.signal === "aborted") controller!.abort();
        const t: Tracked = {
          id: `r${seq++}`,
          level: name,
          arrivalMs: clock.now(),
          asked: Math.max(op.initial, op.final),
          waitLimitMs: Math.min(op.waitLimit ?? 15_000, 60_000),
          desiredQueues: lvl === undefined ? null : lvl.queueSet.desiredQueues,
          controller,
          preAborted: op.signal === "aborted",
          outcome: undefined,
          resolutions: 0,
          error: undefined,
          decisions: 0,
          dispatchedAtMs: NaN,
          maxSeats: 0,
          latencyMs: 0,
          releasedAtMs: null,
          gone: false,
          abortedWhileWaiting: false,
        };
        byId.set(t.id, t);
        all.push(t);
        c.acquire(
          {
            priorityLevel: name,
            flowSchema: "fs",
            flowHash: { hi: op.flow, lo: op.flow * 7919 },
            distinguisher: t.id,
            work: {
              initialSeats: op.initial,
              finalSeats: op.final,
              additionalLatencyMs: op.latency,
            },
            ...(op.waitLimit !== undefined && { waitLimitMs: op.waitLimit }),
          },
          controller === null ? {} : { signal: controller.signal },
        ).then((o) => {
          t.outcome = o;
          t.resolutions++;
        }, (e) => t.error = e);
        break;
      }
      case "release": {
        const t = pick(running(), op.pick);
        if (t !== undefined) release(t, op.executionMs, op.initialized);
        break;
      }
      case "abort": {
        const t = pick(all.filter((t) => t.controller?.signal.aborted === false), op.pick);
        if (t !== undefined) {
          t.abortedWhileWaiting = t.outcome === undefined;
          t.controller!.abort();
        }
        break;
      }
      case "advance":
        clock.advance(op.ms);
        break;
      case "tick":
        clock.advance(10_000);
        break;
      case "adjust":
        c.adjustLimits();
        break;
      case "configure":
        config = configOfVariant(op.variant);
        c.configure(config);
        break;
    }
    await settle(8);
    check(c.snapshot());
  }

  // Wind down: release everything, let waiters be served or time out, let seats linger out.
  for (let round = 0; running().length + waiting().length > 0; round++) {
    assert.ok(round < 100, "the workload drains");
    for (const t of running()) release(t, undefined, false);
    await settle(8);
    check(c.snapshot());
    if (running().length === 0) clock.advance(1_000);
    await settle(8);
    check(c.snapshot());
  }
  clock.advance(1_000);
  await settle(8);
  const snap = c.snapshot();
  check(snap);
  assertIdle(snap);
  assert.deepEqual(
    snap.levels.map((l) => l.name),
    config.priorityLevels.map((l) => l.name).sort(),
    "exactly the configured levels remain",
  );
  for (const t of all) {
    assert.equal(t.resolutions, 1, `${t.id} resolved once`);
    assert.equal(t.decisions, t.desiredQueues === null ? 0 : 1);
  }
  c.close();
  assert.equal(clock.pendingTimers, 0, "no timer left behind");
}

Deno.test("EmbeddedCoordinator property: outcomes, bookkeeping, limits and quiescing under random reconfiguration", async () => {
  await fc.assert(
    fc.asyncProperty(
      variantArb,
      fc.array(opArb, { minLength: 20, maxLength: 120, size: "max" }),
      async (variant, ops) => {
        await runWorkload(variant, ops);
      },
    ),
    { numRuns: 400, seed: 20261123 },
  );
});
