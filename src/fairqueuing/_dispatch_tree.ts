/**
 * The index behind O(log Q) dispatch: a min segment tree over queue
 * indices holding each queue's virtual finish time of its head request
 * (`+Infinity` for a queue with nobody waiting).
 *
 * Kubernetes scans all queues from `robinIndex + 1`, wrapping around, and
 * keeps the first strict minimum: the winner is the queue with the smallest
 * finish time and, among equal ones, the first at or after `robinIndex + 1`
 * in cyclic order. {@linkcode DispatchTree.select} returns exactly that
 * queue: the minimum is the root, and the first leaf at or after a position
 * whose value is at most the minimum is a walk up and down the tree.
 *
 * @module
 */

/** A min segment tree of queue finish times, with Kubernetes' round-robin tie break. */
export class DispatchTree {
  #size = 1;
  #count = 0;
  #tree: Float64Array = new Float64Array(2).fill(Infinity);

  /** Creates a tree for `count` queues, all without waiting requests. */
  constructor(count: number) {
    this.resize(count);
  }

  /** Number of queues indexed. */
  get count(): number {
    return this.#count;
  }

  /** The smallest finish time (`+Infinity` when no queue has a waiting request). */
  get min(): number {
    return this.#tree[1]!;
  }

  /** Indexes `count` queues, all reset to "nobody waiting"; callers then set every busy queue. */
  resize(count: number): void {
    let size = 1;
    while (size < count) size <<= 1;
    this.#count = count;
    if (size !== this.#size || this.#tree.length !== 2 * size) {
      this.#size = size;
      this.#tree = new Float64Array(2 * size);
    }
    this.#tree.fill(Infinity);
  }

  /** The finish time recorded for queue `index`. */
  get(index: number): number {
    return this.#tree[this.#size + index]!;
  }

  /** Records the finish time of queue `index` (`Infinity`: nobody waiting). */
  set(index: number, finish: number): void {
    const tree = this.#tree;
    let i = this.#size + index;
    if (tree[i] === finish) return;
    tree[i] = finish;
    i >>= 1;
    while (i >= 1) {
      const l = tree[2 * i]!, r = tree[2 * i + 1]!;
      const m = l < r ? l : r;
      if (tree[i] === m) break;
      tree[i] = m;
      i >>= 1;
    }
  }

  /**
   * The queue to dispatch from: least finish time, ties going to the first
   * queue in cyclic order starting at `(robinIndex + 1) mod count`. Returns
   * -1 when no queue has a waiting request.
   */
  select(robinIndex: number): number {
    const min = this.#tree[1]!;
    if (min === Infinity) return -1;
    const n = this.#count;
    const start = (((robinIndex + 1) % n) + n) % n;
    const found = this.#firstAtMost(start, min);
    return found >= 0 ? found : this.#firstAtMost(0, min);
  }

  /** The first queue index `>= from` whose finish time is at most `bound`, or -1. */
  #firstAtMost(from: number, bound: number): number {
    const tree = this.#tree;
    const size = this.#size;
    let i = size + from;
    // Climb: test this node, else move to the next subtree to the right.
    while (!(tree[i]! <= bound)) {
      while (i & 1) i >>= 1;
      if (i === 0) return -1;
      i++;
    }
    // Descend to the leftmost qualifying leaf.
    while (i < size) {
      i <<= 1;
      if (!(tree[i]! <= bound)) i++;
    }
    return i - size;
  }
}
