import assert from "node:assert/strict";
import fc from "fast-check";
import { DispatchTree } from "../../src/fairqueuing/_dispatch_tree.ts";

/**
 * Kubernetes' `findDispatchQueueToBoundLocked` scan on plain finish times:
 * visit `(r+1) % n, (r+2) % n, …` once each and keep the first strict
 * minimum among queues with a waiting request (finite finish time).
 */
function referenceSelect(finishes: readonly number[], robinIndex: number): number {
  const n = finishes.length;
  let minFinish = Infinity;
  let minIndex = -1;
  let r = robinIndex;
  for (let k = 0; k < n; k++) {
    r = (r + 1) % n;
    const finish = finishes[r]!;
    if (Number.isFinite(finish) && finish < minFinish) {
      minFinish = finish;
      minIndex = r;
    }
  }
  return minIndex;
}

/** Sets every queue of `tree` to the given finish times. */
function treeOf(finishes: readonly number[]): DispatchTree {
  const tree = new DispatchTree(finishes.length);
  finishes.forEach((finish, i) => tree.set(i, finish));
  return tree;
}

Deno.test("DispatchTree starts with every queue empty", () => {
  for (const count of [1, 2, 3, 8, 70]) {
    const tree = new DispatchTree(count);
    assert.equal(tree.count, count);
    assert.equal(tree.min, Infinity);
    for (let i = 0; i < count; i++) assert.equal(tree.get(i), Infinity);
    for (let r = -1; r < count; r++) assert.equal(tree.select(r), -1);
  }
});

Deno.test("DispatchTree selects the queue with the least finish time whatever the robin index", () => {
  const tree = treeOf([7, 3, Infinity, 9, 4]);
  assert.equal(tree.min, 3);
  for (let r = -1; r < 5; r++) assert.equal(tree.select(r), 1, `robinIndex ${r}`);
});

Deno.test("DispatchTree gives ties to the first queue after robinIndex, cyclically", () => {
  const tree = treeOf([2, 5, 2, Infinity, 2, 9]);
  assert.equal(tree.select(-1), 0);
  assert.equal(tree.select(0), 2);
  assert.equal(tree.select(1), 2);
  assert.equal(tree.select(2), 4);
  assert.equal(tree.select(3), 4);
  // From the last tied queue the scan wraps around to the first.
  assert.equal(tree.select(4), 0);
  assert.equal(tree.select(5), 0);
});

Deno.test("DispatchTree gives the tie back to the same queue only after a full cycle", () => {
  // Round robin among 5 queues with equal finish times, as dispatchOne would.
  const tree = treeOf([1, 1, 1, 1, 1]);
  const order: number[] = [];
  let robinIndex = 3;
  for (let k = 0; k < 7; k++) {
    robinIndex = tree.select(robinIndex);
    order.push(robinIndex);
  }
  assert.deepEqual(order, [4, 0, 1, 2, 3, 4, 0]);
});

Deno.test("DispatchTree with a single queue selects it when busy", () => {
  const tree = new DispatchTree(1);
  assert.equal(tree.select(0), -1);
  tree.set(0, 12);
  assert.equal(tree.min, 12);
  assert.equal(tree.select(-1), 0);
  assert.equal(tree.select(0), 0);
  tree.set(0, Infinity);
  assert.equal(tree.select(0), -1);
});

Deno.test("DispatchTree tracks the minimum as finish times change", () => {
  const tree = treeOf([5, 6, 7, 8, 9, 10]);
  assert.equal(tree.min, 5);
  tree.set(0, Infinity);
  assert.equal(tree.min, 6);
  assert.equal(tree.select(-1), 1);
  tree.set(5, -1);
  assert.equal(tree.min, -1);
  assert.equal(tree.select(0), 5);
  tree.set(5, 100);
  assert.equal(tree.min, 6);
  assert.equal(tree.get(5), 100);
  for (let i = 0; i < 6; i++) tree.set(i, Infinity);
  assert.equal(tree.min, Infinity);
  assert.equal(tree.select(2), -1);
});

Deno.test("DispatchTree.resize resets every queue to empty", () => {
  const tree = treeOf([3, 1, 4, 1, 5]);
  tree.resize(5);
  assert.equal(tree.min, Infinity);
  assert.equal(tree.select(0), -1);
  for (let i = 0; i < 5; i++) assert.equal(tree.get(i), Infinity);

  tree.set(3, 2);
  tree.resize(17);
  assert.equal(tree.count, 17);
  assert.equal(tree.min, Infinity);
  for (let i = 0; i < 17; i++) assert.equal(tree.get(i), Infinity);
  tree.set(16, 8);
  tree.set(2, 8);
  assert.equal(tree.select(2), 16);
  assert.equal(tree.select(16), 2);

  tree.resize(3);
  assert.equal(tree.count, 3);
  assert.equal(tree.min, Infinity);
  tree.set(1, 0);
  assert.equal(tree.select(1), 1);
});

Deno.test("DispatchTree.select matches Kubernetes' round-robin scan after any updates", () => {
  const values = fc.constantFrom(Infinity, Infinity, 0, 1, 2, 3, 7, -4, 1e15);
  const op = fc.oneof(
    { weight: 8, arbitrary: fc.record({ kind: fc.constant("set"), at: fc.nat(), value: values }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("resize"), size: fc.integer({ min: 1, max: 70 }) }),
    },
    { weight: 4, arbitrary: fc.record({ kind: fc.constant("select"), at: fc.nat() }) },
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 70 }),
      fc.array(op, { maxLength: 200 }),
      (size, ops) => {
        const tree = new DispatchTree(size);
        let model: number[] = new Array(size).fill(Infinity);
        const check = (robinIndex: number) => {
          const expected = referenceSelect(model, robinIndex);
          assert.equal(
            tree.select(robinIndex),
            expected,
            `select(${robinIndex}) over [${model.join(", ")}]`,
          );
        };
        for (const o of ops) {
          if (o.kind === "set") {
            const i = o.at % model.length;
            tree.set(i, o.value);
            model[i] = o.value;
          } else if (o.kind === "resize") {
            tree.resize(o.size);
            model = new Array(o.size).fill(Infinity);
          } else {
            check((o.at % (model.length + 1)) - 1);
          }
          assert.equal(tree.count, model.length);
          assert.equal(tree.min, Math.min(...model));
        }
        for (let r = -1; r < model.length; r++) check(r);
        model.forEach((finish, i) => assert.equal(tree.get(i), finish));
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("DispatchTree.select matches the scan on dense ties among few finish times", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(Infinity, 5, 6), { minLength: 1, maxLength: 70 }),
      fc.nat(),
      (finishes, at) => {
        const robinIndex = (at % (finishes.length + 1)) - 1;
        assert.equal(treeOf(finishes).select(robinIndex), referenceSelect(finishes, robinIndex));
      },
    ),
    { numRuns: 2000 },
  );
});
