/**
 * The "Errors" rule of docs/library.md, across the package: the same mistake throws
 * the same class wherever it is made. A number out of range is a
 * RangeError; the same check given something that is not a number, a
 * TypeError with the same message.
 */

import assert from "node:assert/strict";
import {
  bootstrapConfiguration,
  effectiveConfiguration,
  EmbeddedCoordinator,
  FakeEventClock,
  ObjectCountTracker,
  resolveConfiguration,
} from "../../mod.ts";
import { QueueSet } from "../../src/fairqueuing/mod.ts";
import { Coalescer } from "../../src/protocol/mod.ts";
import { computeLevelLimits } from "../../src/config/mod.ts";
import { DroppedRequestsTracker } from "../../src/coordinator/mod.ts";
import { queueWaitLimitMs } from "../../src/coordinator/seat_request.ts";
import { SessionHost } from "../../src/server/sessions.ts";
import { apf } from "../../src/hono/mod.ts";
import { fairAlloc } from "../../src/sim/mod.ts";
import { createDenoIO } from "../../src/cli/mod.ts";
import { noDelayWebSocket } from "../../src/deno/mod.ts";
import { checkNumber, errorClassOf, valueError } from "../../src/_shared/errors.ts";

Deno.test("valueError and checkNumber: RangeError for a number or a bigint, TypeError for the rest", () => {
  assert.equal(errorClassOf(-1), "RangeError");
  assert.equal(errorClassOf(NaN), "RangeError");
  assert.equal(errorClassOf(-1n), "RangeError");
  for (const v of ["1", null, undefined, {}, [1], true]) assert.equal(errorClassOf(v), "TypeError");
  assert.ok(valueError(1.5, "m") instanceof RangeError);
  assert.ok(valueError("1", "m") instanceof TypeError);
  const positive = (v: unknown) => checkNumber(v, (n) => n > 0, () => `must be > 0, got ${v}`);
  positive(1);
  assert.throws(() => positive(0), { name: "RangeError", message: "must be > 0, got 0" });
  assert.throws(() => positive(NaN), { name: "RangeError", message: "must be > 0, got NaN" });
  assert.throws(() => positive("1"), { name: "TypeError", message: "must be > 0, got 1" });
});

/** Each check with a bad number of the right type and a value of the wrong type. */
const checks: [string, (bad: unknown) => unknown, number][] = [
  ["Coalescer maxBatch", (v) => new Coalescer(() => {}, v as number), 0],
  ["FakeEventClock start", (v) => new FakeEventClock(v as number), Infinity],
  ["FakeEventClock.advance", (v) => new FakeEventClock().advance(v as number), -1],
  ["computeLevelLimits", (v) => computeLevelLimits([], v as number), 0],
  [
    "resolveConfiguration",
    (v) => resolveConfiguration(undefined, { serverConcurrencyLimit: v as number }),
    0,
  ],
  ["queueWaitLimitMs", (v) => queueWaitLimitMs(v as number), -1],
  [
    "recordDroppedRequest",
    (v) => new DroppedRequestsTracker().recordDroppedRequest("a", v as number),
    1.5,
  ],
  [
    "ObjectCountTracker.set",
    (v) => new ObjectCountTracker(new FakeEventClock()).set("pods", { count: v as number }),
    1.5,
  ],
  [
    "QueueSet concurrencyLimit",
    (v) => new QueueSet({ type: "Limited", concurrencyLimit: v as number, queuing: null }),
    -1,
  ],
  [
    "QueueSet queuing.queues",
    (v) =>
      new QueueSet({
        type: "Limited",
        concurrencyLimit: 1,
        queuing: { queues: v as number, handSize: 1, queueLengthLimit: 1 },
      }),
    0,
  ],
  [
    "QueueSet.startRequest work",
    (v) =>
      new QueueSet({ type: "Limited", concurrencyLimit: 1, queuing: null }).startRequest({
        work: { initialSeats: v as number },
      }),
    0,
  ],
  [
    "QueueSet.startRequest waitLimitMs",
    (v) =>
      new QueueSet({ type: "Limited", concurrencyLimit: 1, queuing: null }).startRequest({
        waitLimitMs: v as number,
      }),
    -1,
  ],
  [
    "EmbeddedCoordinator.setCurrentLimits",
    (v) => {
      using c = new EmbeddedCoordinator(
        effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: 10 }),
        { borrowing: "external" },
      );
      c.setCurrentLimits({ exempt: v as number });
    },
    -1,
  ],
  ["SessionHost leaseMs", (v) => new SessionHost(null as never, { leaseMs: v as number }), 0],
  ["fairAlloc capacity", (v) => fairAlloc([1], v as number), -1],
  ["apf() requestTimeoutMs", (v) => apf({ requestTimeoutMs: v as number }), 0],
  ["createDenoIO maxInputBytes", (v) => createDenoIO({ maxInputBytes: v as number }), -1],
  [
    "noDelayWebSocket maxMessageBytes",
    (v) => noDelayWebSocket({ maxMessageBytes: v as number }),
    0,
  ],
];

for (const [what, call, outOfRange] of checks) {
  Deno.test(`${what}: a number out of range is a RangeError, a string a TypeError`, () => {
    assert.throws(() => call(outOfRange), RangeError);
    assert.throws(() => call("12"), TypeError);
  });
}
