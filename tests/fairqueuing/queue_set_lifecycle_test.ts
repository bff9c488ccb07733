import assert from "node:assert/strict";
import { QueueSet } from "../../src/fairqueuing/queue_set.ts";
import { DecisionLog, makeSet, queuing } from "./_queue_set_helpers.ts";

// With handSize 1, a flow's queue is `hash mod queues` (Kubernetes' `Deal`: the first card).

Deno.test("k8s TestContextCancel: a waiting request is cancelled by its signal, exactly when aborted", async () => {
  const { qs, clock } = makeSet(queuing(1, 11, 11, 1));
  const first = qs.startRequest({ hash: 1n });
  assert.equal(first.decision, "execute");
  const controller = new AbortController();
  const second = qs.startRequest({ hash: 2n, signal: controller.signal });
  assert.equal(second.decision, null);
  assert.equal(qs.waitingRequests, 1);
  clock.setTimer(1000, () => controller.abort());
  clock.advance(1000);
  assert.equal(await second.wait(), "cancelled");
  assert.equal(second.done, true);
  assert.equal(qs.waitingRequests, 0);
  assert.equal(qs.snapshot().rejected.cancelled, 1);
  // Finishing the cancelled request changes nothing; the first still holds its seat.
  assert.equal(second.finish(), false);
  assert.equal(qs.seatsInUse, 1);
  assert.equal(first.finish(), true);
  assert.equal(qs.isIdle, true);
});

Deno.test("seats are released exactly once: finish twice, finish after rejection, dispose", () => {
  const { qs } = makeSet(queuing(1, 1, 0, 1));
  const a = qs.startRequest();
  assert.equal(a.finish(), true);
  assert.equal(a.finish(), false);
  assert.equal(qs.seatsInUse, 0);
  const b = qs.startRequest();
  const c = qs.startRequest(); // no queue room and no seat: rejected
  assert.equal(c.decision, "queue-full");
  assert.equal(c.finish(), false);
  assert.equal(c.cancel(), false);
  b[Symbol.dispose]();
  b[Symbol.dispose]();
  assert.equal(qs.seatsInUse, 0);
  assert.equal(qs.isIdle, true);
});

Deno.test("finish or cancel on a waiting request rejects it with cancelled", async () => {
  const { qs } = makeSet(queuing(1, 1, 5, 1));
  const a = qs.startRequest();
  const b = qs.startRequest();
  const c = qs.startRequest();
  assert.equal(b.finish(), false);
  assert.equal(await b.wait(), "cancelled");
  assert.equal(c.cancel(), true);
  assert.equal(c.cancel(), false);
  assert.equal(qs.waitingRequests, 0);
  assert.equal(qs.snapshot().rejected.cancelled, 2);
  a.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("an already-aborted signal runs only if it need not wait; an abort after dispatch changes nothing", () => {
  const { qs } = makeSet(queuing(1, 1, 5, 1));
  const aborted = AbortSignal.abort();
  const first = qs.startRequest({ signal: aborted });
  assert.equal(first.decision, "execute");
  assert.equal(qs.startRequest({ signal: aborted }).decision, "cancelled");
  assert.equal(qs.waitingRequests, 0);
  first.finish();
  assert.equal(qs.seatsInUse, 0);
  const controller = new AbortController();
  const r = qs.startRequest({ signal: controller.signal });
  controller.abort();
  assert.equal(r.decision, "execute");
  assert.equal(qs.seatsInUse, 1);
  r.finish();
});

Deno.test("a signal given as a function is read only when the request has to wait", async () => {
  const { qs } = makeSet(queuing(1, 1, 5, 1));
  let reads = 0;
  const controller = new AbortController();
  const lazy = () => {
    reads++;
    return controller.signal;
  };
  const first = qs.startRequest({ signal: lazy });
  assert.equal(first.decision, "execute");
  assert.equal(reads, 0, "a request that executes at once never reads its signal");
  const second = qs.startRequest({ signal: lazy });
  assert.equal(second.decision, null);
  assert.equal(reads, 1);
  controller.abort();
  assert.equal(await second.wait(), "cancelled");
  assert.equal(qs.startRequest({ signal: lazy }).decision, "cancelled", "already aborted");
  const unsignalled = qs.startRequest({ signal: () => undefined });
  assert.equal(unsignalled.decision, null, "no signal");
  assert.equal(reads, 2);
  unsignalled.cancel();
  // A function that fails, or returns something else, leaves nothing waiting.
  assert.throws(
    () => qs.startRequest({ signal: () => "nope" as never }),
    /its signal function must return an AbortSignal, got nope/,
  );
  assert.throws(() =>
    qs.startRequest({
      signal: () => {
        throw new Error("bad");
      },
    }), /bad/);
  assert.equal(qs.waitingRequests, 0, "a failed lazy signal leaves nothing waiting");
  assert.throws(
    () => qs.startRequest({ signal: 5 as never }),
    /signal must be an AbortSignal or a function returning one/,
  );
  first.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("a signal function returning something else throws and leaves nothing waiting", () => {
  const { qs } = makeSet(queuing(1, 1, 5, 1));
  const first = qs.startRequest();
  assert.throws(
    () => qs.startRequest({ signal: () => ({}) as AbortSignal }),
    /its signal function must return an AbortSignal, got \[object Object\]/,
  );
  assert.equal(qs.waitingRequests, 0);
  first.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("a request's wait limit rejects it with time-out at its deadline, not before", () => {
  const { qs, clock } = makeSet(queuing(1, 1, 5, 1));
  const log = new DecisionLog();
  const a = qs.startRequest();
  const b = qs.startRequest({ waitLimitMs: 100, onDecision: log.note("b") });
  assert.equal(b.decision, null);
  const c = qs.startRequest({ waitLimitMs: 0 });
  assert.equal(c.decision, "time-out", "a limit of 0 rejects a request that cannot start now");
  clock.advance(99.999);
  assert.deepEqual(log.events, []);
  clock.advance(0.001);
  assert.deepEqual(log.events, ["b:time-out"]);
  assert.equal(qs.waitingRequests, 0);
  assert.equal(qs.snapshot().rejected["time-out"], 2);
  // A request dispatched in time leaves no timer behind.
  const d = qs.startRequest({ waitLimitMs: 100 });
  a.finish();
  assert.equal(d.decision, "execute");
  assert.equal(clock.pendingTimers, 0);
  d.finish();
});

Deno.test("k8s ≤ 1.28 RequestWaitLimit: expired requests leave only when someone joins their queue", () => {
  const { qs, clock } = makeSet({ ...queuing(1, 2, 5, 1), requestWaitLimitMs: 100 });
  const a = qs.startRequest({ hash: 0n });
  const b = qs.startRequest({ hash: 0n });
  clock.advance(100);
  qs.startRequest({ hash: 1n }).cancel();
  assert.equal(b.decision, null, "another queue's arrival does not expire it");
  const c = qs.startRequest({ hash: 0n });
  assert.equal(b.decision, null, "waited exactly the limit: not yet expired");
  clock.advance(0.001);
  const d = qs.startRequest({ hash: 0n });
  assert.equal(b.decision, "time-out");
  assert.equal(c.decision, null, "c arrived 0.001 ms ago");
  assert.equal(d.decision, null);
  a.finish();
  assert.equal(c.decision, "execute");
  c.finish();
  d.finish();
});

Deno.test("onDecision runs once per request, after the set is consistent, and may re-enter it", () => {
  const { qs } = makeSet(queuing(1, 1, 10, 1));
  const order: string[] = [];
  const first = qs.startRequest({ onDecision: () => order.push("first") });
  const chained = qs.startRequest({
    onDecision: (r) => {
      order.push(`chained:${r.decision}`);
      assert.equal(qs.executingRequests, 1);
      r.finish(); // re-entrant: finishes at once and lets the next one run
    },
  });
  const last = qs.startRequest({ onDecision: (r) => order.push(`last:${r.decision}`) });
  first.finish();
  assert.deepEqual(order, ["first", "chained:execute", "last:execute"]);
  assert.equal(chained.done, true);
  last.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("QueueSet refuses bad requests with a clear error and changes nothing", () => {
  const { qs } = makeSet(queuing(1, 4, 5, 2));
  const before = qs.snapshot();
  const bad: [unknown, RegExp][] = [
    [{ work: { initialSeats: 0 } }, /work.initialSeats must be an integer >= 1, got 0/],
    [{ work: { initialSeats: 1.5 } }, /work.initialSeats must be an integer >= 1, got 1.5/],
    [{ work: { finalSeats: -1 } }, /work.finalSeats must be an integer >= 0, got -1/],
    [{ work: { additionalLatencyMs: NaN } }, /additionalLatencyMs must be a finite number >= 0/],
    [
      { hash: -1n },
      /hash must be \{ hi, lo \} unsigned 32-bit halves or an unsigned 64-bit bigint, got -1/,
    ],
    [{ hash: 1n << 64n }, /hash must be .* an unsigned 64-bit bigint, got 18446744073709551616/],
    [{ hash: 5 }, /hash must be \{ hi, lo \} unsigned 32-bit halves .*, got 5/],
    [{ hash: { hi: 2 ** 32, lo: 0 } }, /got \{"hi":4294967296,"lo":0\}/],
    [{ hash: { hi: 1 } }, /32-bit halves/],
    [{ waitLimitMs: -5 }, /waitLimitMs must be a number >= 0, got -5/],
    [{ signal: {} }, /signal must be an AbortSignal or a function returning one/],
  ];
  for (const [init, message] of bad) {
    assert.throws(() => qs.startRequest(init as never), message);
  }
  assert.deepEqual(qs.snapshot(), before);
});

Deno.test("QueueSet refuses bad configurations naming the field, and keeps the old one", () => {
  const bad: [unknown, RegExp][] = [
    [null, /config must be an object, got null/],
    [{ type: "Fast", concurrencyLimit: 1, queuing: null }, /type must be "Limited" or "Exempt"/],
    [
      { type: "Limited", concurrencyLimit: -1, queuing: null },
      /concurrencyLimit must be an integer >= 0, got -1/,
    ],
    [{ type: "Limited", concurrencyLimit: 1 }, /queuing is required/],
    [queuing(1, 0, 1, 1), /queuing.queues must be an integer >= 1, got 0/],
    [queuing(1, 4, -1, 1), /queuing.queueLengthLimit must be an integer >= 0, got -1/],
    [queuing(1, 4, 1, 5), /queuing: handSize 5 is greater than deckSize 4/],
    [
      queuing(1, 512, 1, 8),
      /required entropy bits of deckSize 512 and handSize 8 is greater than 60/,
    ],
    [
      { ...queuing(1, 4, 1, 1), requestWaitLimitMs: -1 },
      /requestWaitLimitMs must be null or a finite/,
    ],
  ];
  const { qs } = makeSet(queuing(3, 4, 5, 2), { name: "pl" });
  for (const [config, message] of bad) {
    assert.throws(() => new QueueSet(config as never), message);
    assert.throws(() => qs.configure(config as never), /Cannot configure queue set "pl"/);
  }
  assert.equal(qs.concurrencyLimit, 3);
  assert.equal(qs.snapshot().queues.length, 4);
  assert.throws(() => qs.setConcurrencyLimit(1.5), /must be an integer >= 0, got 1.5/);
  assert.throws(
    () => new QueueSet(queuing(1, 1, 1, 1), { estimatedServiceDurationMs: 0 }),
    /estimatedServiceDurationMs must be finite and > 0, got 0/,
  );
});

Deno.test("a limit of 0 never dispatches queued requests; they leave by deadline or signal", () => {
  const { qs, clock } = makeSet(queuing(0, 2, 5, 1));
  const r = qs.startRequest({ hash: 0n, waitLimitMs: 10_000 });
  assert.equal(r.decision, null);
  clock.advance(10_000);
  assert.equal(r.decision, "time-out");
  assert.equal(qs.isIdle, true);
});

Deno.test("raising the limit dispatches waiting requests at once", () => {
  const { qs } = makeSet(queuing(1, 2, 5, 1));
  const rs = [0n, 1n, 0n].map((hash) => qs.startRequest({ hash }));
  assert.deepEqual(rs.map((r) => r.decision), ["execute", null, null]);
  qs.setConcurrencyLimit(3);
  assert.deepEqual(rs.map((r) => r.decision), ["execute", "execute", "execute"]);
  qs.setConcurrencyLimit(1);
  for (const r of rs) r.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("KEP-1040 config changes: surplus queues drain and disappear; new queues appear at once", () => {
  const { qs } = makeSet(queuing(1, 4, 5, 1));
  const rs = [0n, 1n, 2n, 3n].map((hash) => qs.startRequest({ hash }));
  qs.configure(queuing(1, 2, 5, 1));
  assert.equal(qs.snapshot().queues.length, 4, "queues with requests are kept");
  // Dispatch still serves the surplus queues.
  rs[0]!.finish();
  assert.equal(qs.snapshot().queues.length, 3, "queue 0 went when its request finished");
  for (const r of rs.slice(1)) {
    assert.equal(r.decision, "execute");
    r.finish();
  }
  assert.equal(qs.snapshot().queues.length, 2);
  assert.ok(qs.snapshot().queues.every((q, i) => q.index === i));
  qs.configure(queuing(1, 6, 5, 1));
  assert.equal(qs.snapshot().queues.length, 6);
  assert.equal(qs.isIdle, true);
});

Deno.test("a level switched to rejecting drains its queues and rejects new arrivals that do not fit", () => {
  const { qs } = makeSet(queuing(1, 2, 5, 1));
  const a = qs.startRequest({ hash: 0n });
  const b = qs.startRequest({ hash: 1n });
  qs.configure({ type: "Limited", concurrencyLimit: 1, queuing: null });
  assert.equal(qs.startRequest().decision, "concurrency-limit");
  a.finish();
  assert.equal(b.decision, "execute", "the old queue still drains");
  b.finish();
  assert.equal(qs.snapshot().queues.length, 0, "and then disappears");
  assert.equal(qs.startRequest().decision, "execute");
});

Deno.test("a level switched to exempt runs everything waiting at once", () => {
  const { qs } = makeSet(queuing(1, 2, 5, 1));
  const rs = [0n, 1n, 0n].map((hash) => qs.startRequest({ hash }));
  qs.configure({ type: "Exempt" });
  assert.ok(rs.every((r) => r.decision === "execute"));
  for (const r of rs) r.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("timers are shared: many deadlines keep one clock timer, none once the set is idle", () => {
  const { qs, clock } = makeSet(queuing(1, 4, 1000, 1));
  const running = qs.startRequest({ hash: 0n });
  const waiters = Array.from(
    { length: 100 },
    (_, i) => qs.startRequest({ hash: BigInt(i), waitLimitMs: 1000 + i }),
  );
  assert.equal(clock.pendingTimers, 1);
  clock.advance(1049.5);
  assert.equal(waiters.filter((r) => r.decision === "time-out").length, 50);
  for (const r of waiters) r.cancel();
  // A request still executes: the timer stays (it fires for nothing), so that a level whose
  // queues empty and fill again does not start and stop a timer each time.
  assert.equal(clock.pendingTimers, 1);
  running.finish();
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("a timer left armed while requests execute times a later waiter out at its own due time", () => {
  const { qs, clock } = makeSet(queuing(1, 4, 1000, 1));
  const running = qs.startRequest({ hash: 0n });
  qs.startRequest({ hash: 1n, waitLimitMs: 100 }).cancel();
  assert.equal(clock.pendingTimers, 1, "armed for 100 ms, nothing due");
  clock.advance(50);
  const later = qs.startRequest({ hash: 2n, waitLimitMs: 100 });
  clock.advance(60); // the timer fires at 100 ms, for nothing, and is armed for 150 ms
  assert.equal(later.decision, null);
  assert.equal(clock.pendingTimers, 1);
  clock.advance(39);
  assert.equal(later.decision, null);
  clock.advance(1);
  assert.equal(later.decision, "time-out");
  // It fired for the last one due, and nothing is due after it.
  assert.equal(clock.pendingTimers, 0);
  running.finish();
  assert.equal(clock.pendingTimers, 0);
  assert.equal(qs.isIdle, true);
});

Deno.test("a hash given as 32-bit halves deals the same queues as the bigint", () => {
  // Same hand, same waiting work: the rotation alone decides, identically for both forms.
  const bigint = makeSet(queuing(0, 64, 100, 4)).qs;
  const halves = makeSet(queuing(0, 64, 100, 4)).qs;
  for (const hash of [0n, 1n, 9876543210987654321n, 2n ** 64n - 1n]) {
    const parts = { hi: Number(hash >> 32n), lo: Number(hash & 0xffffffffn) };
    for (let i = 0; i < 6; i++) {
      assert.equal(
        bigint.startRequest({ hash }).queueIndex,
        halves.startRequest({ hash: parts }).queueIndex,
      );
    }
  }
  assert.deepEqual(
    bigint.snapshot().queues.map((q) => q.waitingRequests),
    halves.snapshot().queues.map((q) => q.waitingRequests),
  );
});

Deno.test("one signal shared by many waiting requests cancels just those still waiting", () => {
  const { qs } = makeSet(queuing(2, 4, 1000, 1));
  const shutdown = new AbortController();
  const rs = Array.from(
    { length: 500 },
    (_, i) => qs.startRequest({ hash: BigInt(i), signal: shutdown.signal }),
  );
  assert.equal(qs.executingRequests, 2);
  rs[0]!.finish(); // one more starts
  rs[5]!.cancel(); // one leaves on its own
  shutdown.abort();
  const decisions = rs.map((r) => r.decision);
  assert.equal(decisions.filter((d) => d === "execute").length, 3);
  assert.equal(decisions.filter((d) => d === "cancelled").length, 497);
  assert.equal(qs.waitingRequests, 0);
  assert.equal(qs.executingRequests, 2, "executing requests are not touched by the abort");
  for (const r of rs) r.finish();
  assert.equal(qs.isIdle, true);
});

Deno.test("a throwing onDecision or observer is reported to onError, and the set stays consistent", () => {
  const reported: unknown[] = [];
  const { qs } = makeSet(queuing(1, 1, 10, 1), {
    onError: (e) => reported.push(e),
    observer: {
      dispatched() {
        throw new Error("observer bug");
      },
    },
  });
  {
    const a = qs.startRequest();
    const b = qs.startRequest({
      onDecision: () => {
        throw new Error("callback bug");
      },
    });
    const c = qs.startRequest();
    a.finish();
    assert.equal(b.decision, "execute");
    assert.equal(qs.executingRequests, 1);
    b.finish();
    assert.equal(c.decision, "execute");
    c.finish();
    assert.equal(qs.isIdle, true);
    assert.deepEqual(reported.map(String), [
      "Error: observer bug",
      "Error: observer bug",
      "Error: callback bug",
      "Error: observer bug",
    ]);
  }
});
