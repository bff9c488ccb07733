import assert from "node:assert/strict";
import fc from "fast-check";
import { Candidates } from "../../src/classify/_candidates.ts";

const SCHEMAS = 100;

/** Sorted, repeat-free lists of positions below `SCHEMAS`. */
const list = fc.uniqueArray(fc.integer({ min: 0, max: SCHEMAS - 1 }), { maxLength: 20 })
  .map((l) => Int32Array.from(l.sort((a, b) => a - b)));

function walk(c: Candidates, stopAfter = Infinity): number[] {
  const out: number[] = [];
  c.start();
  for (let p = c.next(); p !== -1 && out.length < stopAfter; p = c.next()) out.push(p);
  if (out.length < stopAfter) assert.equal(c.next(), -1, "stays exhausted");
  return out;
}

Deno.test("candidates walk the union of their lists in ascending order, once each", () => {
  const c = new Candidates(SCHEMAS);
  fc.assert(
    fc.property(
      // Up to 14 lists (past 8 the walk uses the bitset), walks abandoned part-way in between.
      fc.array(fc.tuple(fc.array(list, { maxLength: 14 }), fc.nat(30)), {
        minLength: 1,
        maxLength: 6,
      }),
      (walks) => {
        for (const [lists, stopAfter] of walks) {
          c.reset();
          for (const l of lists) c.add(l);
          c.add(undefined);
          const union = [...new Set(lists.flatMap((l) => [...l]))].sort((a, b) => a - b);
          assert.equal(c.total, lists.reduce((n, l) => n + l.length, 0));
          assert.deepEqual(walk(c, stopAfter), union.slice(0, stopAfter));
        }
        // A walk abandoned early leaves nothing behind for the next.
        c.reset();
        c.add(Int32Array.of(5));
        assert.deepEqual(walk(c), [5]);
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("candidates: bit 31 of a word and the last position are walked", () => {
  const c = new Candidates(64);
  const lists = [31, 32, 63, 0, 1, 2, 3, 4, 5, 6].map((p) => Int32Array.of(p));
  for (const l of lists) c.add(l);
  assert.deepEqual(walk(c), [0, 1, 2, 3, 4, 5, 6, 31, 32, 63]);
});
