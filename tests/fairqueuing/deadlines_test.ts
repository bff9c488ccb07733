import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { type Deadline, Deadlines } from "../../src/fairqueuing/deadlines.ts";

function deadline(endsAt: number, fired: number[]): Deadline {
  return { endsAt, fire: () => fired.push(endsAt), slot: -1 };
}

Deno.test("Deadlines fire each deadline once, at its time, on one timer", () => {
  const clock = new FakeEventClock();
  const deadlines = new Deadlines(clock);
  const fired: number[] = [];
  const late = deadline(30, fired), early = deadline(10, fired), mid = deadline(20, fired);
  deadlines.add(late);
  deadlines.add(early);
  deadlines.add(mid);
  assert.equal(clock.pendingTimers, 1, "one timer for all");
  clock.advance(9);
  assert.deepEqual(fired, []);
  clock.advance(1);
  assert.deepEqual(fired, [10]);
  deadlines.remove(mid);
  clock.advance(15);
  assert.deepEqual(fired, [10], "a removed deadline never fires");
  clock.advance(5);
  assert.deepEqual(fired, [10, 30]);
  assert.equal(deadlines.size, 0);
  assert.equal(clock.pendingTimers, 0, "nothing pending, no timer");
});

Deno.test("Deadlines keep no timer once empty, and close fires what is pending", () => {
  const clock = new FakeEventClock();
  const deadlines = new Deadlines(clock);
  const fired: number[] = [];
  const a = deadline(100, fired);
  deadlines.add(a);
  deadlines.remove(a);
  assert.equal(clock.pendingTimers, 0);
  deadlines.remove(a);
  deadlines.add(deadline(50, fired));
  deadlines.add(deadline(60, fired));
  deadlines.close();
  assert.deepEqual(fired.sort(), [50, 60]);
  assert.equal(clock.pendingTimers, 0);
  deadlines.add(deadline(70, fired));
  assert.deepEqual(fired.sort(), [50, 60, 70], "a closed set fires at once");
  clock.advance(1_000);
  assert.equal(fired.length, 3);
});

Deno.test("a deadline added before the armed one re-arms the timer", () => {
  const clock = new FakeEventClock();
  const deadlines = new Deadlines(clock);
  const fired: number[] = [];
  deadlines.add(deadline(100, fired));
  deadlines.add(deadline(5, fired));
  clock.advance(5);
  assert.deepEqual(fired, [5]);
  assert.equal(clock.pendingTimers, 1);
  clock.advance(95);
  assert.deepEqual(fired, [5, 100]);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("Deadlines: adds and removes in any order fire exactly the pending ones, earliest first", () => {
  const clock = new FakeEventClock();
  const deadlines = new Deadlines(clock);
  const fired: number[] = [];
  const all = Array.from({ length: 200 }, (_, i) => deadline(1 + ((i * 37) % 101), fired));
  const model = new Set<Deadline>();
  let x = 12345;
  const random = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
  for (let step = 0; step < 2_000; step++) {
    const d = all[Math.floor(random() * all.length)]!;
    if (random() < 0.55) {
      deadlines.add(d);
      model.add(d);
    } else {
      deadlines.remove(d);
      model.delete(d);
    }
    assert.equal(deadlines.size, model.size);
  }
  assert.equal(clock.pendingTimers, model.size > 0 ? 1 : 0);
  const expected = [...model].map((d) => d.endsAt).sort((a, b) => a - b);
  clock.advance(200);
  assert.deepEqual(fired, expected, "each once, in time order");
  assert.equal(deadlines.size, 0);
  assert.equal(clock.pendingTimers, 0);
  assert.ok(all.every((d) => d.slot === -1), "no deadline keeps a slot");
});

Deno.test("Deadlines: adding a pending deadline again changes nothing; a removed one can come back", () => {
  const clock = new FakeEventClock();
  const deadlines = new Deadlines(clock);
  const fired: number[] = [];
  const a = deadline(10, fired);
  deadlines.add(a);
  deadlines.add(a);
  assert.equal(deadlines.size, 1);
  deadlines.remove(a);
  deadlines.add(a);
  clock.advance(10);
  assert.deepEqual(fired, [10]);
  deadlines.add(a);
  deadlines.remove(deadline(10, fired));
  assert.equal(deadlines.size, 1, "removing a deadline the set does not have does nothing");
  clock.advance(0);
  assert.deepEqual(fired, [10, 10]);
});

Deno.test("Deadlines that keep their timer: one timer across empty moments, stopped when told", () => {
  const clock = new FakeEventClock();
  const deadlines = new Deadlines(clock, { keepTimer: true });
  const fired: number[] = [];
  let armed = 0;
  const setTimer = clock.setTimer.bind(clock);
  clock.setTimer = (ms, fn) => {
    armed++;
    return setTimer(ms, fn);
  };
  // Requests come and go, each removing its deadline before the next adds its own.
  for (let i = 0; i < 50; i++) {
    const d = deadline(clock.now() + 100, fired);
    deadlines.add(d);
    clock.advance(1);
    deadlines.remove(d);
  }
  assert.equal(armed, 1, "the timer set for the first stays for the rest");
  assert.equal(clock.pendingTimers, 1, "kept while empty");
  // Due with nothing pending: it rings and re-arms for the earliest still pending.
  const late = deadline(clock.now() + 100, fired);
  deadlines.add(late);
  clock.advance(50);
  assert.deepEqual(fired, []);
  assert.equal(clock.pendingTimers, 1, "re-armed for the one pending");
  clock.advance(50);
  assert.deepEqual(fired, [late.endsAt], "a pending deadline still fires at its time");
  assert.equal(clock.pendingTimers, 0, "nothing pending after it rang: it stopped");
  // Stopping to keep it: a pending deadline still fires; once empty, no timer.
  const next = deadline(clock.now() + 10, fired);
  deadlines.add(next);
  deadlines.stopKeepingTimer();
  assert.equal(clock.pendingTimers, 1);
  clock.advance(10);
  assert.deepEqual(fired, [late.endsAt, next.endsAt]);
  const last = deadline(clock.now() + 10, fired);
  deadlines.add(last);
  deadlines.remove(last);
  assert.equal(clock.pendingTimers, 0, "empty: no timer kept any more");
});
