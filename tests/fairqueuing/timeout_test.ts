import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { TIMED_OUT, withTimeout } from "../../src/fairqueuing/timeout.ts";

Deno.test("withTimeout gives the value in time, TIMED_OUT after, and passes a rejection through", async () => {
  const clock = new FakeEventClock();
  const never = withTimeout(clock, new Promise<number>(() => {}), 50);
  clock.advance(49);
  assert.equal(clock.pendingTimers, 1);
  clock.advance(1);
  assert.equal(await never, TIMED_OUT);

  let resolve!: (n: number) => void;
  const soon = withTimeout(clock, new Promise<number>((r) => resolve = r), 50);
  resolve(7);
  assert.equal(await soon, 7);
  assert.equal(clock.pendingTimers, 0, "the timer is cancelled once the value is in");

  await assert.rejects(withTimeout(clock, Promise.reject(new Error("boom")), 50), /boom/);
  assert.equal(clock.pendingTimers, 0);

  // A late value after the deadline changes nothing.
  let late!: (n: number) => void;
  const missed = withTimeout(clock, new Promise<number>((r) => late = r), 10);
  clock.advance(10);
  late(1);
  assert.equal(await missed, TIMED_OUT);
});

Deno.test("withTimeout refuses a timeout that is not a number >= 0", () => {
  const clock = new FakeEventClock();
  for (const bad of [-1, NaN, "5", undefined]) {
    assert.throws(
      () => withTimeout(clock, Promise.resolve(1), bad as number),
      /^RangeError: Cannot wait for a promise: timeoutMs must be a number >= 0, got /,
    );
  }
  assert.equal(clock.pendingTimers, 0);
});
