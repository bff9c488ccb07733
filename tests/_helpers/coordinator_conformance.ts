/**
 * The conformance suite of a {@linkcode Coordinator}: what every
 * implementation (embedded, remote over WebSocket, Durable Objects) must do,
 * seen only through `acquire` and `Seat`. Time moves only through the fake
 * clock handed to the factory; every step is awaited and answers may arrive
 * asynchronously, so a remote client can run it unchanged.
 *
 * The configuration (ServerCL 6, every level limited to 2 seats, limits that
 * borrowing cannot move because nothing is lendable):
 *
 * | level | type | limit | queuing |
 * |---|---|---|---|
 * | exempt | Exempt | – | – |
 * | catch-all | Reject | 2 | – |
 * | queued | Queue | 2 | 1 queue of 3 |
 * | sharded | Queue | 2 | 8 queues of 3, hand 2 |
 *
 * @module
 */

import assert from "node:assert/strict";
import type { EffectiveConfiguration } from "../../src/config/effective.ts";
import type {
  Admission,
  Coordinator,
  Rejected,
  Seat,
  SeatRequest,
} from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { Dealer } from "../../src/fairqueuing/shuffle_shard.ts";
import type { FlowHash } from "../../src/fairqueuing/types.ts";
import { CONFORMANCE_LIMIT, conformanceConfiguration } from "./coordinator_config.ts";
import { settle as settleTurns } from "./settle.ts";

/** What a factory hands the suite. */
export interface ConformanceHarness {
  /** The coordinator under test, serving the configuration given to the factory. */
  coordinator: Coordinator;
  /**
   * Called at the end of every case, after all seats were released and
   * lingering seats expired: check for leaks, then free every resource
   * (the fake clock must be left without pending timers).
   */
  close(): void | Promise<void>;
  /**
   * Waits until everything in flight was delivered (default: a few
   * microtask turns, enough in-process). A remote harness waits for its
   * messages.
   */
  settle?(): Promise<void>;
}

/** Builds the coordinator under test for a configuration and a fake clock. */
export type ConformanceFactory = (
  config: EffectiveConfiguration,
  clock: FakeEventClock,
) => ConformanceHarness;

// In _config.ts (no node:assert there), for the Worker of the Durable Objects' run.
export { CONFORMANCE_LIMIT, conformanceConfiguration } from "./coordinator_config.ts";

const halves = (h: bigint): FlowHash => ({ hi: Number(h >> 32n), lo: Number(h & 0xffffffffn) });

/** Two flow hashes whose hands in the `sharded` level share no queue. */
function disjointFlows(): [FlowHash, FlowHash] {
  const dealer = new Dealer(8, 2);
  const first = [...dealer.dealIntoHand(1n)];
  for (let h = 2n;; h++) {
    if ([...dealer.dealIntoHand(h)].every((q) => !first.includes(q))) {
      return [halves(1n), halves(h)];
    }
  }
}

/** A promise whose outcome can be looked at without awaiting it. */
interface Tracked {
  promise: Promise<Admission>;
  outcome: Admission | undefined;
  error: unknown;
}

/** What each case works with. */
interface Ctx {
  clock: FakeEventClock;
  coordinator: Coordinator;
  settle(): Promise<void>;
  /** Starts an acquire and tracks its outcome. */
  start(request: SeatRequest, signal?: AbortSignal): Tracked;
  /** Acquires and expects an admission at once, without waiting in a queue. */
  admit(request: SeatRequest): Promise<Seat>;
  /** Acquires and expects a rejection for `reason`. */
  reject(request: SeatRequest, reason: Rejected["reason"]): Promise<Rejected>;
  /** Advances the fake clock, then lets deliveries happen. */
  advance(ms: number): Promise<void>;
  /** Asserts that `t` has no outcome yet (after letting deliveries happen). */
  pending(t: Tracked, message?: string): Promise<void>;
  /** Awaits `t` and asserts it was admitted after waiting `waitedMs`. */
  admitted(t: Tracked, waitedMs: number): Promise<Seat>;
  /** Awaits `t` and asserts it was rejected for `reason`. */
  rejected(t: Tracked, reason: Rejected["reason"]): Promise<Rejected>;
}

const q = (extra: Partial<SeatRequest> = {}): SeatRequest => ({
  priorityLevel: "queued",
  flowSchema: "fs-queued",
  ...extra,
});

const ca = (extra: Partial<SeatRequest> = {}): SeatRequest => ({
  priorityLevel: "catch-all",
  flowSchema: "catch-all",
  ...extra,
});

function assertRetryAfter(r: Rejected): void {
  assert.ok(
    Number.isInteger(r.retryAfterSeconds) && r.retryAfterSeconds >= 1 &&
      r.retryAfterSeconds <= 32,
    `retryAfterSeconds in 1..32, got ${r.retryAfterSeconds}`,
  );
}

function makeCtx(h: ConformanceHarness, clock: FakeEventClock): Ctx {
  const settle = h.settle?.bind(h) ?? (() => settleTurns(20));
  const ctx: Ctx = {
    clock,
    coordinator: h.coordinator,
    settle,
    start(request, signal) {
      const t: Tracked = {
        promise: h.coordinator.acquire(request, signal === undefined ? {} : { signal }),
        outcome: undefined,
        error: undefined,
      };
      t.promise.then((a) => t.outcome = a, (e) => t.error = e);
      return t;
    },
    async admit(request) {
      const a = await h.coordinator.acquire(request);
      assert.ok(a.admitted, `admitted at once, got ${JSON.stringify(a)}`);
      assert.equal(a.waitedMs, 0);
      assert.equal(a.seat.priorityLevel, request.priorityLevel);
      return a.seat;
    },
    async reject(request, reason) {
      const a = await h.coordinator.acquire(request);
      assert.ok(!a.admitted, `rejected, got admitted`);
      assert.equal(a.reason, reason);
      assertRetryAfter(a);
      return a;
    },
    async advance(ms) {
      clock.advance(ms);
      await settle();
    },
    async pending(t, message = "still waiting") {
      await settle();
      assert.equal(t.error, undefined, "no error");
      assert.equal(t.outcome, undefined, message);
    },
    async admitted(t, waitedMs) {
      const a = await t.promise;
      assert.ok(a.admitted, `admitted, got ${JSON.stringify(a)}`);
      assert.equal(a.waitedMs, waitedMs);
      return a.seat;
    },
    async rejected(t, reason) {
      const a = await t.promise;
      assert.ok(!a.admitted, "rejected, got admitted");
      assert.equal(a.reason, reason);
      assertRetryAfter(a);
      return a;
    },
  };
  return ctx;
}

/**
 * Every seat of every limited level is free: `limit` one-seat requests that
 * may not wait are all admitted at once (then released).
 */
async function assertAllSeatsFree(ctx: Ctx, [f1]: FlowHash[]): Promise<void> {
  const probes: SeatRequest[] = [
    ca(),
    q({ waitLimitMs: 0 }),
    { priorityLevel: "sharded", flowSchema: "fs", flowHash: f1!, waitLimitMs: 0 },
  ];
  for (const probe of probes) {
    const seats: Seat[] = [];
    for (let i = 0; i < CONFORMANCE_LIMIT; i++) {
      const a = await ctx.coordinator.acquire(probe);
      assert.ok(a.admitted, `leak check: ${probe.priorityLevel} seat ${i} free`);
      seats.push(a.seat);
    }
    for (const s of seats) assert.equal(s.release(), true);
  }
  await ctx.settle();
}

/**
 * Options of every case's `Deno.test`: a harness sharing a resource across
 * cases (a workerd process) turns the sanitizers off.
 */
export type ConformanceTestOptions = Pick<
  Deno.TestDefinition,
  "sanitizeOps" | "sanitizeResources"
>;

/**
 * Registers the conformance cases of the coordinator built by `make`, named
 * `"<name> conformance: <case>"`.
 */
export function coordinatorConformance(
  name: string,
  make: ConformanceFactory,
  options: ConformanceTestOptions = {},
): void {
  const flows = disjointFlows();
  const test = (title: string, body: (ctx: Ctx, flows: [FlowHash, FlowHash]) => Promise<void>) =>
    Deno.test({ name: `${name} conformance: ${title}`, ...options }, async () => {
      const clock = new FakeEventClock();
      const h = make(conformanceConfiguration(), clock);
      const ctx = makeCtx(h, clock);
      try {
        await body(ctx, flows);
        await ctx.advance(1_000); // lingering seats of the case expire
        await assertAllSeatsFree(ctx, flows);
      } catch (e) {
        try {
          await h.close();
        } catch {
          // The case's own failure is the one to report.
        }
        throw e;
      }
      await h.close();
    });

  test("an admitted request releases its seat exactly once", async (ctx) => {
    const seat = await ctx.admit(q());
    const other = await ctx.admit(q());
    const waiter = ctx.start(q());
    await ctx.pending(waiter, "both seats taken");
    assert.equal(seat.release(), true);
    assert.equal(seat.release(), false);
    seat[Symbol.dispose]();
    seat.initialized();
    assert.equal(seat.release(), false);
    const next = await ctx.admitted(waiter, 0);
    // The seat went back once: one seat is free, not two.
    const third = ctx.start(q());
    await ctx.pending(third, "a second release freed nothing");
    assert.equal(other.release(), true);
    (await ctx.admitted(third, 0)).release();
    {
      using scoped = next;
      assert.equal(scoped.priorityLevel, "queued");
    }
    assert.equal(next.release(), false, "disposal released it");
  });

  test("the exempt level admits at once, beyond any limit", async (ctx) => {
    const seats: Seat[] = [];
    for (let i = 0; i < 50; i++) {
      seats.push(
        await ctx.admit({
          priorityLevel: "exempt",
          flowSchema: "exempt",
          work: { initialSeats: 100, finalSeats: 100, additionalLatencyMs: 10 },
        }),
      );
    }
    for (const s of seats) assert.equal(s.release(), true);
  });

  test("a Reject level rejects beyond its limit with concurrency-limit", async (ctx) => {
    const a = await ctx.admit(ca());
    const b = await ctx.admit(ca());
    await ctx.reject(ca(), "concurrency-limit");
    await ctx.reject(ca({ work: { initialSeats: 1 } }), "concurrency-limit");
    assert.equal(a.release(), true);
    const c = await ctx.admit(ca());
    await ctx.reject(ca(), "concurrency-limit");
    b.release();
    c.release();
    // A request wider than the limit runs alone (Kubernetes: `canAccommodateSeatsLocked`).
    const wide = await ctx.admit(ca({ work: { initialSeats: 5 } }));
    await ctx.reject(ca(), "concurrency-limit");
    wide.release();
  });

  test("a queuing level queues beyond its limit and dispatches in order", async (ctx) => {
    const a = await ctx.admit(q());
    const b = await ctx.admit(q());
    const c = ctx.start(q({ distinguisher: "c" }));
    const d = ctx.start(q({ distinguisher: "d" }));
    const e = ctx.start(q({ distinguisher: "e" }));
    await ctx.pending(c);
    await ctx.pending(d);
    await ctx.pending(e);
    await ctx.advance(250);
    assert.equal(a.release(), true);
    const cs = await ctx.admitted(c, 250);
    await ctx.pending(d);
    await ctx.pending(e);
    await ctx.advance(100);
    b.release();
    const ds = await ctx.admitted(d, 350);
    await ctx.pending(e);
    cs.release();
    const es = await ctx.admitted(e, 350);
    ds.release();
    es.release();
  });

  test("a request that outwaits its queue wait limit times out", async (ctx) => {
    const a = await ctx.admit(q());
    const b = await ctx.admit(q());
    const w = ctx.start(q({ waitLimitMs: 1_000 }));
    const later = ctx.start(q({ waitLimitMs: 5_000 }));
    await ctx.advance(999);
    await ctx.pending(w);
    await ctx.advance(1);
    await ctx.rejected(w, "time-out");
    await ctx.pending(later, "the other waiter keeps waiting");
    a.release();
    // The timed-out request took nothing: the next waiter gets the seat.
    (await ctx.admitted(later, 1_000)).release();
    b.release();
  });

  test("aborting the signal of a waiting request cancels it", async (ctx) => {
    const a = await ctx.admit(q());
    const b = await ctx.admit(q());
    const controller = new AbortController();
    const w = ctx.start(q(), controller.signal);
    const other = ctx.start(q());
    await ctx.advance(10);
    await ctx.pending(w);
    controller.abort();
    await ctx.rejected(w, "cancelled");
    await ctx.pending(other);
    a.release();
    (await ctx.admitted(other, 10)).release();
    b.release();
    // Aborting after admission changes nothing.
    const c2 = new AbortController();
    const t = ctx.start(q(), c2.signal);
    const seat = await ctx.admitted(t, 0);
    c2.abort();
    await ctx.settle();
    assert.equal(seat.release(), true);
  });

  test("an already-aborted signal runs if it need not wait, else is cancelled (docs/semantics.md §4.10)", async (ctx) => {
    const a = await ctx.admitted(ctx.start(q(), AbortSignal.abort()), 0);
    const b = await ctx.admit(q());
    await ctx.rejected(ctx.start(q(), AbortSignal.abort()), "cancelled");
    a.release();
    b.release();
  });

  test("initialized() frees the seats for the next waiter", async (ctx) => {
    const watch = await ctx.admit(q({ work: { initialSeats: 2 } }));
    const w = ctx.start(q({ work: { initialSeats: 2 } }));
    await ctx.advance(40);
    await ctx.pending(w);
    watch.initialized();
    const next = await ctx.admitted(w, 40);
    assert.equal(watch.release(), false, "released by initialized()");
    watch.initialized();
    const after = ctx.start(q());
    await ctx.pending(after, "initialized() twice freed nothing more");
    next.release();
    (await ctx.admitted(after, 0)).release();
  });

  test("release({ executionMs }) refuses a bad value and changes nothing", async (ctx) => {
    const a = await ctx.admit(q({ work: { initialSeats: 2 } }));
    const w = ctx.start(q());
    for (const bad of [-1, NaN, Infinity]) {
      assert.throws(() => a.release({ executionMs: bad }), RangeError);
    }
    await ctx.pending(w, "the seat is still held");
    assert.equal(a.release({ executionMs: 5 }), true);
    (await ctx.admitted(w, 0)).release();
    assert.equal(a.release(), false);
  });

  test("queue-full when no seat is free and the chosen queue is full", async (ctx, [f1, f2]) => {
    const held = [await ctx.admit(q()), await ctx.admit(q())];
    const waiting = [ctx.start(q()), ctx.start(q()), ctx.start(q())];
    await ctx.settle();
    await ctx.reject(q(), "queue-full");
    for (const s of held) s.release();
    for (const w of waiting.slice(0, 2)) (await ctx.admitted(w, 0)).release();
    (await ctx.admitted(waiting[2]!, 0)).release();

    // Shuffle sharding: one flow fills its hand (2 queues of 3); another flow still queues.
    const sh = (flowHash: FlowHash): SeatRequest => ({
      priorityLevel: "sharded",
      flowSchema: "fs",
      flowHash,
    });
    const seats = [await ctx.admit(sh(f1)), await ctx.admit(sh(f1))];
    const flood: Tracked[] = [];
    for (let i = 0; i < 6; i++) flood.push(ctx.start(sh(f1)));
    await ctx.settle();
    for (const t of flood) await ctx.pending(t);
    await ctx.reject(sh(f1), "queue-full");
    const other = ctx.start(sh(f2));
    await ctx.pending(other, "another flow's queues have room");
    for (const s of seats) s.release();
    // Every waiter is served in turn as seats come back.
    const all = [...flood, other];
    const done = new Set<Tracked>();
    for (let round = 0; done.size < all.length; round++) {
      assert.ok(round < 20, "every waiter is served");
      await ctx.settle();
      for (const t of all) {
        if (done.has(t) || t.outcome === undefined) continue;
        assert.ok(t.outcome.admitted, `admitted, got ${JSON.stringify(t.outcome)}`);
        assert.equal(t.outcome.seat.release(), true);
        done.add(t);
      }
    }
  });

  test("a malformed request rejects the promise and changes nothing", async (ctx) => {
    const seat = await ctx.admit(q());
    await assert.rejects(
      ctx.coordinator.acquire(null as unknown as SeatRequest),
      TypeError,
    );
    await assert.rejects(
      ctx.coordinator.acquire({ priorityLevel: "sharded", flowSchema: "fs" }),
      TypeError,
    );
    await assert.rejects(
      ctx.coordinator.acquire({
        priorityLevel: "sharded",
        flowSchema: "fs",
        flowHash: { hi: -1, lo: 0 },
      }),
      RangeError,
    );
    await assert.rejects(ctx.coordinator.acquire(q({ work: { initialSeats: 0 } })), RangeError);
    await assert.rejects(ctx.coordinator.acquire(q({ waitLimitMs: -5 })), RangeError);
    // Nothing was taken or queued: one seat is free, and the next waiter is served first.
    const other = await ctx.admit(q());
    const w = ctx.start(q());
    await ctx.pending(w);
    seat.release();
    (await ctx.admitted(w, 0)).release();
    other.release();
  });

  test("final seats linger for the additional latency after release", async (ctx) => {
    const list = await ctx.admit(
      q({ work: { initialSeats: 1, finalSeats: 2, additionalLatencyMs: 500 } }),
    );
    const w = ctx.start(q());
    await ctx.advance(100);
    await ctx.pending(w);
    assert.equal(list.release(), true);
    await ctx.advance(499);
    await ctx.pending(w, "final seats still held");
    await ctx.advance(1);
    (await ctx.admitted(w, 600)).release();
  });

  test("queue wait limits: 15 s by default, at most 60 s", async (ctx) => {
    const a = await ctx.admit(q());
    const b = await ctx.admit(q());
    const capped = ctx.start(q({ waitLimitMs: 120_000 }));
    const byDefault = ctx.start(q());
    await ctx.advance(14_999);
    await ctx.pending(byDefault);
    await ctx.advance(1);
    await ctx.rejected(byDefault, "time-out");
    await ctx.advance(60_000 - 15_000 - 1);
    await ctx.pending(capped);
    await ctx.advance(1);
    await ctx.rejected(capped, "time-out");
    a.release();
    b.release();
  });

  test("an unknown priority level is unavailable", async (ctx) => {
    await ctx.reject({ priorityLevel: "no-such-level", flowSchema: "fs" }, "unavailable");
  });
}
