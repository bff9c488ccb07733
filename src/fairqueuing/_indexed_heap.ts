/**
 * A binary min-heap whose items know their position (`heapIndex`), so any
 * item can leave in O(log n): the fake clock's timers and the queue set's
 * deadlines both need to cancel entries that are not at the top.
 *
 * @module
 */

/** An item that can sit in one {@linkcode IndexedHeap} at a time. */
export interface HeapItem {
  /** Position in the heap, or -1 when not in it (maintained by the heap). */
  heapIndex: number;
}

/** An indexed binary min-heap ordered by `before`. */
export class IndexedHeap<T extends HeapItem> {
  #items: T[] = [];
  #before: (a: T, b: T) => boolean;

  /** Creates an empty heap; `before(a, b)` is true when `a` must come out first. */
  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  /** Number of items. */
  get size(): number {
    return this.#items.length;
  }

  /** The first item, if any. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds `item`, which must not be in a heap. */
  push(item: T): void {
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item.heapIndex);
  }

  /** Removes and returns the first item. */
  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.delete(top);
    return top;
  }

  /** Removes `item` if it is in this heap. */
  delete(item: T): void {
    const i = item.heapIndex;
    const items = this.#items;
    if (i < 0 || items[i] !== item) return;
    const last = items.pop()!;
    item.heapIndex = -1;
    if (last === item) return;
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
      if (!this.#before(item, p)) break;
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
      if (c + 1 < n && this.#before(items[c + 1]!, items[c]!)) c++;
      const child = items[c]!;
      if (!this.#before(child, item)) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
