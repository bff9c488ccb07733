import assert from "node:assert/strict";
import { QueueSet } from "../../src/fairqueuing/queue_set.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { Dealer } from "../../src/fairqueuing/shuffle_shard.ts";
import { DecisionLog, makeSet, queuing } from "./_queue_set_helpers.ts";

// With handSize 1, a flow's queue is `hash mod queues` (Kubernetes' `Deal`: the first card).

Deno.test("QueueSet runs a request at once when a seat is free, and frees the seat on finish", () => {
  const { qs } = makeSet(queuing(1, 4, 2, 1));
  const r = qs.startRequest({ hash: 1n });
  assert.equal(r.decision, "execute");
  assert.equal(qs.seatsInUse, 1);
  assert.equal(qs.executingRequests, 1);
  assert.equal(qs.isIdle, false);
  assert.equal(r.finish(), true);
  assert.equal(qs.seatsInUse, 0);
  assert.equal(qs.isIdle, true);
  assert.equal(r.done, true);
});

Deno.test("k8s TestTotalRequestsExecutingWithPanic: a throwing handler still gives its seat back", () => {
  const { qs } = makeSet({ type: "Limited", concurrencyLimit: 1, queuing: null });
  const handler = () => {
    using r = qs.startRequest();
    assert.equal(r.decision, "execute");
    assert.equal(qs.executingRequests, 1);
    throw new Error("handler failed");
  };
  assert.equal(qs.executingRequests, 0);
  assert.throws(handler, /handler failed/);
  assert.equal(qs.executingRequests, 0);
  assert.equal(qs.seatsInUse, 0);
});

Deno.test("k8s TestFinishRequestLocked: seats go back after the additional latency, requests at once", () => {
  const { qs, clock } = makeSet(queuing(20, 1, 10, 1), { estimatedServiceDurationMs: 1000 });
  const lingering = qs.startRequest({
    work: { initialSeats: 1, finalSeats: 10, additionalLatencyMs: 60_000 },
  });
  const plain = qs.startRequest({ work: { initialSeats: 10, finalSeats: 0 } });
  assert.equal(qs.seatsInUse, 20);
  assert.equal(qs.executingRequests, 2);
  plain.finish();
  assert.equal(qs.executingRequests, 1);
  assert.equal(qs.seatsInUse, 10);
  lingering.finish();
  assert.equal(qs.executingRequests, 0);
  assert.equal(qs.isIdle, true, "lingering seats do not make the set busy");
  assert.equal(qs.seatsInUse, 10);
  assert.equal(qs.snapshot().queues[0]!.seatsInUse, 10);
  clock.advance(59_999);
  assert.equal(qs.seatsInUse, 10);
  clock.advance(1);
  assert.equal(qs.seatsInUse, 0);
  assert.equal(qs.snapshot().queues[0]!.seatsInUse, 0);
});

Deno.test("k8s TestRequestSeats: a request holds max(initial, final) seats", () => {
  for (const [initialSeats, finalSeats] of [[3, 3], [1, 3], [3, 1]] as const) {
    const { qs } = makeSet(queuing(10, 1, 1, 1));
    qs.startRequest({ work: { initialSeats, finalSeats, additionalLatencyMs: 1 } });
    assert.equal(qs.seatsInUse, 3);
  }
});

Deno.test("QueueSet dispatches in virtual-finish order: the less-served queue goes first", () => {
  const { qs, clock } = makeSet(queuing(1, 2, 10, 1));
  const log = new DecisionLog();
  const a = qs.startRequest({ hash: 0n, onDecision: log.note("a") });
  const a2 = qs.startRequest({ hash: 0n, onDecision: log.note("a2") });
  const b = qs.startRequest({ hash: 1n, onDecision: log.note("b") });
  assert.deepEqual(log.events, ["a:execute"]);
  clock.advance(1000);
  a.finish();
  // Queue 0 was charged for a's second; queue 1's head finishes earlier in virtual time.
  assert.deepEqual(log.events, ["a:execute", "b:execute"]);
  assert.equal(qs.snapshot().robinIndex, 1);
  b.finish();
  assert.equal(a2.decision, "execute");
  a2.finish();
});

Deno.test("QueueSet breaks virtual-finish ties round robin, starting after the last queue served", () => {
  const { qs } = makeSet(queuing(1, 3, 10, 1));
  const log = new DecisionLog();
  const x = qs.startRequest({ hash: 2n, onDecision: log.note("x") });
  assert.equal(qs.snapshot().robinIndex, 2);
  // Same instant, same work: q1 and q0 tie; the scan starts at (2 + 1) mod 3 = 0.
  const b = qs.startRequest({ hash: 1n, onDecision: log.note("b") });
  const a = qs.startRequest({ hash: 0n, onDecision: log.note("a") });
  x.finish();
  assert.deepEqual(log.events, ["x:execute", "a:execute"]);
  a.finish();
  b.finish();
});

Deno.test("k8s TestFindDispatchQueueLocked 4-5: head-of-line blocking waits for the chosen head", () => {
  // CL 50; 26 one-seat requests of queue 0 execute, so queue 0 is ahead in virtual time.
  const { qs } = makeSet(queuing(50, 2, 10, 1));
  const running = Array.from({ length: 26 }, () => qs.startRequest({ hash: 0n }));
  assert.equal(qs.seatsInUse, 26);
  const wide = qs.startRequest({ hash: 1n, work: { initialSeats: 25 } });
  const narrow = qs.startRequest({ hash: 0n, work: { initialSeats: 10 } });
  // The 25-seat head has the least virtual finish but does not fit (26 + 25 > 50);
  // the 10-seat one would fit and still must wait.
  assert.equal(wide.decision, null);
  assert.equal(narrow.decision, null);
  const robin = qs.snapshot().robinIndex;
  running.pop()!.finish();
  assert.equal(qs.seatsInUse, 50);
  assert.equal(wide.decision, "execute");
  assert.equal(narrow.decision, null);
  assert.notEqual(robin, qs.snapshot().robinIndex);
  assert.equal(qs.snapshot().robinIndex, 1);
  for (const r of running) r.finish();
  wide.finish();
  assert.equal(narrow.decision, "execute");
  narrow.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("KEP-1040 Queuing: reject only when no seat is free and the chosen queue is full", () => {
  const { qs } = makeSet(queuing(3, 2, 1, 1));
  const x = qs.startRequest({ hash: 0n, work: { initialSeats: 2 } });
  // A seat is free (2 < 3): requests queue even beyond the length limit.
  const waiting = [1, 2, 3].map(() => qs.startRequest({ hash: 0n, work: { initialSeats: 2 } }));
  assert.deepEqual(waiting.map((r) => r.decision), [null, null, null]);
  assert.equal(qs.snapshot().queues[0]!.waitingRequests, 3);
  const y = qs.startRequest({ hash: 1n });
  assert.equal(y.decision, "execute");
  assert.equal(qs.seatsInUse, 3);
  // No seat free: a full queue rejects, a queue with room still takes the request.
  const z = qs.startRequest({ hash: 0n });
  assert.equal(z.decision, "queue-full");
  assert.equal(z.done, true);
  const w = qs.startRequest({ hash: 1n });
  assert.equal(w.decision, null);
  assert.equal(qs.startRequest({ hash: 1n }).decision, "queue-full");
  assert.equal(qs.snapshot().rejected["queue-full"], 2);
  x.finish();
  y.finish();
  for (const r of [...waiting, w]) {
    assert.equal(r.decision, "execute");
    r.finish();
  }
  assert.equal(qs.isIdle, true);
});

Deno.test("a level without queuing runs what fits and rejects the rest with concurrency-limit", () => {
  const { qs } = makeSet({ type: "Limited", concurrencyLimit: 2, queuing: null });
  const a = qs.startRequest();
  const b = qs.startRequest();
  const c = qs.startRequest();
  assert.deepEqual([a.decision, b.decision, c.decision], [
    "execute",
    "execute",
    "concurrency-limit",
  ]);
  a.finish();
  assert.equal(qs.startRequest().decision, "execute");
  // A request wider than the limit runs when nothing executes.
  const { qs: empty } = makeSet({ type: "Limited", concurrencyLimit: 1, queuing: null });
  assert.equal(empty.startRequest({ work: { initialSeats: 5 } }).decision, "execute");
  assert.equal(empty.seatsInUse, 5);
  assert.equal(empty.startRequest({ work: { initialSeats: 5 } }).decision, "concurrency-limit");
});

Deno.test("an exempt set never queues or rejects, and still counts seats and demand", () => {
  const { qs, clock } = makeSet({ type: "Exempt" });
  const rs = Array.from({ length: 100 }, () => qs.startRequest({ work: { initialSeats: 3 } }));
  assert.ok(rs.every((r) => r.decision === "execute"));
  assert.equal(qs.seatsInUse, 300);
  clock.advance(1000);
  for (const r of rs) r.finish();
  clock.advance(1000);
  const demand = qs.seatDemand();
  assert.equal(demand.average, 150);
  assert.equal(demand.max, 300);
  assert.equal(qs.isIdle, true);
});

Deno.test("a too-wide request runs only when nothing executes, even while seats linger", () => {
  const { qs, clock } = makeSet(queuing(2, 1, 10, 1));
  const lingerer = qs.startRequest({
    work: { initialSeats: 1, finalSeats: 1, additionalLatencyMs: 500 },
  });
  const wide = qs.startRequest({ work: { initialSeats: 3 } });
  assert.equal(wide.decision, null);
  lingerer.finish();
  // Nothing executes any more (the lingering seat does not count as executing).
  assert.equal(wide.decision, "execute");
  assert.equal(qs.seatsInUse, 4);
  const small = qs.startRequest();
  assert.equal(small.decision, null, "nothing else starts while over the limit");
  clock.advance(500);
  assert.equal(qs.seatsInUse, 3);
  wide.finish();
  assert.equal(small.decision, "execute");
  small.finish();
});

Deno.test("final seats above the limit are capped at dispatch with their work preserved", () => {
  const { qs, clock } = makeSet(queuing(2, 1, 10, 1));
  const r = qs.startRequest({ work: { initialSeats: 1, finalSeats: 5, additionalLatencyMs: 100 } });
  assert.equal(r.decision, "execute");
  assert.equal(r.finalSeats, 2);
  assert.equal(r.additionalLatencyMs, 250);
  assert.equal(qs.seatsInUse, 2);
  r.finish();
  clock.advance(249.999);
  assert.equal(qs.seatsInUse, 2);
  clock.advance(0.001);
  assert.equal(qs.seatsInUse, 0);
});

Deno.test("lingering final seats hold back waiting requests until released", () => {
  const { qs, clock } = makeSet(queuing(1, 1, 10, 1));
  const log = new DecisionLog();
  const a = qs.startRequest({ work: { finalSeats: 1, additionalLatencyMs: 1000 } });
  const b = qs.startRequest({ onDecision: log.note("b") });
  clock.advance(10);
  a.finish();
  assert.equal(b.decision, null);
  clock.advance(999);
  assert.deepEqual(log.events, []);
  clock.advance(1);
  assert.deepEqual(log.events, ["b:execute"]);
  assert.equal(b.startMs, 1010);
  b.finish();
});

Deno.test("virtual time advances at min(seat demand, limit) / active queues", () => {
  const { qs, clock } = makeSet(queuing(1, 2, 10, 1));
  const a = qs.startRequest({ hash: 0n });
  clock.advance(1000);
  assert.equal(qs.snapshot().currentR, 1);
  const b = qs.startRequest({ hash: 1n });
  clock.advance(1000);
  // Two active queues share one seat: R gains half a seat-second per second.
  assert.equal(qs.snapshot().currentR, 1.5);
  a.finish();
  // Finishing corrects queue 0 by the actual execution time: G + (2 s − G) = 2 seat-seconds.
  assert.equal(qs.snapshot().queues[0]!.nextDispatchR, 2);
  clock.advance(1000);
  b.finish();
  assert.equal(qs.snapshot().currentR, 2.5);
  clock.advance(1000);
  assert.equal(qs.snapshot().currentR, 2.5, "R stands still when no queue is active");
});

Deno.test("a snapshot reads virtual time without moving it", () => {
  // Each advance of R rounds to the unit (1e-8 seat-second), so a snapshot that advanced R would
  // change it: at a rate of 1/3, three advances of 1 ms give 99,999 units, one of 3 ms 100,000.
  const run = (look: boolean) => {
    const { qs, clock } = makeSet(queuing(1, 64, 10, 1));
    qs.startRequest({ hash: 0n }); // executes
    qs.startRequest({ hash: 1n }); // waits
    qs.startRequest({ hash: 2n }); // waits: three active queues share one seat
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1);
      if (look) seen.push(Math.round(qs.snapshot().currentR * 1e8));
    }
    const late = qs.startRequest({ hash: 3n }); // its queue starts at R
    const s = qs.snapshot();
    return { seen, r: Math.round(s.currentR * 1e8), late: late.queueIndex, s };
  };
  const quiet = run(false), looked = run(true);
  assert.equal(quiet.r, 100_000);
  assert.equal(looked.r, 100_000);
  assert.deepEqual(looked.seen, [33_333, 66_667, 100_000]);
  assert.equal(
    looked.s.queues[looked.late]!.nextDispatchR,
    quiet.s.queues[quiet.late]!.nextDispatchR,
  );
});

Deno.test("a deadline whose request has left its queue is no event: virtual time stays as it was", () => {
  // The set keeps one timer for the earliest deadline. W leaves at once, but the timer still
  // fires at its deadline; advancing R then would round once more (100,001 + 100,000 units for
  // 2 ms instead of 200,000) and break the tie between Y and Z the other way.
  const run = (withW: boolean) => {
    const { qs, clock } = makeSet(queuing(1, 2, 4, 1));
    const order: string[] = [];
    const log = new DecisionLog();
    const x = qs.startRequest({ hash: 0n });
    qs.startRequest({ hash: 0n, onDecision: log.note("Z") });
    if (withW) qs.startRequest({ hash: 1n, waitLimitMs: 1.000005 }).cancel();
    clock.advance(2);
    qs.startRequest({ hash: 1n, onDecision: log.note("Y") });
    const r = Math.round(qs.snapshot().currentR * 1e8);
    x.finish({ executionMs: 2 });
    order.push(...log.events);
    return { r, order };
  };
  assert.deepEqual(run(false), { r: 200_000, order: ["Y:execute"] });
  assert.deepEqual(run(true), { r: 200_000, order: ["Y:execute"] });
});

Deno.test("anti-windup: a queue's virtual start never falls behind its head's arrival", () => {
  const { qs, clock } = makeSet(queuing(1, 2, 10, 1));
  const a = qs.startRequest({ hash: 0n });
  clock.advance(1);
  a.finish(); // queue 0 used 1 ms, far less than its share
  const hold = qs.startRequest({ hash: 1n });
  clock.advance(10_000);
  const late = qs.startRequest({ hash: 0n });
  const snap = qs.snapshot();
  assert.ok(snap.queues[0]!.nextDispatchR >= snap.currentR);
  hold.finish();
  late.finish();
});

Deno.test("the executionMs option charges the given time instead of the clock's", () => {
  const { qs, clock } = makeSet(queuing(1, 2, 10, 1));
  const a = qs.startRequest({ hash: 0n });
  clock.advance(1000);
  a.finish({ executionMs: 250 });
  assert.equal(qs.snapshot().queues[0]!.nextDispatchR, 0.25);
  const b = qs.startRequest({ hash: 0n });
  assert.throws(() => b.finish({ executionMs: -1 }), /executionMs must be a finite number >= 0/);
  assert.equal(qs.executingRequests, 1, "a refused finish changes nothing");
  b.finish();
});

Deno.test("shuffle sharding picks the hand's queue with least waiting work, rotating the start", () => {
  // CL 0: nothing dispatches, so the queues only fill.
  const { qs } = makeSet(queuing(0, 8, 100, 2));
  const hash = 12345n;
  const [h0, h1] = new Dealer(8, 2).dealIntoHand(hash);
  const place = (work?: { initialSeats: number }) => {
    const r = qs.startRequest(work ? { hash, work } : { hash });
    return r.queueIndex === h0 ? "h0" : r.queueIndex === h1 ? "h1" : "?";
  };
  // enqueues 0, offset 0: tie, first visited (h0). enqueues 1, offset 1: h1 has less work.
  // enqueues 2, offset 0: tie again, h0. enqueues 3, offset 1: h1 has less, takes 50 seats.
  // Then h0 has less waiting work (seat-seconds, not request count) twice.
  const placed = [place(), place(), place(), place({ initialSeats: 50 }), place(), place()];
  assert.deepEqual(placed, ["h0", "h1", "h0", "h1", "h0", "h0"]);
  const waiting = qs.snapshot().queues.map((q) => q.waitingRequests);
  assert.equal(waiting[h0!], 4);
  assert.equal(waiting[h1!], 2);
});

Deno.test("a flow arriving to empty queues gets its hand's card at the rotating offset", () => {
  const { qs } = makeSet(queuing(4, 64, 10, 3));
  const hi = 0x9e3779b9, lo = 0x7f4a7c15;
  const hand = new Dealer(64, 3).dealIntoHandFromHalves(hi, lo);
  const other = { hi: 1, lo: 2 };
  const placed: number[] = [];
  // The same flow again and again, then after another flow's deal.
  for (const hash of [{ hi, lo }, { hi, lo }, { hi, lo }, { hi, lo }, other, { hi, lo }]) {
    const r = qs.startRequest({ hash });
    assert.equal(r.decision, "execute");
    if (hash !== other) placed.push(r.queueIndex);
    r.finish();
  }
  // Offsets 0, 1, 2, 0, (1: the other flow), 2.
  assert.deepEqual(placed, [hand[0], hand[1], hand[2], hand[0], hand[2]]);
});

Deno.test("a flow's hand is dealt again when a reconfiguration changes the deck", () => {
  const { qs } = makeSet(queuing(4, 8, 10, 2));
  const hash = { hi: 0, lo: 1234567 };
  const before = new Dealer(8, 2).dealIntoHandFromHalves(hash.hi, hash.lo);
  const after = new Dealer(32, 2).dealIntoHandFromHalves(hash.hi, hash.lo);
  assert.notEqual(before[1], after[1], "the test needs a hash whose hands differ");
  const first = qs.startRequest({ hash });
  assert.equal(first.queueIndex, before[0]);
  first.finish();
  qs.configure(queuing(4, 32, 10, 2));
  const second = qs.startRequest({ hash });
  assert.equal(second.queueIndex, after[1]);
  second.finish();
});

Deno.test("requests to a set of one queue move the rotating offset too", () => {
  // Kubernetes' shuffleShardLocked counts every enqueue, a single queue's included: after k
  // requests on one queue, a set of 8 queues with hands of 2 starts its scan at k mod 2.
  for (const k of [0, 1, 2, 3]) {
    const { qs } = makeSet(queuing(4, 1, 10, 1));
    for (let i = 0; i < k; i++) qs.startRequest({ hash: { hi: 0, lo: 7 } }).finish();
    qs.configure(queuing(4, 8, 10, 2));
    const hash = { hi: 0, lo: 12345 };
    const hand = new Dealer(8, 2).dealIntoHandFromHalves(hash.hi, hash.lo);
    assert.notEqual(hand[0], hand[1]);
    const r = qs.startRequest({ hash });
    assert.equal(r.queueIndex, hand[k % 2], `after ${k} requests on one queue`);
    r.finish();
  }
});

Deno.test("seat demand integrates seats in use plus seats waiting", () => {
  const { qs, clock } = makeSet(queuing(2, 1, 5, 1));
  const a = qs.startRequest({ work: { initialSeats: 1 } });
  const b = qs.startRequest({ work: { initialSeats: 1, finalSeats: 2, additionalLatencyMs: 1 } });
  clock.advance(1000); // demand 1 in use + 2 waiting
  a.finish(); // b runs: demand 2
  clock.advance(1000);
  const window = qs.resetSeatDemand();
  assert.equal(window.durationMs, 2000);
  assert.equal(window.average, 2.5);
  assert.equal(window.deviation, 0.5);
  assert.equal(window.max, 3);
  b.finish();
  clock.advance(1);
  assert.equal(qs.seatDemand().min, 0);
});

Deno.test("seat demand's maximum keeps a request that waited for no time", () => {
  // Kubernetes records the demand when a request is queued; one whose context has already ended
  // then leaves in wait(). The integral does not change (no time passes), its maximum does.
  const { qs, clock } = makeSet(queuing(1, 1, 10, 1));
  const a = qs.startRequest({});
  clock.advance(10);
  const ended = new AbortController();
  ended.abort();
  assert.equal(
    qs.startRequest({ signal: ended.signal, work: { initialSeats: 2 } }).decision,
    "cancelled",
  );
  assert.equal(qs.startRequest({ waitLimitMs: 0 }).decision, "time-out");
  clock.advance(10);
  const demand = qs.seatDemand();
  assert.equal(demand.max, 3);
  assert.equal(demand.average, 1);
  a.finish();
});

Deno.test("virtual time is rebased before it loses precision, keeping the dispatch order", () => {
  // 1000 seats for 12,000 s push R past 2^50 units (about 1.13e7 seat-seconds).
  const clock = new FakeEventClock();
  const qs = new QueueSet(queuing(1000, 3, 10, 1), { clock });
  const big = qs.startRequest({ hash: 0n, work: { initialSeats: 1000 } });
  const log = new DecisionLog();
  clock.advance(12_000_000);
  qs.startRequest({ hash: 1n, onDecision: log.note("b") });
  clock.advance(6_000_000);
  qs.startRequest({ hash: 2n, onDecision: log.note("c") });
  const before = qs.snapshot();
  assert.ok(before.rebases >= 1, `rebases: ${before.rebases}`);
  assert.ok(before.currentR < 2 ** 50 / 1e8);
  big.finish();
  assert.deepEqual(log.events, ["b:execute", "c:execute"]);
});
