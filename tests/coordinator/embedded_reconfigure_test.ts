/**
 * EmbeddedCoordinator reconfiguration while requests wait and execute
 * (`docs/semantics.md` §2.6, §4.8): adding, removing (quiescing) and changing levels,
 * refusing an invalid configuration whole, and closing.
 */

import assert from "node:assert/strict";
import type { EffectiveConfiguration } from "../../src/config/effective.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Admission, Seat, SeatRequest } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { Dealer } from "../../src/fairqueuing/shuffle_shard.ts";
import type { PriorityLevelSnapshot } from "../../src/observe/types.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { configOf, exempt, limited, type LimitedOptions } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

const ONE_QUEUE = { queues: 1, handSize: 1, queueLengthLimit: 10 };

/** ServerCL 30 over catch-all, a, b (and more), one share each, nothing lendable. */
function config(extra: Record<string, LimitedOptions> = {}, without: string[] = []) {
  const levels: Record<string, LimitedOptions> = {
    "catch-all": {},
    a: { queuing: ONE_QUEUE },
    b: { queuing: ONE_QUEUE },
    ...extra,
  };
  return configOf(
    30,
    Object.entries(levels).filter(([n]) => !without.includes(n)).map(([n, o]) => limited(n, o)),
  );
}

/** Acquires `n` requests of `level` and tracks their outcomes as they arrive. */
function many(c: EmbeddedCoordinator, level: string, n: number, extra: Partial<SeatRequest> = {}) {
  const outcomes: (Admission | undefined)[] = new Array(n).fill(undefined);
  for (let i = 0; i < n; i++) {
    c.acquire({ priorityLevel: level, flowSchema: "fs", ...extra }).then((o) => outcomes[i] = o);
  }
  return {
    outcomes,
    seats: (): Seat[] => outcomes.flatMap((o) => o?.admitted ? [o.seat] : []),
    waiting: () => outcomes.filter((o) => o === undefined).length,
  };
}

function level(c: EmbeddedCoordinator, name: string): PriorityLevelSnapshot | undefined {
  return c.snapshot().levels.find((l) => l.name === name);
}

function usage(c: EmbeddedCoordinator, name: string) {
  const l = level(c, name);
  assert.ok(l !== undefined, `level ${name} exists`);
  return {
    quiescing: l.quiescing,
    nominal: l.nominalLimit,
    current: l.currentLimit,
    executing: l.queueSet.executingRequests,
    waiting: l.queueSet.waitingRequests,
    seatsInUse: l.queueSet.seatsInUse,
  };
}

Deno.test("EmbeddedCoordinator: adding a level shrinks the others' limits without evicting", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(config(), { clock });
  const a = many(c, "a", 12);
  await settle();
  assert.deepEqual(usage(c, "a"), {
    quiescing: false,
    nominal: 10,
    current: 10,
    executing: 10,
    waiting: 2,
    seatsInUse: 10,
  });
  // Four levels of one share: NominalCL ceil(30/4) = 8 each, nominalSum 32 = ΣMinCL.
  c.configure(config({ c: { queuing: ONE_QUEUE } }));
  assert.deepEqual(usage(c, "a"), {
    quiescing: false,
    nominal: 8,
    current: 8,
    executing: 10,
    waiting: 2,
    seatsInUse: 10,
  });
  assert.deepEqual(usage(c, "c"), {
    quiescing: false,
    nominal: 8,
    current: 8,
    executing: 0,
    waiting: 0,
    seatsInUse: 0,
  });
  const cs = await c.acquire({ priorityLevel: "c", flowSchema: "fs" });
  assert.ok(cs.admitted);
  // Back under the new limit before anyone waiting runs: 10 → 7, then one more dispatched.
  for (const s of a.seats().slice(0, 3)) s.release();
  await settle();
  assert.equal(a.waiting(), 1);
  assert.deepEqual(usage(c, "a").seatsInUse, 8);
  for (let i = 0; a.seats().some((s) => s.release()); i++) await settle();
  cs.seat.release();
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator: a removed level drains with its share, then goes", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(config(), { clock });
  const b = many(c, "b", 11);
  await settle();
  assert.equal(b.waiting(), 1);
  const next = config({}, ["b"]);
  assert.equal(next.priorityLevels.find((l) => l.name === "a")!.nominal, 15);
  c.configure(next);
  // b keeps serving, quiescing, and still counts in the share sum: a stays at 10, not 15.
  assert.deepEqual(usage(c, "b"), {
    quiescing: true,
    nominal: 10,
    current: 10,
    executing: 10,
    waiting: 1,
    seatsInUse: 10,
  });
  assert.equal(usage(c, "a").nominal, 10);
  assert.equal(usage(c, "a").current, 10);
  assert.equal(c.configuration, next);
  clock.advance(30_000); // adjustments keep it too
  assert.equal(usage(c, "b").quiescing, true);
  b.seats()[0]!.release();
  await settle();
  assert.equal(b.waiting(), 0, "the waiter of a quiescing level is still dispatched");
  const seats = b.seats();
  for (const s of seats.slice(1, -1)) s.release();
  assert.deepEqual(usage(c, "b").executing, 1);
  seats.at(-1)!.release();
  // Idle: gone, and its share with it.
  assert.equal(level(c, "b"), undefined);
  assert.deepEqual(c.snapshot().levels.map((l) => [l.name, l.nominalLimit, l.currentLimit]), [
    ["a", 15, 15],
    ["catch-all", 15, 15],
    ["exempt", 0, 0],
  ]);
  assert.deepEqual(
    await c.acquire({ priorityLevel: "b", flowSchema: "fs" }),
    { admitted: false, reason: "unavailable", retryAfterSeconds: 1 },
  );
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator: a level used then removed idle is unavailable at once", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(config(), { clock });
  const first = await c.acquire({ priorityLevel: "b", flowSchema: "fs" });
  assert.ok(first.admitted);
  first.seat.release();
  c.configure(config({}, ["b"]));
  assert.equal(level(c, "b"), undefined);
  assert.deepEqual(
    await c.acquire({ priorityLevel: "b", flowSchema: "fs" }),
    { admitted: false, reason: "unavailable", retryAfterSeconds: 1 },
  );
  c.configure(config());
  const back = await c.acquire({ priorityLevel: "b", flowSchema: "fs" });
  assert.ok(back.admitted, "served by the level added again");
  back.seat.release();
  assert.equal(usage(c, "b").executing, 0);
  c.close();
  assert.deepEqual(
    await c.acquire({ priorityLevel: "b", flowSchema: "fs" }),
    { admitted: false, reason: "unavailable", retryAfterSeconds: 1 },
  );
});

Deno.test("EmbeddedCoordinator: a removed level whose last waiter times out goes", async () => {
  const clock = new FakeEventClock();
  // b has no share: NominalCL 0, so its queue never dispatches.
  using c = new EmbeddedCoordinator(config({ b: { shares: 0, queuing: ONE_QUEUE } }), { clock });
  const w = c.acquire({ priorityLevel: "b", flowSchema: "fs", waitLimitMs: 100 });
  c.configure(config({}, ["b"]));
  assert.equal(usage(c, "b").quiescing, true);
  assert.equal(usage(c, "b").waiting, 1);
  clock.advance(100);
  assert.deepEqual(await w, { admitted: false, reason: "time-out", retryAfterSeconds: 1 });
  assert.equal(level(c, "b"), undefined);
  // An idle level that is removed goes at once.
  c.configure(config({}, ["b", "a"]));
  assert.equal(level(c, "a"), undefined);
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator: a removed level that comes back is no longer quiescing", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(config(), { clock });
  const held = await c.acquire({ priorityLevel: "b", flowSchema: "fs" });
  assert.ok(held.admitted);
  c.configure(config({}, ["b"]));
  assert.equal(usage(c, "b").quiescing, true);
  c.configure(config());
  assert.deepEqual(usage(c, "b"), {
    quiescing: false,
    nominal: 10,
    current: 10,
    executing: 1,
    waiting: 0,
    seatsInUse: 1,
  });
  held.seat.release();
  assert.equal(usage(c, "b").quiescing, false, "still configured: stays");
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator changes queues, hand size, queue length and shares live", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(config(), { clock });
  const first = many(c, "a", 13);
  await settle();
  assert.equal(first.waiting(), 3);
  const queuing = { queues: 4, handSize: 2, queueLengthLimit: 1 };
  c.configure(config({ a: { queuing } }));
  let a = level(c, "a")!;
  assert.equal(a.queueSet.desiredQueues, 4);
  assert.deepEqual(a.queueSet.queues.map((q) => q.waitingRequests), [3, 0, 0, 0]);
  // Four queues: a flow hash is now required.
  await assert.rejects(c.acquire({ priorityLevel: "a", flowSchema: "fs" }), TypeError);
  // One flow: its hand's queues hold one request each, queue 0 is already over the limit.
  const hand = [...new Dealer(4, 2).dealIntoHand(7n)];
  const free = hand.filter((q) => q !== 0).length;
  const flowHash = { hi: 0, lo: 7 };
  const second = many(c, "a", free, { flowHash });
  const full = await c.acquire({ priorityLevel: "a", flowSchema: "fs", flowHash });
  assert.deepEqual(full, { admitted: false, reason: "queue-full", retryAfterSeconds: 1 });
  a = level(c, "a")!;
  assert.equal(a.queueSet.waitingRequests, 3 + free);

  // Two shares of four: NominalCL ceil(30·2/4) = 15, and every waiter is dispatched at once.
  c.configure(config({ a: { shares: 2, queuing } }));
  await settle();
  assert.deepEqual(usage(c, "a"), {
    quiescing: false,
    nominal: 15,
    current: 15,
    executing: 13 + free,
    waiting: 0,
    seatsInUse: 13 + free,
  });
  // Back to one queue: surplus queues go as their requests finish; no hash needed again.
  c.configure(config());
  assert.equal(level(c, "a")!.queueSet.desiredQueues, 1);
  const third = many(c, "a", 1);
  for (let i = 0; i < 20 && [first, second, third].some((x) => x.waiting() > 0); i++) {
    for (const x of [first, second, third]) for (const s of x.seats()) s.release();
    await settle();
  }
  for (const x of [first, second, third]) {
    assert.equal(x.waiting(), 0);
    for (const s of x.seats()) s.release();
  }
  assert.ok(level(c, "a")!.queueSet.queues.length < 4, "surplus queues were removed");
  assertIdle(c.snapshot());
});

Deno.test("EmbeddedCoordinator keeps a mandatory level whose object went away as it was", () => {
  // Kubernetes retains a mandatory level missing from a new configuration with its old spec
  // (processOldPLsLocked); only one it never held is imagined with the built-in spec.
  const tuned = configOf(40, [
    exempt(10),
    limited("catch-all", { shares: 5 }),
    limited("a", { shares: 5 }),
  ]);
  const c = new EmbeddedCoordinator(tuned, { clock: new FakeEventClock() });
  const nominal = () =>
    Object.fromEntries(c.snapshot().levels.map((l) => [l.name, l.nominalLimit]));
  assert.deepEqual(nominal(), { a: 10, "catch-all": 10, exempt: 20 });
  const withoutExempt = configOf(40, [
    limited("catch-all", { shares: 5 }),
    limited("a", { shares: 5 }),
  ]);
  assert.equal(withoutExempt.priorityLevels.find((pl) => pl.name === "exempt")!.imagined, true);
  c.configure(withoutExempt);
  assert.deepEqual(nominal(), { a: 10, "catch-all": 10, exempt: 20 }, "the tuned exempt stays");
  // A coordinator that never held a tuned exempt imagines the built-in one (no shares).
  const fresh = new EmbeddedCoordinator(withoutExempt, { clock: new FakeEventClock() });
  assert.deepEqual(
    Object.fromEntries(fresh.snapshot().levels.map((l) => [l.name, l.nominalLimit])),
    { a: 20, "catch-all": 20, exempt: 0 },
  );
  c.close();
  fresh.close();
});

Deno.test("EmbeddedCoordinator refuses an invalid configuration whole", async () => {
  const clock = new FakeEventClock();
  using c = new EmbeddedCoordinator(config(), { clock });
  const a = many(c, "a", 11);
  await settle();
  const before = c.snapshot({ includeRequests: true });
  const old = c.configuration;
  const valid = config({ d: { queuing: ONE_QUEUE } });
  const withQueuing = (
    eff: EffectiveConfiguration,
    name: string,
    queuing: { queues: number; handSize: number; queueLengthLimit: number },
  ): EffectiveConfiguration => ({
    ...eff,
    priorityLevels: eff.priorityLevels.map((pl) => pl.name === name ? { ...pl, queuing } : pl),
  });
  // b changes validly first, then a's hand is larger than its deck: the Dealer refuses.
  const badExisting = withQueuing(
    withQueuing(valid, "b", { queues: 8, handSize: 2, queueLengthLimit: 5 }),
    "a",
    { queues: 2, handSize: 3, queueLengthLimit: 5 },
  );
  assert.throws(() => c.configure(badExisting), RangeError);
  // A new level with an impossible hand.
  const badNew = withQueuing(valid, "d", { queues: 1, handSize: 2, queueLengthLimit: 5 });
  assert.throws(() => c.configure(badNew), RangeError);
  assert.deepEqual(c.snapshot({ includeRequests: true }), before);
  assert.equal(c.configuration, old);
  assert.equal(level(c, "d"), undefined);
  // The old levels keep serving as before.
  const b = await c.acquire({ priorityLevel: "b", flowSchema: "fs" });
  assert.ok(b.admitted);
  b.seat.release();
  a.seats()[0]!.release();
  await settle();
  assert.equal(a.waiting(), 0);
  for (const s of a.seats()) s.release();
  assertIdle(c.snapshot());
  c.configure(valid);
  assert.equal(usage(c, "d").current, 8);
});

Deno.test("EmbeddedCoordinator close() answers waiters unavailable and keeps seats releasable", async () => {
  const clock = new FakeEventClock();
  const c = new EmbeddedCoordinator(config(), { clock });
  const a = many(c, "a", 9);
  const lingering = await c.acquire({
    priorityLevel: "a",
    flowSchema: "fs",
    work: { initialSeats: 1, finalSeats: 1, additionalLatencyMs: 1_000 },
  });
  assert.ok(lingering.admitted);
  const waiters = many(c, "a", 2);
  await settle();
  assert.equal(waiters.waiting(), 2);
  c.close();
  await settle();
  assert.deepEqual(waiters.outcomes, [
    { admitted: false, reason: "unavailable", retryAfterSeconds: 1 },
    { admitted: false, reason: "unavailable", retryAfterSeconds: 1 },
  ]);
  assert.deepEqual(await c.acquire({ priorityLevel: "a", flowSchema: "fs" }), {
    admitted: false,
    reason: "unavailable",
    retryAfterSeconds: 1,
  });
  assert.deepEqual(await c.acquire({ priorityLevel: "exempt", flowSchema: "exempt" }), {
    admitted: false,
    reason: "unavailable",
    retryAfterSeconds: 1,
  });
  assert.throws(() => c.configure(config()), TypeError);
  assert.equal(clock.pendingTimers, 0);
  // Seats held are released; final seats no longer linger.
  for (const s of a.seats()) assert.equal(s.release(), true);
  assert.equal(lingering.seat.release(), true);
  assert.equal(lingering.seat.release(), false);
  assert.equal(clock.pendingTimers, 0);
  assert.equal(usage(c, "a").seatsInUse, 0);
  assertIdle(c.snapshot());
});
