import assert from "node:assert/strict";
import { kubernetesEstimator } from "../../src/estimate/kubernetes.ts";
import {
  OBJECT_COUNT_PRUNE_INTERVAL_MS,
  OBJECT_COUNT_STALE_AFTER_MS,
  objectCountKey,
  ObjectCountTracker,
} from "../../src/estimate/object_count_tracker.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { input } from "./_helpers.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

Deno.test("objectCountKey is the resource in the core group, else resource.group", () => {
  assert.equal(objectCountKey("", "pods"), "pods");
  assert.equal(objectCountKey("apps", "deployments"), "deployments.apps");
  assert.equal(objectCountKey("foo.bar", "events"), "events.foo.bar");
  assert.equal(OBJECT_COUNT_STALE_AFTER_MS, 3 * MINUTE);
  assert.equal(OBJECT_COUNT_PRUNE_INTERVAL_MS, HOUR);
});

Deno.test("ObjectCountTracker answers the last stats set, undefined for untracked resources", () => {
  const counts = new ObjectCountTracker(new FakeEventClock());
  assert.equal(counts.get("pods"), undefined);
  counts.set("pods", { count: 10, avgSizeBytes: 2_000 });
  counts.set("pods", { count: 12 });
  counts.set("deployments.apps", { count: 3, avgSizeBytes: 500 });
  assert.deepEqual(counts.get("pods"), { count: 12 });
  assert.deepEqual(counts.get("deployments.apps"), { count: 3, avgSizeBytes: 500 });
  assert.equal(counts.get("deployments"), undefined);
  assert.equal(counts.size, 2);
});

Deno.test("ObjectCountTracker reports a count stale once it is more than 3 minutes old", () => {
  const clock = new FakeEventClock(1_000);
  const counts = new ObjectCountTracker(clock);
  counts.set("pods", { count: 5 });
  clock.advance(3 * MINUTE);
  assert.deepEqual(counts.get("pods"), { count: 5 });
  clock.advance(1);
  assert.equal(counts.get("pods"), "stale");
  counts.set("pods", { count: 6 });
  assert.deepEqual(counts.get("pods"), { count: 6 });
});

Deno.test("ObjectCountTracker ignores a negative count (a failed count) and lets the old one age", () => {
  const clock = new FakeEventClock();
  const counts = new ObjectCountTracker(clock);
  counts.set("pods", { count: 5 });
  clock.advance(2 * MINUTE);
  counts.set("pods", { count: -1 });
  assert.deepEqual(counts.get("pods"), { count: 5 });
  clock.advance(2 * MINUTE);
  assert.equal(counts.get("pods"), "stale");
  counts.set("secrets", { count: -1 });
  assert.equal(counts.get("secrets"), undefined);
});

Deno.test("ObjectCountTracker prunes, every hour, counts not updated for an hour", () => {
  const clock = new FakeEventClock();
  const counts = new ObjectCountTracker(clock);
  counts.set("old", { count: 1 }); // t = 0
  clock.advanceTo(10 * MINUTE);
  counts.set("newer", { count: 2 }); // t = 10 min
  // At the first prune (t = 1 h) "old" is exactly an hour old: Kubernetes keeps only counts
  // updated strictly after now - 1 h, so it goes; "newer" stays, stale, until the next prune.
  clock.advanceTo(HOUR - 1);
  assert.equal(counts.get("old"), "stale");
  clock.advanceTo(HOUR);
  assert.equal(counts.get("old"), undefined);
  assert.equal(counts.get("newer"), "stale");
  clock.advanceTo(2 * HOUR - 1);
  assert.equal(counts.get("newer"), "stale");
  assert.equal(counts.size, 1);
  clock.advanceTo(2 * HOUR);
  assert.equal(counts.get("newer"), undefined);
  assert.equal(counts.size, 0);
});

Deno.test("ObjectCountTracker prunes as of the last due hour, however late it is asked", () => {
  const clock = new FakeEventClock();
  const counts = new ObjectCountTracker(clock);
  clock.advanceTo(90 * MINUTE);
  counts.set("a", { count: 1 }); // t = 1.5 h; the prune at 1 h found nothing
  // Next asked at 2.7 h: the prune due at 2 h kept "a" (0.5 h old then), and none is due since.
  clock.advanceTo(2.7 * HOUR);
  assert.equal(counts.get("a"), "stale");
  // Asked at 5.2 h: the prunes due at 3, 4 and 5 h ran; "a" went at 3 h.
  clock.advanceTo(5.2 * HOUR);
  counts.set("b", { count: 2 });
  assert.equal(counts.get("a"), undefined);
  assert.deepEqual(counts.get("b"), { count: 2 });
  // "b" (set at 5.2 h) survives the prune at 6 h and goes at 7 h.
  clock.advanceTo(6.5 * HOUR);
  assert.equal(counts.get("b"), "stale");
  clock.advanceTo(7 * HOUR);
  assert.equal(counts.get("b"), undefined);
});

Deno.test("ObjectCountTracker holds no timer", () => {
  const clock = new FakeEventClock();
  const counts = new ObjectCountTracker(clock);
  counts.set("pods", { count: 1 });
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("ObjectCountTracker drives the list estimator: fresh, stale, then pruned", () => {
  const clock = new FakeEventClock();
  const objectCounts = new ObjectCountTracker(clock);
  const estimate = kubernetesEstimator({ objectCounts });
  const list = () => estimate(input("GET", "/apis/apps/v1/deployments?resourceVersion=0", 0));
  assert.equal(list().initialSeats, 1); // not tracked
  objectCounts.set("deployments.apps", { count: 50, avgSizeBytes: 10_000 });
  assert.equal(list().initialSeats, 5); // 500 kB from the cache
  clock.advance(4 * MINUTE);
  assert.equal(list().initialSeats, 10); // stale: 1e9 objects, capped by the cache at 1 MB
  clock.advance(HOUR);
  assert.equal(list().initialSeats, 1); // pruned: not tracked any more
});

Deno.test("ObjectCountTracker rejects bad arguments with the received value", () => {
  assert.throws(
    () => new ObjectCountTracker({} as never),
    new TypeError(
      "Cannot create an ObjectCountTracker: clock must be a Clock, got [object Object]",
    ),
  );
  const counts = new ObjectCountTracker(new FakeEventClock());
  assert.throws(
    () => counts.set(3 as never, { count: 1 }),
    new TypeError("Cannot set an object count: groupResource must be a string, got 3"),
  );
  assert.throws(
    () => counts.set("pods", { count: 1.5 }),
    new RangeError('Cannot set an object count for "pods": count must be an integer, got 1.5'),
  );
  assert.throws(
    () => counts.set("pods", { count: NaN }),
    new RangeError('Cannot set an object count for "pods": count must be an integer, got NaN'),
  );
  assert.throws(
    () => counts.set("pods", { count: 1, avgSizeBytes: Infinity }),
    new RangeError(
      'Cannot set an object count for "pods": avgSizeBytes must be a finite number, got Infinity',
    ),
  );
  assert.equal(counts.size, 0);
});
