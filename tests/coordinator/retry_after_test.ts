import assert from "node:assert/strict";
import { DroppedRequestsTracker } from "../../src/coordinator/retry_after.ts";

/** Records `count` drops at second `s` and returns the Retry-After read after them. */
function drop(t: DroppedRequestsTracker, s: number, count: number, pl = "pl"): number {
  for (let i = 0; i < count; i++) t.recordDroppedRequest(pl, s);
  return t.retryAfter(pl);
}

Deno.test("DroppedRequestsTracker follows the golden sequence (docs/semantics.md §7.4)", () => {
  const t = new DroppedRequestsTracker();
  const seen: string[] = [];
  for (let s = 100; s <= 109; s++) seen.push(`${s}:${drop(t, s, 10)}`);
  for (let s = 110; s <= 138; s += 2) seen.push(`${s}:${drop(t, s, 1)}`);
  assert.deepEqual(seen, [
    "100:1",
    "101:2",
    "102:2",
    "103:4",
    "104:4",
    "105:4",
    "106:4",
    "107:8",
    "108:8",
    "109:8",
    "110:8",
    "112:8",
    "114:8",
    "116:8",
    "118:7",
    "120:6",
    "122:5",
    "124:4",
    "126:3",
    "128:2",
    "130:1",
    "132:1",
    "134:1",
    "136:1",
    "138:1",
  ]);
});

Deno.test("DroppedRequestsTracker: 1 for a level that never dropped; levels are independent", () => {
  const t = new DroppedRequestsTracker();
  assert.equal(t.retryAfter("never"), 1);
  drop(t, 100, 10, "a");
  assert.equal(drop(t, 101, 10, "a"), 2);
  assert.equal(drop(t, 101, 1, "b"), 1);
  assert.equal(t.retryAfter("a"), 2);
  assert.equal(t.retryAfter("never"), 1);
});

Deno.test("DroppedRequestsTracker changes only when a drop falls in a new second", () => {
  const t = new DroppedRequestsTracker();
  // Thousands of drops within one second do not raise it: the first call
  // compares against the appended (0, 0) entry, the rest only count.
  assert.equal(drop(t, 100, 5000), 1);
  assert.equal(drop(t, 101, 1), 2);
  assert.equal(drop(t, 101, 5000), 2);
  // Long quiet periods do not decay it; the next drop does, by one.
  assert.equal(t.retryAfter("pl"), 2);
  assert.equal(drop(t, 500, 1), 1);
});

Deno.test("DroppedRequestsTracker caps at 32 s and waits retryAfter seconds between increases", () => {
  const t = new DroppedRequestsTracker();
  const values: number[] = [];
  for (let s = 1000; s < 1040; s++) values.push(drop(t, s, 1000));
  assert.equal(Math.max(...values), 32);
  // Increases happen at 1001 (->2), 1003 (->4), 1007 (->8), 1015 (->16), 1031 (->32).
  const changes = values.flatMap((
    v,
    i,
  ) => (i > 0 && v !== values[i - 1] ? [`${1000 + i}:${v}`] : []));
  assert.deepEqual(changes, ["1001:2", "1003:4", "1007:8", "1015:16", "1031:32"]);
});

Deno.test("DroppedRequestsTracker after the wall clock stepped back counts only the seconds after the last one out of the window", () => {
  // Kubernetes' updateRetryAfterIfNeededLocked walks the history from the newest second back and
  // stops at the first one older than the window. Here the history holds 102 (3 drops), then 101
  // (the clock stepped back a second); at 103, 101 is out of the 1 s window, so 102's drops, though
  // within it, are not counted and Retry-After stays 1.
  const t = new DroppedRequestsTracker();
  assert.equal(drop(t, 102, 3), 1);
  assert.equal(drop(t, 101, 1), 1);
  assert.equal(drop(t, 103, 2), 1);
  // With time moving forward only, the same drops raise it.
  const forward = new DroppedRequestsTracker();
  drop(forward, 101, 1);
  drop(forward, 102, 3);
  assert.equal(drop(forward, 103, 2), 2);
});

Deno.test("DroppedRequestsTracker validates its arguments", () => {
  const t = new DroppedRequestsTracker();
  assert.throws(() => t.recordDroppedRequest("pl", 1.5), {
    name: "RangeError",
    message: "Cannot record a dropped request: unixSeconds must be an integer, got 1.5",
  });
  assert.throws(() => t.recordDroppedRequest(7 as unknown as string, 1), {
    name: "TypeError",
    message: "Cannot record a dropped request: priorityLevel must be a string, got number",
  });
});
