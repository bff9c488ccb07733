import assert from "node:assert/strict";
import type {
  QueueSetObserver,
  QueueSetRequest,
  RejectReason,
} from "../../src/fairqueuing/types.ts";
import { makeSet, queuing } from "./_queue_set_helpers.ts";

const d = (flowSchema: string, distinguisher = "") => ({ flowSchema, distinguisher });

Deno.test("close() cancels waiters, releases lingering seats, stops the timer, refuses new work", () => {
  const { qs, clock } = makeSet(queuing(1, 2, 5, 1));
  const running = qs.startRequest({ hash: 0n, work: { additionalLatencyMs: 50, finalSeats: 1 } });
  const lingering = qs.startRequest({ hash: 1n, waitLimitMs: 1000 });
  assert.equal(lingering.decision, null);
  running.finish(); // final seat lingers 50 ms; `lingering` still waits for it
  assert.equal(lingering.decision, null);
  assert.equal(clock.pendingTimers, 1);
  qs.close();
  assert.equal(lingering.decision, "cancelled");
  assert.equal(qs.seatsInUse, 0);
  assert.equal(clock.pendingTimers, 0);
  assert.equal(qs.closed, true);
  assert.equal(qs.snapshot().closed, true);
  assert.throws(() => qs.startRequest({ hash: 0n }), /queue set "queue-set" is closed/);
  assert.throws(() => qs.configure(queuing(2, 2, 5, 1)), /it is closed/);
  assert.throws(() => qs.setConcurrencyLimit(3), /it is closed/);
  qs.close(); // idempotent
});

Deno.test("close() lets executing requests finish, releasing at once without lingering", () => {
  const { qs, clock } = makeSet(queuing(2, 1, 5, 1));
  const r = qs.startRequest({ work: { finalSeats: 2, additionalLatencyMs: 100 } });
  qs.close();
  assert.equal(r.finish(), true);
  assert.equal(qs.seatsInUse, 0);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("beginConfigure validates without changing anything; complete applies once, with a limit", () => {
  const { qs } = makeSet(queuing(1, 4, 5, 2));
  assert.throws(
    () =>
      qs.beginConfigure({
        ...queuing(1, 4, 5, 2),
        queuing: { queues: 4, queueLengthLimit: 5, handSize: 9 },
      }),
    RangeError,
  );
  const before = qs.snapshot();
  const change = qs.beginConfigure(queuing(1, 8, 5, 2));
  assert.deepEqual(qs.snapshot(), before, "nothing changes before complete()");
  assert.throws(() => change.complete(-1), /must be an integer >= 0, got -1/);
  assert.deepEqual(qs.snapshot(), before, "a bad limit changes nothing");
  change.complete(3);
  assert.equal(qs.concurrencyLimit, 3);
  assert.equal(qs.snapshot().queues.length, 8);
  assert.throws(() => change.complete(), /twice/);
  assert.equal(change.queueSet, qs);
});

Deno.test("a set of several queues requires a flow hash; one queue or none does not", () => {
  const { qs } = makeSet(queuing(1, 4, 5, 2));
  assert.throws(() => qs.startRequest({}), /has 4 queues, so a flow hash is required/);
  assert.equal(qs.isIdle, true);
  const one = makeSet(queuing(1, 1, 5, 1)).qs;
  assert.equal(one.startRequest({}).decision, "execute");
  const reject = makeSet({ type: "Limited", concurrencyLimit: 1, queuing: null }).qs;
  assert.equal(reject.startRequest({}).decision, "execute");
  const halves = qs.startRequest({ hash: { hi: 7, lo: 9 } });
  assert.equal(halves.decision, "execute");
});

Deno.test("the observer sees enqueue, dispatch with wait, rejection with reason, finish and release", () => {
  const events: string[] = [];
  const name = (r: QueueSetRequest) => r.descriptor.flowSchema;
  const observer: QueueSetObserver = {
    enqueued: (r, n) => events.push(`enqueued ${name(r)} len=${n}`),
    dispatched: (r, w) => events.push(`dispatched ${name(r)} waited=${w}`),
    rejected: (r, reason: RejectReason, w, queued) =>
      events.push(`rejected ${name(r)} ${reason} waited=${w} queued=${queued}`),
    finished: (r, ms) => events.push(`finished ${name(r)} exec=${ms}`),
    released: (r, seats) => events.push(`released ${name(r)} seats=${seats}`),
  };
  const { qs, clock } = makeSet(queuing(1, 1, 1, 1), { observer });
  const a = qs.startRequest({
    descriptor: d("a"),
    work: { finalSeats: 1, additionalLatencyMs: 5 },
  });
  const b = qs.startRequest({ descriptor: d("b"), waitLimitMs: 100 });
  qs.startRequest({ descriptor: d("c") }); // queue full and no seat: rejected
  clock.advance(10);
  a.finish();
  clock.advance(5); // a's final seat goes; b starts after waiting 15 ms
  clock.advance(20);
  b.finish();
  assert.deepEqual(events, [
    "enqueued a len=1",
    "dispatched a waited=0",
    "enqueued b len=1",
    "rejected c queue-full waited=0 queued=false",
    "finished a exec=10",
    "released a seats=1",
    "dispatched b waited=15",
    "finished b exec=20",
    "released b seats=1",
  ]);
  const x = qs.startRequest({ descriptor: d("x") });
  const y = qs.startRequest({ descriptor: d("y"), waitLimitMs: 7 });
  clock.advance(7);
  assert.equal(y.decision, "time-out");
  assert.equal(events.at(-1), "rejected y time-out waited=7 queued=true");
  x.finish();
});

Deno.test("snapshot with requests lists waiting ones in order, then executing ones, per queue", () => {
  const { qs, clock } = makeSet(queuing(1, 1, 5, 1));
  const details = {
    user: "alice",
    verb: "get",
    path: "/x",
    namespace: "",
    name: "",
    apiGroup: "",
    apiVersion: "",
    resource: "",
    subresource: "",
  };
  const a = qs.startRequest({ descriptor: { ...d("fs", "alice"), details } });
  clock.advance(2);
  const b = qs.startRequest({
    descriptor: d("fs", "bob"),
    work: { initialSeats: 1, finalSeats: 2, additionalLatencyMs: 3 },
  });
  const c = qs.startRequest({ descriptor: d("fs", "carol") });
  assert.equal(qs.snapshot().queues[0]!.requests, undefined, "requests only when asked for");
  const snap = qs.snapshot({ includeRequests: true });
  assert.deepEqual(
    snap.queues[0]!.requests!.map((r) => [r.descriptor.distinguisher, r.indexInQueue, r.startMs]),
    [["bob", 0, null], ["carol", 1, null], ["alice", -1, 0]],
  );
  const bob = snap.queues[0]!.requests![0]!;
  assert.deepEqual([bob.arrivalMs, bob.initialSeats, bob.finalSeats, bob.additionalLatencyMs], [
    2,
    1,
    2,
    3,
  ]);
  assert.deepEqual(snap.queues[0]!.requests![2]!.descriptor.details, details);
  assert.deepEqual(snap.unqueuedRequests, []);
  assert.equal(snap.nowMs, 2);
  assert.deepEqual([snap.type, snap.desiredQueues, snap.concurrencyLimit, snap.isIdle], [
    "Limited",
    1,
    1,
    false,
  ]);
  assert.equal(snap.queues[0]!.waitingInitialSeats, 2);
  assert.equal(snap.queues[0]!.waitingSeats, 3);
  b.cancel();
  c.cancel();
  a.finish();
});

Deno.test("exempt sets list their executing requests as unqueued", () => {
  const { qs } = makeSet({ type: "Exempt" });
  const a = qs.startRequest({ descriptor: d("exempt", "") });
  const snap = qs.snapshot({ includeRequests: true });
  assert.deepEqual(snap.queues, []);
  assert.deepEqual(snap.unqueuedRequests!.map((r) => [r.queueIndex, r.indexInQueue]), [[-1, -1]]);
  a.finish();
  assert.deepEqual(qs.snapshot({ includeRequests: true }).unqueuedRequests, []);
});
