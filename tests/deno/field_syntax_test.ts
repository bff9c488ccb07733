/**
 * The character-set checks of `src/deno/_field_syntax.ts` (a table and a
 * loop) against the regular expressions they stand for (RFC 9110 §5.6.2,
 * RFC 5234's VCHAR and DIGIT), on vectors and on any string.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  charSet,
  DIGIT,
  isDigits,
  isToken,
  onlyOf,
  TOKEN,
  VCHAR,
} from "../../src/deno/_field_syntax.ts";

Deno.test("isToken and isDigits: vectors", () => {
  for (const token of ["GET", "X-Remote-User", "!#$%&'*+-.^_`|~09azAZ"]) {
    assert.equal(isToken(token), true, token);
  }
  for (const no of ["", "GET ", "a:b", "a\tb", "é", "a\u0100", "(", "a,b", "\x7f"]) {
    assert.equal(isToken(no), false, JSON.stringify(no));
  }
  assert.equal(isDigits("0123456789"), true);
  for (const no of ["", "1 ", "-1", "0x1", "1e3", "١"]) assert.equal(isDigits(no), false, no);
});

Deno.test("onlyOf: from an offset, true for nothing left", () => {
  assert.equal(onlyOf(VCHAR, "/a?b=c", 1), true);
  assert.equal(onlyOf(VCHAR, "/a b", 1), false);
  assert.equal(onlyOf(VCHAR, "/", 1), true);
  assert.equal(onlyOf(DIGIT, ""), true);
});

/** Strings of ASCII and a few characters beyond it, where the sets' edges are. */
const text = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
    fc.constantFrom("\x80", "\xff", "\u0100", "\u2028", "\ud800"),
  ),
  maxLength: 12,
});

Deno.test("the tables agree with the regular expressions on any string", () => {
  const sets: [Uint8Array, RegExp][] = [
    [VCHAR, /^[\x21-\x7e]*$/],
    [DIGIT, /^[0-9]*$/],
    [charSet(/^[\x21\x22\x24-\x7e]$/), /^[\x21\x22\x24-\x7e]*$/],
  ];
  fc.assert(
    fc.property(text, (s) => {
      assert.equal(isToken(s), TOKEN.test(s));
      assert.equal(isDigits(s), /^[0-9]+$/.test(s));
      for (const [set, all] of sets) assert.equal(onlyOf(set, s), all.test(s));
    }),
    { numRuns: 5000 },
  );
});
