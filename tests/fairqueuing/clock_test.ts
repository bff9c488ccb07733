import assert from "node:assert/strict";
import fc from "fast-check";
import {
  FakeEventClock,
  hostClock,
  MAX_TIMEOUT_MS,
  nextTimeoutDelay,
  systemClock,
  type TimerHost,
} from "../../src/fairqueuing/clock.ts";

Deno.test("FakeEventClock starts at the given time and moves only when told", () => {
  const clock = new FakeEventClock(42.5);
  assert.equal(clock.now(), 42.5);
  assert.equal(new FakeEventClock().now(), 0);
  const fired: number[] = [];
  clock.setTimer(10, () => fired.push(clock.now()));
  assert.equal(clock.now(), 42.5);
  assert.deepEqual(fired, []);
  assert.equal(clock.advance(0), 0);
  assert.equal(clock.now(), 42.5);
  assert.equal(clock.advance(9.5), 0);
  assert.deepEqual(fired, []);
  assert.equal(clock.now(), 52);
  assert.equal(clock.advance(0.5), 1);
  assert.deepEqual(fired, [52.5]);
  assert.equal(clock.now(), 52.5);
});

Deno.test("FakeEventClock rejects a start time that is not finite", () => {
  for (const start of [NaN, Infinity, -Infinity]) {
    assert.throws(
      () => new FakeEventClock(start),
      (e: unknown) => e instanceof RangeError && e.message.includes(String(start)),
    );
  }
});

Deno.test("FakeEventClock.advance runs due callbacks in time order, each seeing its due time", () => {
  const clock = new FakeEventClock();
  const fired: [string, number][] = [];
  const note = (name: string) => () => fired.push([name, clock.now()]);
  clock.setTimer(30, note("c"));
  clock.setTimer(10, note("a"));
  clock.setTimer(50, note("late"));
  clock.setTimer(20, note("b"));
  assert.equal(clock.advance(40), 3);
  assert.deepEqual(fired, [["a", 10], ["b", 20], ["c", 30]]);
  assert.equal(clock.now(), 40);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextTimerAt(), 50);
});

Deno.test("FakeEventClock runs callbacks due at the same instant in the order they were set", () => {
  const clock = new FakeEventClock();
  const fired: number[] = [];
  for (let i = 0; i < 20; i++) clock.setTimer(i % 2 === 0 ? 5 : 7, () => fired.push(i));
  // Timers at time 0 set with a zero delay, interleaved with later ones.
  clock.setTimer(0, () => fired.push(100));
  clock.setTimer(-3, () => fired.push(101));
  assert.equal(clock.advance(10), 22);
  assert.deepEqual(fired, [
    100,
    101,
    ...[0, 2, 4, 6, 8, 10, 12, 14, 16, 18],
    ...[1, 3, 5, 7, 9, 11, 13, 15, 17, 19],
  ]);
});

Deno.test("FakeEventClock runs callbacks a callback sets at the current instant before time moves on", () => {
  const clock = new FakeEventClock();
  const fired: [string, number][] = [];
  clock.setTimer(5, () => {
    fired.push(["first", clock.now()]);
    clock.setTimer(0, () => {
      fired.push(["nested", clock.now()]);
      clock.setTimer(0, () => fired.push(["nested twice", clock.now()]));
    });
    clock.setTimer(2, () => fired.push(["in range", clock.now()]));
    clock.setTimer(20, () => fired.push(["out of range", clock.now()]));
  });
  clock.setTimer(5, () => fired.push(["second", clock.now()]));
  clock.setTimer(6, () => fired.push(["later", clock.now()]));
  assert.equal(clock.advance(10), 6);
  assert.deepEqual(fired, [
    ["first", 5],
    ["second", 5],
    ["nested", 5],
    ["nested twice", 5],
    ["later", 6],
    ["in range", 7],
  ]);
  assert.equal(clock.now(), 10);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextTimerAt(), 25);
});

Deno.test("FakeEventClock.advanceTo runs timers due up to and including the target", () => {
  const clock = new FakeEventClock(100);
  const fired: number[] = [];
  clock.setTimer(10, () => fired.push(clock.now()));
  clock.setTimer(10.000001, () => fired.push(clock.now()));
  assert.equal(clock.advanceTo(110), 1);
  assert.deepEqual(fired, [110]);
  assert.equal(clock.now(), 110);
  // A target in the past is a no-op: time never goes backwards.
  assert.equal(clock.advanceTo(50), 0);
  assert.equal(clock.now(), 110);
  assert.equal(clock.advanceTo(-Infinity), 0);
  assert.equal(clock.now(), 110);
  assert.equal(clock.advanceTo(200), 1);
  assert.deepEqual(fired, [110, 110.000001]);
  assert.equal(clock.now(), 200);
});

Deno.test("FakeEventClock.advanceTo the current instant runs zero-delay timers", () => {
  const clock = new FakeEventClock(7);
  let ran = false;
  clock.setTimer(0, () => ran = true);
  assert.equal(clock.advanceTo(7), 1);
  assert.equal(ran, true);
  assert.equal(clock.now(), 7);
});

Deno.test("FakeEventClock rejects advance arguments that are negative or not finite", () => {
  const clock = new FakeEventClock(3);
  for (const ms of [-1, -0.001, NaN, Infinity, -Infinity]) {
    assert.throws(
      () => clock.advance(ms),
      (e: unknown) => e instanceof RangeError && e.message.includes(String(ms)),
    );
  }
  for (const t of [NaN, Infinity]) {
    assert.throws(
      () => clock.advanceTo(t),
      (e: unknown) => e instanceof RangeError && e.message.includes(String(t)),
    );
  }
  assert.equal(clock.now(), 3);
});

Deno.test("FakeEventClock treats negative and NaN delays as zero", () => {
  const clock = new FakeEventClock(10);
  const fired: [string, number][] = [];
  clock.setTimer(1, () => fired.push(["one", clock.now()]));
  clock.setTimer(-5, () => fired.push(["negative", clock.now()]));
  clock.setTimer(NaN, () => fired.push(["nan", clock.now()]));
  clock.setTimer(-Infinity, () => fired.push(["-inf", clock.now()]));
  assert.equal(clock.nextTimerAt(), 10);
  assert.equal(clock.advance(0), 3);
  assert.deepEqual(fired, [["negative", 10], ["nan", 10], ["-inf", 10]]);
  clock.advance(1);
  assert.deepEqual(fired.at(-1), ["one", 11]);
});

Deno.test("FakeEventClock never fires a timer with an infinite delay and does not count it", () => {
  const clock = new FakeEventClock();
  let ran = false;
  const timer = clock.setTimer(Infinity, () => ran = true);
  assert.equal(clock.pendingTimers, 0);
  assert.equal(clock.nextTimerAt(), undefined);
  assert.equal(clock.runUntilIdle(), 0);
  timer.cancel();
  assert.equal(ran, false);
});

Deno.test("FakeEventClock.setTimer rejects a callback that is not a function", () => {
  const clock = new FakeEventClock();
  assert.throws(
    () => clock.setTimer(1, "nope" as unknown as () => void),
    (e: unknown) => e instanceof TypeError && e.message.includes("string"),
  );
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("FakeEventClock: cancelling before firing prevents the callback; after firing or twice is harmless", () => {
  const clock = new FakeEventClock();
  const fired: string[] = [];
  const a = clock.setTimer(5, () => fired.push("a"));
  const b = clock.setTimer(5, () => fired.push("b"));
  const c = clock.setTimer(8, () => fired.push("c"));
  b.cancel();
  b.cancel();
  assert.equal(clock.pendingTimers, 2);
  assert.equal(clock.advance(6), 1);
  assert.deepEqual(fired, ["a"]);
  a.cancel();
  a.cancel();
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextTimerAt(), 8);
  assert.equal(clock.advance(10), 1);
  assert.deepEqual(fired, ["a", "c"]);
  c.cancel();
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("FakeEventClock: a callback can cancel a timer due at the same instant", () => {
  const clock = new FakeEventClock();
  const fired: string[] = [];
  clock.setTimer(5, () => {
    fired.push("first");
    victim.cancel();
  });
  const victim = clock.setTimer(5, () => fired.push("victim"));
  clock.setTimer(5, () => fired.push("third"));
  assert.equal(clock.advance(5), 2);
  assert.deepEqual(fired, ["first", "third"]);
});

Deno.test("FakeEventClock ignores cancelTimer for a timer of another clock", () => {
  const one = new FakeEventClock();
  const other = new FakeEventClock();
  let ran = false;
  const timer = one.setTimer(1, () => ran = true);
  other.cancelTimer(timer);
  other.cancelTimer({ cancel() {} });
  assert.equal(one.pendingTimers, 1);
  one.advance(1);
  assert.equal(ran, true);
});

Deno.test("FakeEventClock: cancelling one of many timers keeps the rest in order", () => {
  const clock = new FakeEventClock();
  const fired: number[] = [];
  const timers = Array.from({ length: 9 }, (_, i) => clock.setTimer(9 - i, () => fired.push(i)));
  timers[4]!.cancel();
  timers[0]!.cancel();
  assert.equal(clock.pendingTimers, 7);
  assert.equal(clock.nextTimerAt(), 1);
  assert.equal(clock.runUntilIdle(), 7);
  assert.deepEqual(fired, [8, 7, 6, 5, 3, 2, 1]);
});

Deno.test("FakeEventClock: cancelling a timer whose heap replacement must move up keeps the order", () => {
  // Removing 97 moves the last timer (5) under 63 and 74: it must sift up past them.
  const clock = new FakeEventClock();
  const fired: number[] = [];
  const timers = [73, 97, 74, 63, 31, 33, 5].map((at) => clock.setTimer(at, () => fired.push(at)));
  timers[1]!.cancel();
  assert.equal(clock.nextTimerAt(), 5);
  assert.equal(clock.runUntilIdle(), 6);
  assert.deepEqual(fired, [5, 31, 33, 63, 73, 74]);
});

Deno.test("FakeEventClock fires exactly the uncancelled timers in (due time, insertion) order", () => {
  const spec = fc.array(
    fc.record({
      // Few distinct delays force ties; a wide range shapes the heap so removals must sift up.
      delay: fc.oneof(fc.constantFrom(-1, 0, 2, 8.5), fc.integer({ min: 0, max: 100 })),
      cancel: fc.boolean(),
    }),
    { maxLength: 120, size: "large" },
  );
  fc.assert(
    fc.property(spec, fc.nat(60), (timers, advanceBy) => {
      const clock = new FakeEventClock(1);
      const fired: [index: number, at: number][] = [];
      const handles = timers.map(({ delay }, i) =>
        clock.setTimer(delay, () => fired.push([i, clock.now()]))
      );
      // Cancel in a scrambled order so removals hit every heap position.
      const indices = handles.map((_, i) => i);
      const order = [
        ...indices.filter((i) => i % 2 === 1).reverse(),
        ...indices.filter((i) => i % 2 === 0),
      ];
      for (const i of order) if (timers[i]!.cancel) handles[i]!.cancel();
      const kept = timers
        .map(({ delay, cancel }, i) => ({ i, at: 1 + Math.max(0, delay), cancel }))
        .filter((t) => !t.cancel)
        .sort((x, y) => x.at - y.at || x.i - y.i);
      assert.equal(clock.pendingTimers, kept.length);
      assert.equal(clock.nextTimerAt(), kept[0]?.at);

      const due = kept.filter((t) => t.at <= 1 + advanceBy);
      assert.equal(clock.advance(advanceBy), due.length);
      assert.equal(clock.now(), 1 + advanceBy);
      assert.equal(clock.runUntilIdle(), kept.length - due.length);
      assert.deepEqual(fired, kept.map((t) => [t.i, t.at]));
      assert.equal(clock.pendingTimers, 0);
      assert.equal(clock.nextTimerAt(), undefined);
    }),
    { numRuns: 500 },
  );
});

Deno.test("FakeEventClock.runUntilIdle stops before timers due after the limit and returns the count", () => {
  const clock = new FakeEventClock();
  const fired: number[] = [];
  for (const at of [1, 4, 4, 9, 30]) clock.setTimer(at, () => fired.push(clock.now()));
  assert.equal(clock.runUntilIdle(9), 4);
  assert.deepEqual(fired, [1, 4, 4, 9]);
  // Time stops at the last timer run, not at the limit.
  assert.equal(clock.now(), 9);
  assert.equal(clock.runUntilIdle(20), 0);
  assert.equal(clock.now(), 9);
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.runUntilIdle(), 1);
  assert.equal(clock.now(), 30);
  assert.equal(clock.runUntilIdle(), 0);
});

Deno.test("FakeEventClock.runUntilIdle runs timers the callbacks set", () => {
  const clock = new FakeEventClock();
  let ticks = 0;
  const tick = () => {
    ticks++;
    if (ticks < 5) clock.setTimer(10, tick);
  };
  clock.setTimer(10, tick);
  assert.equal(clock.runUntilIdle(), 5);
  assert.equal(clock.now(), 50);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("FakeEventClock.runUntilIdle throws RangeError after maxCallbacks for a self-rescheduling timer", () => {
  const clock = new FakeEventClock();
  let ticks = 0;
  const forever = () => {
    ticks++;
    clock.setTimer(1, forever);
  };
  clock.setTimer(1, forever);
  assert.throws(
    () => clock.runUntilIdle(Infinity, 100),
    (e: unknown) => e instanceof RangeError && e.message.includes("100 callbacks"),
  );
  assert.equal(ticks, 100);
  assert.equal(clock.now(), 100);
  assert.equal(clock.pendingTimers, 1);
  // Exactly maxCallbacks callbacks that leave nothing pending is not an error.
  const quiet = new FakeEventClock();
  for (let i = 0; i < 3; i++) quiet.setTimer(i, () => {});
  assert.equal(quiet.runUntilIdle(Infinity, 3), 3);
});

Deno.test("FakeEventClock.pendingTimers and nextTimerAt track the queue", () => {
  const clock = new FakeEventClock();
  assert.equal(clock.pendingTimers, 0);
  assert.equal(clock.nextTimerAt(), undefined);
  const late = clock.setTimer(20, () => {});
  assert.equal(clock.nextTimerAt(), 20);
  const early = clock.setTimer(3, () => {});
  assert.equal(clock.pendingTimers, 2);
  assert.equal(clock.nextTimerAt(), 3);
  early.cancel();
  assert.equal(clock.pendingTimers, 1);
  assert.equal(clock.nextTimerAt(), 20);
  late.cancel();
  assert.equal(clock.pendingTimers, 0);
  assert.equal(clock.nextTimerAt(), undefined);
});

Deno.test("systemClock.now never decreases", () => {
  let previous = systemClock.now();
  for (let i = 0; i < 10_000; i++) {
    const t = systemClock.now();
    assert.ok(t >= previous, `${t} < ${previous}`);
    previous = t;
  }
});

Deno.test("systemClock fires a timer after its delay and not one that was cancelled", async () => {
  let cancelledRan = false;
  const cancelled = systemClock.setTimer(0, () => cancelledRan = true);
  cancelled.cancel();
  const started = systemClock.now();
  const firedAt = await new Promise<number>((resolve) => {
    systemClock.setTimer(1, () => resolve(systemClock.now()));
  });
  // Runs no earlier than 1 ms later (allowing for timer clamping to whole ms).
  assert.ok(firedAt - started >= 0.5, `fired after ${firedAt - started} ms`);
  // The cancelled timer was due first; had it not been cancelled it would have run by now.
  assert.equal(cancelledRan, false);
  cancelled.cancel();
});

/** A host whose time moves only when told, recording every `setTimeout`. */
function fakeHost() {
  let now = 0;
  let nextId = 1;
  const pending = new Map<number, { at: number; callback: () => void; delayMs: number }>();
  const delays: number[] = [];
  const host: TimerHost = {
    now: () => now,
    setTimeout(callback, delayMs) {
      delays.push(delayMs);
      // setTimeout's own rule: a delay outside [1, 2^31-1] becomes 1.
      const effective = delayMs >= 1 && delayMs <= MAX_TIMEOUT_MS ? delayMs : 1;
      pending.set(nextId, { at: now + effective, callback, delayMs });
      return nextId++;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
  };
  /** Fires host timers in due order until none is left (or `max` fired). */
  const runAll = (max = 1000) => {
    for (let i = 0; i < max && pending.size > 0; i++) {
      const [id, t] = [...pending].sort((a, b) => a[1].at - b[1].at)[0]!;
      pending.delete(id);
      now = Math.max(now, t.at);
      t.callback();
    }
  };
  return { host, delays, pending, runAll, now: () => now };
}

Deno.test("nextTimeoutDelay rounds up and clamps to setTimeout's range", () => {
  assert.equal(nextTimeoutDelay(1.2), 2);
  assert.equal(nextTimeoutDelay(0.001), 1);
  assert.equal(nextTimeoutDelay(5), 5);
  assert.equal(nextTimeoutDelay(0), 0);
  assert.equal(nextTimeoutDelay(-3), 0);
  assert.equal(nextTimeoutDelay(NaN), 0);
  assert.equal(nextTimeoutDelay(MAX_TIMEOUT_MS), MAX_TIMEOUT_MS);
  assert.equal(nextTimeoutDelay(2 ** 31), MAX_TIMEOUT_MS);
  assert.equal(nextTimeoutDelay(30 * 86_400_000), MAX_TIMEOUT_MS);
});

Deno.test("a 30-day timer re-arms at setTimeout's maximum and fires on time, never early", () => {
  const h = fakeHost();
  const clock = hostClock(h.host);
  const dueMs = 30 * 86_400_000 + 0.25;
  const fired: number[] = [];
  clock.setTimer(dueMs, () => fired.push(h.now()));
  assert.ok(h.delays.every((d) => Number.isInteger(d) && d >= 0 && d <= MAX_TIMEOUT_MS));
  h.runAll();
  assert.equal(fired.length, 1);
  assert.ok(fired[0]! >= dueMs, `fired at ${fired[0]} before ${dueMs}`);
  assert.ok(fired[0]! < dueMs + 1, `fired at ${fired[0]}, late`);
  assert.equal(h.delays[0], MAX_TIMEOUT_MS);
  assert.ok(h.delays.length >= 2 && h.delays.length <= 3, `armed ${h.delays.length} times`);
  assert.ok(h.delays.every((d) => Number.isInteger(d) && d >= 0 && d <= MAX_TIMEOUT_MS));
});

Deno.test("a fractional timer rounds up; a cancelled long timer stops re-arming", () => {
  const h = fakeHost();
  const clock = hostClock(h.host);
  const fired: number[] = [];
  clock.setTimer(1.2, () => fired.push(h.now()));
  assert.deepEqual(h.delays, [2]);
  h.runAll();
  assert.deepEqual(fired, [2]);

  const long = clock.setTimer(3 * MAX_TIMEOUT_MS, () => fired.push(h.now()));
  h.runAll(1); // the first leg ends and the timer re-arms
  assert.equal(h.pending.size, 1);
  long.cancel();
  assert.equal(h.pending.size, 0);
  h.runAll();
  assert.deepEqual(fired, [2]);

  clock.setTimer(Infinity, () => fired.push(h.now()));
  assert.equal(h.pending.size, 0, "an infinite delay sets no timer");
});
