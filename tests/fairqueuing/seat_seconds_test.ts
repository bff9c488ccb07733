import assert from "node:assert/strict";
import { roundHalfAwayFromZero } from "../../src/_shared/numbers.ts";
import fc from "fast-check";
import {
  durationPerSeatMs,
  formatSeatSeconds,
  SEAT_SECONDS_SCALE,
  seatSecondsToFloat,
  seatsTimesDuration,
} from "../../src/_shared/seat_seconds.ts";

Deno.test("seatsTimesDuration counts 1e-8 seat-seconds (Kubernetes' SeatsTimesDuration values)", () => {
  assert.equal(SEAT_SECONDS_SCALE, 100_000_000);
  assert.equal(seatsTimesDuration(1, 3), 300_000);
  assert.equal(seatsTimesDuration(1, 1000), 100_000_000);
  assert.equal(seatsTimesDuration(2, 1), 200_000);
  assert.equal(seatsTimesDuration(0, 1000), 0);
  assert.equal(seatsTimesDuration(1.5, 2), 300_000);
});

Deno.test("formatSeatSeconds prints whole seat-seconds and eight decimals (as Kubernetes' SeatSeconds.String)", () => {
  assert.equal(formatSeatSeconds(seatsTimesDuration(1, 3)), "0.00300000ss");
  assert.equal(formatSeatSeconds(seatsTimesDuration(1, 1000)), "1.00000000ss");
  assert.equal(formatSeatSeconds(seatsTimesDuration(2, 1)), "0.00200000ss");
  assert.equal(formatSeatSeconds(0), "0.00000000ss");
  assert.equal(formatSeatSeconds(1), "0.00000001ss");
  assert.equal(formatSeatSeconds(1_234_567_890_123), "12345.67890123ss");
});

Deno.test("seatsTimesDuration of a negative duration is signed where Go's uint64 wraps", () => {
  // Go's SeatsTimesDuration gives uint64(-99700000) = 18446744073609851616; we keep -99700000.
  const negative = seatsTimesDuration(1, 3 - 1000);
  assert.equal(negative, -99_700_000);
  assert.equal(formatSeatSeconds(negative), "-0.99700000ss");
  // The identity the wrap-around gives Kubernetes holds here too.
  const G = 3;
  for (const x of [0, 1, 300_000, 123_456_789, 2 ** 40]) {
    assert.equal(x - seatsTimesDuration(1, G - 1000), x + 99_700_000);
  }
  assert.equal(seatsTimesDuration(1, 3) - seatsTimesDuration(1, 1000), -99_700_000);
  // Check the Go wrap-around value itself, to document the correspondence.
  assert.equal(BigInt.asUintN(64, BigInt(negative)), 18446744073609851616n);
});

Deno.test("durationPerSeatMs inverts seatsTimesDuration, truncating to whole nanoseconds", () => {
  assert.equal(durationPerSeatMs(1_500_000, 3), 5);
  assert.equal(durationPerSeatMs(seatsTimesDuration(4, 250), 4), 250);
  assert.equal(durationPerSeatMs(seatsTimesDuration(50, 70_000), 7), 500_000);
  // 1 unit (10 ns of one seat) over 3 seats is 3.33 ns, truncated to 3 ns.
  assert.equal(durationPerSeatMs(1, 3), 3e-6);
  // Truncation is toward zero for negative work, like Go's float→int64 conversion.
  assert.equal(durationPerSeatMs(-1, 3), -3e-6);
});

Deno.test("seatsTimesDuration gives TestRequestWork's total work (G=2s, 3/50 seats, 70s)", () => {
  const G = 2000;
  const initialWork = seatsTimesDuration(3, G);
  const finalWork = seatsTimesDuration(50, 70_000);
  assert.equal(initialWork, 600_000_000);
  assert.equal(finalWork, 350_000_000_000);
  assert.equal(initialWork + finalWork, 350_600_000_000);
  assert.equal(formatSeatSeconds(initialWork + finalWork), "3506.00000000ss");
});

Deno.test("total work sums separately rounded terms, as Kubernetes does", () => {
  // Each 5 ns term is half a unit and rounds up to 1; the 10 ns total would be exactly 1.
  const half = seatsTimesDuration(1, 0.000005);
  assert.equal(half + half, 2);
  assert.equal(seatsTimesDuration(1, 0.00001), 1);
});

Deno.test("seatsTimesDuration rounds the duration to whole nanoseconds before multiplying", () => {
  // 0.0000004 ms = 0.4 ns → 0 ns, so any number of seats does no work.
  assert.equal(seatsTimesDuration(1000, 0.0000004), 0);
  // 0.0000005 ms = 0.5 ns → 1 ns; 1000 seats × 1 ns / 10 = 100 units.
  assert.equal(seatsTimesDuration(1000, 0.0000005), 100);
  // 5 ns of one seat is half a unit: rounds away from zero both ways.
  assert.equal(seatsTimesDuration(1, 0.000005), 1);
  assert.equal(seatsTimesDuration(1, -0.000005), -1);
  assert.equal(seatsTimesDuration(1, 0.000015), 2);
  assert.equal(seatsTimesDuration(1, -0.000015), -2);
});

Deno.test("roundHalfAwayFromZero rounds halves away from zero like Go's math.Round", () => {
  assert.equal(roundHalfAwayFromZero(2.5), 3);
  assert.equal(roundHalfAwayFromZero(-2.5), -3);
  assert.equal(roundHalfAwayFromZero(0.5), 1);
  assert.equal(roundHalfAwayFromZero(-0.5), -1);
  assert.equal(roundHalfAwayFromZero(2.4), 2);
  assert.equal(roundHalfAwayFromZero(-2.4), -2);
  assert.equal(roundHalfAwayFromZero(-2.6), -3);
  assert.equal(roundHalfAwayFromZero(7), 7);
  assert.equal(roundHalfAwayFromZero(-7), -7);
  assert.equal(roundHalfAwayFromZero(2 ** 53), 2 ** 53);
  assert.equal(roundHalfAwayFromZero(-(2 ** 53)), -(2 ** 53));
});

Deno.test("roundHalfAwayFromZero is odd-symmetric and within half of its argument", () => {
  fc.assert(
    fc.property(fc.double({ min: -1e12, max: 1e12, noNaN: true }), (x) => {
      const r = roundHalfAwayFromZero(x);
      assert.ok(Number.isInteger(r), `${r} is not an integer`);
      assert.ok(Math.abs(r - x) <= 0.5, `${r} is not within 0.5 of ${x}`);
      assert.equal(roundHalfAwayFromZero(-x) + r, 0);
      if (Math.abs(x - Math.trunc(x)) === 0.5) assert.ok(Math.abs(r) > Math.abs(x));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("formatSeatSeconds formats negative values with a leading minus", () => {
  assert.equal(formatSeatSeconds(-1), "-0.00000001ss");
  assert.equal(formatSeatSeconds(-100_000_000), "-1.00000000ss");
  assert.equal(formatSeatSeconds(-250_000_001), "-2.50000001ss");
});

Deno.test("formatSeatSeconds formats large values exactly", () => {
  assert.equal(2 ** 53, 9_007_199_254_740_992);
  assert.equal(formatSeatSeconds(2 ** 53), "90071992.54740992ss");
  assert.equal(formatSeatSeconds(-(2 ** 53)), "-90071992.54740992ss");
  assert.equal(formatSeatSeconds(Number.MAX_SAFE_INTEGER), "90071992.54740991ss");
  assert.equal(formatSeatSeconds(1e20), "1000000000000.00000000ss");
});

Deno.test("formatSeatSeconds prints non-finite values as they are", () => {
  assert.equal(formatSeatSeconds(Infinity), "Infinityss");
  assert.equal(formatSeatSeconds(-Infinity), "-Infinityss");
  assert.equal(formatSeatSeconds(NaN), "NaNss");
});

Deno.test("formatSeatSeconds agrees with seatSecondsToFloat on safe integers", () => {
  assert.equal(seatSecondsToFloat(300_000), 0.003);
  assert.equal(seatSecondsToFloat(-99_700_000), -0.997);
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 40), max: 2 ** 40 }), (ss) => {
      const text = formatSeatSeconds(ss);
      assert.match(text, /^-?\d+\.\d{8}ss$/);
      assert.equal(Number(text.slice(0, -2)), seatSecondsToFloat(ss));
    }),
    { numRuns: 1000 },
  );
});
