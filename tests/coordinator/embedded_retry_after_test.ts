/**
 * EmbeddedCoordinator Retry-After: real rejections drive each level's drop
 * tracker (`docs/semantics.md` §7.4).
 */

import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Rejected, SeatRequest } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";

// ServerCL 2: catch-all (Reject) and q (one queue of 1) get one seat each.
const config = () =>
  configOf(2, [
    limited("catch-all"),
    limited("q", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } }),
  ]);

const CA: SeatRequest = { priorityLevel: "catch-all", flowSchema: "catch-all" };
const Q: SeatRequest = { priorityLevel: "q", flowSchema: "fs" };

async function rejection(c: EmbeddedCoordinator, request: SeatRequest): Promise<Rejected> {
  const a = await c.acquire(request);
  assert.ok(!a.admitted, "rejected");
  return a;
}

Deno.test("EmbeddedCoordinator Retry-After follows the golden sequence (docs/semantics.md §7.4)", async () => {
  // The fake clock's wall time is its time: second 100 starts at 100,000 ms.
  const clock = new FakeEventClock(100_000);
  using c = new EmbeddedCoordinator(config(), { clock });
  const held = await c.acquire(CA);
  assert.ok(held.admitted);

  const seconds: [number, number, number][] = []; // [second, drops, expected Retry-After]
  const burst = [1, 2, 2, 4, 4, 4, 4, 8, 8, 8];
  burst.forEach((r, i) => seconds.push([100 + i, 10, r]));
  const sparse = [8, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1, 1, 1, 1, 1];
  sparse.forEach((r, i) => seconds.push([110 + 2 * i, 1, r]));

  const got: string[] = [];
  const want: string[] = [];
  for (const [second, drops, expected] of seconds) {
    clock.advanceTo(second * 1000 + 250);
    const values = new Set<number>();
    for (let i = 0; i < drops; i++) {
      const r = await rejection(c, CA);
      assert.equal(r.reason, "concurrency-limit");
      values.add(r.retryAfterSeconds);
    }
    got.push(`${second}:${[...values].join(",")}`);
    want.push(`${second}:${expected}`);
  }
  assert.deepEqual(got, want);
  // Each level has its own tracker; unknown levels are not tracked.
  assert.equal((await rejection(c, { ...Q, priorityLevel: "nope" })).retryAfterSeconds, 1);
  const q1 = await c.acquire(Q);
  assert.ok(q1.admitted);
  const w = c.acquire({ ...Q, waitLimitMs: 100 });
  const full = await rejection(c, Q);
  assert.deepEqual(full, { admitted: false, reason: "queue-full", retryAfterSeconds: 1 });
  clock.advance(100);
  assert.deepEqual(await w, { admitted: false, reason: "time-out", retryAfterSeconds: 1 });
  q1.seat.release();
  held.seat.release();
});

Deno.test("EmbeddedCoordinator Retry-After counts queue-full and time-out drops", async () => {
  const clock = new FakeEventClock(200_000);
  using c = new EmbeddedCoordinator(config(), { clock });
  const held = await c.acquire(Q);
  assert.ok(held.admitted);
  const waiter = c.acquire({ ...Q, waitLimitMs: 1_500 });
  for (let i = 0; i < 10; i++) {
    assert.deepEqual(await rejection(c, Q), {
      admitted: false,
      reason: "queue-full",
      retryAfterSeconds: 1,
    });
  }
  // The time-out falls in second 201: the 10 drops of second 200 (>= 3 · 1) double it.
  clock.advance(1_500);
  assert.deepEqual(await waiter, { admitted: false, reason: "time-out", retryAfterSeconds: 2 });
  // The catch-all level's tracker is untouched.
  const ca = await c.acquire(CA);
  assert.ok(ca.admitted);
  assert.equal((await rejection(c, CA)).retryAfterSeconds, 1);
  ca.seat.release();
  held.seat.release();
});
