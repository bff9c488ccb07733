import assert from "node:assert/strict";
import fc from "fast-check";
import { isPlainDecisionsMessage, isPlainOpsMessage } from "../../src/protocol/fast_check.ts";
import {
  decodeClientMessage,
  decodeClientMessageBySchema,
  decodeServerMessage,
  decodeServerMessageBySchema,
  MAX_BATCH,
} from "../../src/protocol/wire.ts";

// Values that are sometimes right and often subtly wrong for a field.
const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32, 1_000_000, 1_000_001, 1.5, -0.5, 2 ** 53),
  fc.string({ maxLength: 3 }),
  fc.constantFrom("x".repeat(1024), "x".repeat(1025), "x".repeat(8193)),
  fc.constant({}),
  fc.constant([]),
);
const maybe = <T>(a: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: a, weight: 12 }, { arbitrary: anyValue, weight: 1 });

const details = fc.record({
  user: maybe(fc.string()),
  verb: maybe(fc.string()),
  path: maybe(fc.string()),
  namespace: maybe(fc.string()),
  name: maybe(fc.string()),
  apiGroup: maybe(fc.string()),
  apiVersion: maybe(fc.string()),
  resource: maybe(fc.string()),
  subresource: maybe(fc.string()),
}, { requiredKeys: [] });

const request = fc.record({
  priorityLevel: maybe(fc.string()),
  flowSchema: maybe(fc.string()),
  flowHash: maybe(fc.record({ hi: maybe(fc.nat()), lo: maybe(fc.nat()) }, { requiredKeys: [] })),
  distinguisher: maybe(fc.string()),
  work: maybe(fc.record({
    initialSeats: maybe(fc.integer({ min: 0, max: 3 })),
    finalSeats: maybe(fc.integer({ min: -1, max: 3 })),
    additionalLatencyMs: maybe(fc.double({ min: -1, max: 10, noNaN: true })),
  }, { requiredKeys: [] })),
  waitLimitMs: maybe(fc.double({ min: -1, max: 1e5, noNaN: true })),
  details: maybe(details),
  extra: fc.oneof({ arbitrary: fc.constant(undefined), weight: 12 }, {
    arbitrary: fc.string(),
    weight: 1,
  }),
}, { requiredKeys: [] });

const id = maybe(fc.nat());
const op = fc.oneof(
  fc.tuple(fc.constant("acquire"), id, request),
  fc.tuple(fc.constant("release"), id, maybe(fc.double({ min: 0, max: 100, noNaN: true }))),
  // Version 2's outcome, sometimes one that is none.
  fc.tuple(
    fc.constant("release"),
    id,
    maybe(fc.double({ min: 0, max: 100, noNaN: true })),
    maybe(fc.constantFrom("ok", "error", "rejected", "timeout", "overload")),
  ),
  fc.tuple(fc.constantFrom("cancel", "initialized", "renew", "launch"), id),
  fc.array(anyValue, { maxLength: 4 }),
).filter(() => true);
const message = fc.record({
  t: fc.constantFrom("ops", "ops", "ops", "hello"),
  ops: maybe(fc.array(op, { maxLength: 6 })),
  more: fc.oneof({ arbitrary: fc.constant(undefined), weight: 12 }, {
    arbitrary: fc.constant(1),
    weight: 1,
  }),
}, { requiredKeys: ["t"] });

Deno.test("the fast ops check is sound: whatever it accepts, the schema accepts identically, and every frame decodes as by the schema alone", () => {
  let accepted = 0;
  fc.assert(
    fc.property(message, (m) => {
      // What a frame can carry: JSON drops undefined.
      const value = JSON.parse(JSON.stringify(m));
      // With or without the fast path, every frame decodes the same way.
      assert.deepEqual(
        decodeClientMessage(JSON.stringify(value)),
        decodeClientMessageBySchema(JSON.stringify(value)),
      );
      if (isPlainOpsMessage(value, MAX_BATCH)) {
        accepted++;
        const frame = JSON.stringify(value);
        const viaSchema = decodeClientMessageBySchema(frame);
        assert.equal(viaSchema.ok, true, frame.slice(0, 300));
        assert.deepEqual(decodeClientMessage(frame), viaSchema);
      }
    }),
    { seed: 20261123, numRuns: 3000 },
  );
  assert.ok(accepted > 100, `only ${accepted} messages took the fast path`);
});

const decision = fc.oneof(
  fc.tuple(id, fc.constant("admitted"), maybe(fc.double({ min: 0, max: 100, noNaN: true }))),
  fc.tuple(
    id,
    fc.constant("rejected"),
    maybe(fc.constantFrom("queue-full", "concurrency-limit", "time-out", "cancelled", "nope")),
    maybe(fc.integer({ min: 0, max: 3601 })),
  ),
  fc.tuple(id, fc.constantFrom("expired", "granted")),
  fc.tuple(id, fc.constant("expired"), anyValue),
  fc.array(anyValue, { maxLength: 5 }),
);
const decisions = fc.record({
  t: fc.constantFrom("decisions", "decisions", "decisions", "config"),
  d: maybe(fc.array(decision, { maxLength: 6 })),
  more: fc.oneof({ arbitrary: fc.constant(undefined), weight: 12 }, {
    arbitrary: fc.constant(1),
    weight: 1,
  }),
}, { requiredKeys: ["t"] });

Deno.test("the fast decisions check is sound: whatever it accepts, the schema accepts identically, and every frame decodes as by the schema alone", () => {
  let accepted = 0;
  fc.assert(
    fc.property(decisions, (m) => {
      const frame = JSON.stringify(m);
      assert.deepEqual(decodeServerMessage(frame), decodeServerMessageBySchema(frame));
      if (isPlainDecisionsMessage(JSON.parse(frame), MAX_BATCH)) {
        accepted++;
        assert.equal(decodeServerMessageBySchema(frame).ok, true, frame.slice(0, 300));
      }
    }),
    { seed: 20261126, numRuns: 3000 },
  );
  assert.ok(accepted > 100, `only ${accepted} messages took the fast path`);
});

Deno.test("the fast decisions check leaves the unusual to the schema", () => {
  const plain = { t: "decisions", d: [[1, "admitted", 0.5], [2, "rejected", "time-out", 1]] };
  assert.equal(isPlainDecisionsMessage(plain, MAX_BATCH), true);
  for (
    const odd of [
      { ...plain, extra: 1 },
      { t: "decisions", d: [] },
      { t: "decisions", d: [[1, "admitted", -1]] },
      { t: "decisions", d: [[1, "admitted", 1, 2]] },
      { t: "decisions", d: [[1.5, "expired"]] },
      { t: "decisions", d: [[1, "rejected", "time-out", 3601]] },
      { t: "decisions", d: [[1, "rejected", "toString", 1]] },
      { t: "decisions", d: [[1, "expired"], [2, "expired"]] },
    ]
  ) {
    const fast = isPlainDecisionsMessage(odd, 1);
    const frame = JSON.stringify(odd);
    if (fast) assert.equal(decodeServerMessageBySchema(frame).ok, true, frame);
    else assert.deepEqual(decodeServerMessage(frame), decodeServerMessageBySchema(frame));
  }
  assert.equal(isPlainDecisionsMessage(plain, 1), false, "over the batch limit");
});
