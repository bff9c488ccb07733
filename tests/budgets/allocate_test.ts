import assert from "node:assert/strict";
import fc from "fast-check";
import { allocateBudgets, headroom, maxMinShares } from "../../src/budgets/allocate.ts";

Deno.test("maxMinShares: water-filling in whole seats", () => {
  assert.deepEqual(maxMinShares(10, [1, 100]), [1, 9], "the mouse gets all it asks");
  assert.deepEqual(maxMinShares(10, [100, 100]), [5, 5]);
  assert.deepEqual(maxMinShares(10, [100, 100, 100]), [4, 3, 3], "the extra seat to the first");
  assert.deepEqual(maxMinShares(10, [2, 3]), [2, 3], "less demanded than there is");
  assert.deepEqual(maxMinShares(0, [2, 3]), [0, 0]);
  assert.deepEqual(maxMinShares(5, []), []);
});

Deno.test("maxMinShares: the sum, the caps, and nobody below an equal split of what is left", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1000 }),
      fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 12 }),
      (total, caps) => {
        const shares = maxMinShares(total, caps);
        const sum = shares.reduce((a, b) => a + b, 0);
        assert.equal(sum, Math.min(total, caps.reduce((a, b) => a + b, 0)));
        shares.forEach((s, i) => {
          assert.ok(Number.isInteger(s) && s >= 0 && s <= caps[i]!);
          // Max-min: a holder below its cap got at least every other holder's share minus one.
          if (s < caps[i]!) { for (const other of shares) assert.ok(s >= other - 1); }
        });
      },
    ),
  );
});

Deno.test("allocateBudgets: demand first, then headroom; the rest stays free; order does not matter", () => {
  const a = allocateBudgets(20, [{ id: "b", demand: 4 }, { id: "a", demand: 8 }, {
    id: "c",
    demand: 0,
  }]);
  // Demands 8 + 4 fit; headroom 2 and 1; the idle holder gets nothing; 5 seats stay free.
  assert.deepEqual([...a.entries()].sort(), [["a", 10], ["b", 5], ["c", 0]]);
  const b = allocateBudgets(20, [{ id: "c", demand: 0 }, { id: "a", demand: 8 }, {
    id: "b",
    demand: 4,
  }]);
  assert.deepEqual([...b.entries()].sort(), [...a.entries()].sort());
  // Saturated: max-min over demands, nothing left for headroom.
  const c = allocateBudgets(10, [{ id: "elephant", demand: 100 }, { id: "mouse", demand: 2 }]);
  assert.deepEqual([...c.entries()].sort(), [["elephant", 8], ["mouse", 2]]);
  assert.equal(headroom(0), 0);
  assert.equal(headroom(1), 1);
  assert.equal(headroom(8), 2);
});
