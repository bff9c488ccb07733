/**
 * Coalescing for the wire: everything pushed in the same tick (the same
 * run of synchronous code and its microtasks) leaves as one batch, so a
 * burst of acquires, releases or decisions costs one frame, not one each.
 *
 * @module
 */

import { MAX_BATCH } from "./wire.ts";
import { checkNumber } from "../_shared/errors.ts";

/**
 * Collects items and hands them to `flush` in batches: once per tick, or at
 * once when a batch reaches `maxBatch` items.
 *
 * @example
 * ```ts
 * import { Coalescer } from "./mod.ts";
 * const frames: number[][] = [];
 * const out = new Coalescer<number>((batch) => frames.push(batch));
 * out.push(1);
 * out.push(2);
 * await Promise.resolve();
 * frames; // [[1, 2]]
 * ```
 */
export class Coalescer<T> {
  #items: T[] = [];
  #scheduled = false;
  #flush: (batch: T[]) => void;
  #maxBatch: number;
  #run = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  /**
   * `flush` receives each batch (never empty); `maxBatch` (default the wire's
   * {@linkcode MAX_BATCH}) bounds its size.
   *
   * @throws {RangeError} when `maxBatch` is not an integer >= 1 ({TypeError}: not a number).
   */
  constructor(flush: (batch: T[]) => void, maxBatch: number = MAX_BATCH) {
    checkNumber(
      maxBatch,
      (n) => Number.isSafeInteger(n) && n >= 1,
      () => `Cannot create a Coalescer: maxBatch must be an integer >= 1, got ${maxBatch}`,
    );
    this.#flush = flush;
    this.#maxBatch = maxBatch;
  }

  /** Items waiting for the next flush. */
  get pending(): number {
    return this.#items.length;
  }

  /** Adds an item to the current batch. */
  push(item: T): void {
    this.#items.push(item);
    if (this.#items.length >= this.#maxBatch) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#run);
    }
  }

  /** Hands the current batch to `flush` now (nothing when empty). */
  flush(): void {
    if (this.#items.length === 0) return;
    const batch = this.#items;
    this.#items = [];
    this.#flush(batch);
  }

  /** Drops the items not yet flushed and returns them. */
  clear(): T[] {
    const items = this.#items;
    this.#items = [];
    return items;
  }
}
