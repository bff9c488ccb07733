/**
 * A min-heap of requests by `dueMs` (wait deadlines and ends of lingering),
 * indexed through each request's `heapIndex` so that a request that starts
 * or is cancelled leaves the heap in O(log n). The queue set arms a single
 * clock timer for the heap's top instead of one timer per request.
 *
 * @module
 */

import type { Req } from "./_request.ts";

/** An indexed binary min-heap of requests keyed by `dueMs`. */
export class DueHeap {
  #items: Req[] = [];

  /** Number of requests in the heap. */
  get size(): number {
    return this.#items.length;
  }

  /** The request due first, if any. */
  peek(): Req | undefined {
    return this.#items[0];
  }

  /** Adds `r`, which must not be in the heap. */
  push(r: Req): void {
    r.heapIndex = this.#items.length;
    this.#items.push(r);
    this.#up(r.heapIndex);
  }

  /** Removes and returns the request due first. */
  pop(): Req | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.delete(top);
    return top;
  }

  /** Removes `r` if it is in the heap. */
  delete(r: Req): void {
    const i = r.heapIndex;
    if (i < 0) return;
    const items = this.#items;
    const last = items.pop()!;
    r.heapIndex = -1;
    if (last === r) return;
    items[i] = last;
    last.heapIndex = i;
    this.#down(i);
    this.#up(last.heapIndex);
  }

  #up(i: number): void {
    const items = this.#items;
    const item = items[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent]!;
      if (p.dueMs <= item.dueMs) break;
      items[i] = p;
      p.heapIndex = i;
      i = parent;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  #down(i: number): void {
    const items = this.#items;
    const n = items.length;
    const item = items[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && items[c + 1]!.dueMs < items[c]!.dueMs) c++;
      const child = items[c]!;
      if (child.dueMs >= item.dueMs) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
