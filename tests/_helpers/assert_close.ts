/** Comparing floating-point results within a relative tolerance. */

import assert from "node:assert/strict";

/**
 * Asserts `actual` is within `tolerance` of `expected`, relative to
 * `expected` when it exceeds 1 in magnitude (absolute below); `what` opens
 * the failure message.
 */
export function assertClose(actual: number, expected: number, tolerance = 1e-9, what = ""): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)),
    `${what}${what === "" ? "" : " "}expected ${expected}, got ${actual}`,
  );
}
