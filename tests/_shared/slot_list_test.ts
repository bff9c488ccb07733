import assert from "node:assert/strict";
import fc from "fast-check";
import { addSlotted, removeSlotted } from "../../src/_shared/slot_list.ts";

Deno.test("property: a slot list holds what a set would, each item knowing its index", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.nat({ max: 7 })), { maxLength: 80 }),
      (ops) => {
        const items = Array.from({ length: 8 }, () => ({ slot: -1 }));
        const list: { slot: number }[] = [];
        const model = new Set<{ slot: number }>();
        for (const [add, k] of ops) {
          const item = items[k]!;
          if (add) {
            assert.equal(addSlotted(list, item), !model.has(item));
            model.add(item);
          } else {
            assert.equal(removeSlotted(list, item), model.has(item));
            model.delete(item);
          }
          assert.deepEqual(new Set(list), model);
          assert.equal(list.length, model.size);
          list.forEach((held, i) => assert.equal(held.slot, i));
          for (const other of items) if (!model.has(other)) assert.equal(other.slot, -1);
        }
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("an item whose slot points at another item's place is not taken for it", () => {
  const a = { slot: -1 }, b = { slot: -1 };
  const list: { slot: number }[] = [];
  addSlotted(list, a);
  b.slot = 0; // stale: b was never added
  assert.equal(removeSlotted(list, b), false);
  assert.deepEqual(list, [a]);
  assert.equal(addSlotted(list, b), true);
  assert.deepEqual(list, [a, b]);
  assert.equal(b.slot, 1);
});
