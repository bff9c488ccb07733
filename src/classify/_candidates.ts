/**
 * Candidate FlowSchemas for one request: a few sorted lists of schema
 * positions (one per key the request has: its user name, each group, its
 * verb, …), walked as their union in ascending position, without repeats.
 * Ascending position is matching order, so the classifier can stop at the
 * first candidate that matches, exactly where a walk over every schema would
 * have stopped. Everything here is scratch reused across requests: sized by
 * the number of schemas, never by the number of requests.
 *
 * @module
 */

/** Up to this many lists are merged by comparing their heads; more go through a bitset. */
const MERGE_HEADS = 8;
const DONE = 0x7fffffff;

/** Lists of schema positions (each sorted ascending), and their union in order. */
export class Candidates {
  readonly #lists: Int32Array[] = [];
  readonly #at = new Int32Array(MERGE_HEADS);
  /** One bit per schema, for the union of many lists. */
  readonly #bits: Uint32Array;
  #count = 0;
  #total = 0;
  /** Word of `#bits` the walk is at, and the last word marked. */
  #word = 0;
  #lastWord = -1;

  /** Scratch for walks over `schemas` positions. */
  constructor(schemas: number) {
    this.#bits = new Uint32Array(Math.ceil(schemas / 32));
  }

  /** The sum of the lists' lengths: what walking them can cost at most. */
  get total(): number {
    return this.#total;
  }

  /** Forgets the lists. */
  reset(): void {
    this.#count = 0;
    this.#total = 0;
  }

  /** Adds a list (a missing or empty one adds nothing). */
  add(list: Int32Array | undefined): void {
    if (list === undefined || list.length === 0) return;
    this.#lists[this.#count++] = list;
    this.#total += list.length;
  }

  /** Starts the walk over the lists added since the last `reset()`. */
  start(): void {
    const count = this.#count;
    if (count <= MERGE_HEADS) {
      // A loop, not fill(): for a handful of heads the builtin's call costs more than the stores.
      const at = this.#at;
      for (let i = 0; i < count; i++) at[i] = 0;
      return;
    }
    const bits = this.#bits;
    // A walk that stopped early left bits behind; clear them first.
    if (this.#lastWord >= 0) bits.fill(0, this.#word, this.#lastWord + 1);
    let first = DONE, last = -1;
    for (let i = 0; i < count; i++) {
      const list = this.#lists[i]!;
      for (let j = 0; j < list.length; j++) {
        const p = list[j]!;
        bits[p >>> 5] = bits[p >>> 5]! | (1 << (p & 31));
      }
      if (list[0]! < first) first = list[0]!;
      if (list[list.length - 1]! > last) last = list[list.length - 1]!;
    }
    this.#word = first >>> 5;
    this.#lastWord = last >>> 5;
  }

  /** The next position in ascending order, or -1 when the lists are exhausted. */
  next(): number {
    const count = this.#count;
    if (count === 1) {
      const list = this.#lists[0]!;
      const i = this.#at[0]!;
      if (i === list.length) return -1;
      this.#at[0] = i + 1;
      return list[i]!;
    }
    return count <= MERGE_HEADS ? this.#nextHead(count) : this.#nextBit();
  }

  /** The smallest head of the lists; every list at it moves on, so repeats come out once. */
  #nextHead(count: number): number {
    const lists = this.#lists, at = this.#at;
    let min = DONE;
    for (let i = 0; i < count; i++) {
      const list = lists[i]!;
      const j = at[i]!;
      if (j < list.length && list[j]! < min) min = list[j]!;
    }
    if (min === DONE) return -1;
    for (let i = 0; i < count; i++) {
      const list = lists[i]!;
      const j = at[i]!;
      if (j < list.length && list[j] === min) at[i] = j + 1;
    }
    return min;
  }

  /** The lowest bit still set, cleared as it is handed out. */
  #nextBit(): number {
    const bits = this.#bits;
    for (let w = this.#word; w <= this.#lastWord; w++) {
      const word = bits[w]!;
      if (word === 0) continue;
      const low = word & -word; // the lowest set bit alone
      bits[w] = word ^ low;
      this.#word = w;
      return (w << 5) + 31 - Math.clz32(low);
    }
    this.#word = 0;
    this.#lastWord = -1;
    return -1;
  }
}
