import assert from "node:assert/strict";
import { LeaseQueue } from "../../src/server/_lease_queue.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";

Deno.test("many leases share one timer and expire in grant order, at their term, not before", () => {
  const clock = new FakeEventClock();
  const q = new LeaseQueue(clock, 100);
  const expired: string[] = [];
  q.add(() => expired.push(`a@${clock.now()}`));
  clock.advance(10);
  const b = q.add(() => expired.push(`b@${clock.now()}`));
  clock.advance(10);
  q.add(() => expired.push(`c@${clock.now()}`));
  assert.equal(clock.pendingTimers, 1);
  b.cancel();
  b.cancel(); // idempotent
  clock.advance(79);
  assert.equal(expired.length, 0);
  clock.advance(1);
  assert.deepEqual(expired, ["a@100"]);
  clock.advance(100);
  assert.deepEqual(expired, ["a@100", "c@120"], "a cancelled lease never expires");
  assert.equal(clock.pendingTimers, 0, "no timer once nothing is leased");
});

Deno.test("a renewal is a new lease at the back; close drops everything", () => {
  const clock = new FakeEventClock();
  const q = new LeaseQueue(clock, 50);
  const expired: number[] = [];
  let lease = q.add(() => expired.push(1));
  for (let i = 0; i < 5; i++) {
    clock.advance(30);
    lease.cancel();
    lease = q.add(() => expired.push(1));
  }
  assert.equal(expired.length, 0, "renewed before each term ended");
  for (let i = 0; i < 3000; i++) q.add(() => expired.push(2)).cancel(); // compaction keeps up
  clock.advance(50);
  assert.deepEqual(expired, [1]);
  q.add(() => expired.push(3));
  q.close();
  clock.advance(1000);
  assert.deepEqual(expired, [1]);
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("short-held seats do not pile up between two firings of the lease timer", () => {
  const clock = new FakeEventClock();
  const q = new LeaseQueue(clock, 30_000);
  const live = q.add(() => {}); // the head, armed for 30 s
  for (let i = 0; i < 100_000; i++) q.add(() => {}).cancel();
  assert.ok(q.kept < 3_000, `kept ${q.kept}`);
  live.cancel();
  assert.equal(q.nextDue(), null);
  assert.equal(q.kept, 0);
  q.close();
});
