/**
 * Shuffle sharding (Kubernetes: `pkg/util/shufflesharding/shufflesharding.go`;
 * KEP-1040, "Assignment to a Queue"): a flow's 64-bit
 * hash deals a hand of distinct queue indices ("cards") from the level's
 * queues (the "deck"). A request then joins the shortest queue of its hand,
 * so two flows share all their queues only with small probability.
 *
 * The deal is a mixed-radix decoding of the hash — digit `i` is
 * `hash mod (deckSize − i)`, then the hash is divided by that radix — and
 * each digit is turned into a card by skipping the cards dealt before it.
 * Like Kubernetes, all 64 bits of the hash are used (there is no masking to
 * {@linkcode MAX_HASH_BITS}); the entropy rule only bounds how uniform the
 * hands are.
 *
 * The decoding runs on JS numbers, not BigInt, so a deal costs tens of
 * nanoseconds; see {@linkcode Dealer.dealFromHalves} for why it is exact.
 *
 * @module
 */

import { MAX_HASH_BITS, requiredEntropyBits } from "../_shared/numbers.ts";

/** The largest deck a Dealer accepts: 2^26 (67,108,864) cards. */
export const MAX_DECK_SIZE: number = 1 << 26;

/** A callback receiving each dealt card, with its position in the hand. */
export type DealCallback = (card: number, index: number) => void;

const TWO_26 = 0x4000000;
const MAX_UINT64 = (1n << 64n) - 1n;
const UINT32_MASK = 0xffffffffn;

/**
 * Deals hands of `handSize` distinct cards in `[0, deckSize)` from flow
 * hashes, exactly as Kubernetes' `shufflesharding.Dealer` does: the same hash
 * gives the same cards in the same order.
 *
 * @example
 * ```ts
 * import { Dealer } from "./mod.ts";
 * const dealer = new Dealer(128, 6);
 * dealer.dealIntoHand(12345678901234567n); // [7, 14, 94, 102, 22, 65]
 * ```
 */
export class Dealer {
  /** Number of cards in the deck (queues of the priority level). */
  readonly deckSize: number;
  /** Number of cards in each hand. */
  readonly handSize: number;
  #scratch: Int32Array;
  #dealing = false;
  /**
   * The digits {@linkcode Dealer.cardFromHalves} decoded last: the first
   * `#knownCount` of the hash `#knownHi · 2^32 + #knownLo`. A queue set with
   * nobody waiting asks for one card of each arriving request's hand, at a
   * position that turns with every arrival; a flow's requests in a row then
   * find their digits here, and only the division-free step from digits to
   * card is redone.
   */
  #known: Int32Array;
  #knownHi = -1;
  #knownLo = -1;
  #knownCount = 0;

  /**
   * Creates a dealer, refusing the parameters Kubernetes' `NewDealer`
   * refuses, in its order and with its messages.
   *
   * @throws {TypeError} when a size is not a number.
   * @throws {RangeError} when a size is not an integer, not positive, the hand
   * is larger than the deck, the deck is larger than {@linkcode MAX_DECK_SIZE},
   * or the hand needs more than {@linkcode MAX_HASH_BITS} bits of entropy.
   */
  constructor(deckSize: number, handSize: number) {
    if (typeof deckSize !== "number" || typeof handSize !== "number") {
      throw new TypeError(
        `Cannot create a Dealer: sizes must be numbers, got deckSize ${
          describe(deckSize)
        } and handSize ${describe(handSize)}`,
      );
    }
    if (!Number.isInteger(deckSize) || !Number.isInteger(handSize)) {
      throw new RangeError(
        `Cannot create a Dealer: sizes must be integers, got deckSize ${deckSize} and handSize ${handSize}`,
      );
    }
    // Kubernetes' `NewDealer` checks, in its order and with its words.
    if (deckSize <= 0 || handSize <= 0) {
      throw new RangeError(
        `deckSize ${int(deckSize)} or handSize ${int(handSize)} is not positive`,
      );
    }
    if (handSize > deckSize) {
      throw new RangeError(`handSize ${int(handSize)} is greater than deckSize ${int(deckSize)}`);
    }
    if (deckSize > MAX_DECK_SIZE) {
      throw new RangeError(`deckSize ${int(deckSize)} is impractically large`);
    }
    if (requiredEntropyBits(deckSize, handSize) > MAX_HASH_BITS) {
      throw new RangeError(
        `required entropy bits of deckSize ${int(deckSize)} and handSize ${
          int(handSize)
        } is greater than ${MAX_HASH_BITS}`,
      );
    }
    this.deckSize = deckSize;
    this.handSize = handSize;
    // The entropy rule caps handSize at 15, so this stays tiny.
    this.#scratch = new Int32Array(handSize);
    this.#known = new Int32Array(handSize);
  }

  /**
   * Deals a hand from `hash` (an unsigned 64-bit integer), calling `pick`
   * with each card in deal order.
   *
   * @throws {TypeError} when `hash` is not a bigint.
   * @throws {RangeError} when `hash` is outside `[0, 2^64)`.
   *
   * @example
   * ```ts
   * import { Dealer } from "./mod.ts";
   * const queueLengths = new Array(64).fill(0);
   * let shortest = -1;
   * new Dealer(64, 8).deal(42n, (card) => {
   *   if (shortest < 0 || queueLengths[card] < queueLengths[shortest]) shortest = card;
   * });
   * ```
   */
  deal(hash: bigint, pick: DealCallback): void {
    checkHash(hash);
    this.dealFromHalves(Number(hash >> 32n), Number(hash & UINT32_MASK), pick);
  }

  /**
   * Deals a hand from the hash given as two unsigned 32-bit halves,
   * `hash = hi · 2^32 + lo`, without any BigInt arithmetic: the fast path for
   * hot code. A hash read from digest bytes little-endian splits as
   * `lo = view.getUint32(0, true)`, `hi = view.getUint32(4, true)`.
   *
   * Exactness: every intermediate is an integer below 2^53, so it is held
   * exactly, and every quotient is exact. The value is kept as `a · 2^26 + b`
   * (`a < 2^38`, `b < 2^26`). While it is at least 2^52 it is divided by the
   * radix `d ≤ 2^26` in long division: `a / d`, then the partial dividend
   * `(a mod d) · 2^26 + b < 2^52`. Below 2^52 it is one number. Each division
   * `x / d` has `x + d < 2^53`, which makes `Math.floor(x / d)` exact: the
   * true quotient is at most `q + 1 − 1/d`, and `1/d` is more than half an
   * ulp of `q + 1` because `d · (q + 1) ≤ x + d < 2^53`.
   *
   * @throws {RangeError} when `hi` or `lo` is not an integer in `[0, 2^32)`.
   *
   * @example
   * ```ts
   * import { Dealer } from "./mod.ts";
   * const cards: number[] = [];
   * new Dealer(32, 3).dealFromHalves(0xffffffff, 0xffffffff, (card) => cards.push(card));
   * cards; // [31, 15, 23]
   * ```
   */
  dealFromHalves(hi: number, lo: number, pick: DealCallback): void {
    checkHalves(hi, lo);
    // A pick that deals again from this dealer must not clobber the cards
    // still being emitted, so a nested deal gets its own buffer.
    const own = !this.#dealing;
    const cards = own ? this.#scratch : new Int32Array(this.handSize);
    this.#decode(hi, lo, cards);
    this.#dealing = true;
    try {
      for (let i = 0; i < this.handSize; i++) pick(cards[i]!, i);
    } finally {
      if (own) this.#dealing = false;
    }
  }

  /**
   * Deals a hand from `hash` into an array, in deal order. Like Go's
   * `DealIntoHand`, `hand` is reused when it can be and the result must be
   * used: a `number[]` is overwritten and trimmed to `handSize`; an
   * `Int32Array` is filled when long enough (a longer one is returned as a
   * `subarray` view), otherwise a new one is returned.
   *
   * @throws {TypeError} when `hash` is not a bigint.
   * @throws {RangeError} when `hash` is outside `[0, 2^64)`.
   *
   * @example
   * ```ts
   * import { Dealer } from "./mod.ts";
   * const dealer = new Dealer(64, 8);
   * dealer.dealIntoHand(1n); // [1, 0, 2, 3, 4, 5, 6, 7]
   * const hand = new Int32Array(8);
   * dealer.dealIntoHand(0n, hand); // hand is now [0, 1, 2, 3, 4, 5, 6, 7]
   * ```
   */
  dealIntoHand(hash: bigint, hand?: number[]): number[];
  /** Deals a hand from `hash` into an `Int32Array` (see the first overload). */
  dealIntoHand(hash: bigint, hand: Int32Array): Int32Array;
  /** Deals a hand from `hash` into either kind of array (see the first overload). */
  dealIntoHand(hash: bigint, hand?: number[] | Int32Array): number[] | Int32Array;
  dealIntoHand(hash: bigint, hand?: number[] | Int32Array): number[] | Int32Array {
    checkHash(hash);
    return this.dealIntoHandFromHalves(Number(hash >> 32n), Number(hash & UINT32_MASK), hand);
  }

  /**
   * {@linkcode Dealer.dealIntoHand} for a hash given as two unsigned 32-bit
   * halves, `hash = hi · 2^32 + lo` (see {@linkcode Dealer.dealFromHalves}).
   *
   * @throws {RangeError} when `hi` or `lo` is not an integer in `[0, 2^32)`.
   *
   * @example
   * ```ts
   * import { Dealer } from "./mod.ts";
   * new Dealer(128, 6).dealIntoHandFromHalves(0, 1); // [1, 0, 2, 3, 4, 5]
   * ```
   */
  dealIntoHandFromHalves(hi: number, lo: number, hand?: number[]): number[];
  /** Deals a hand from the halves into an `Int32Array` (see the first overload). */
  dealIntoHandFromHalves(hi: number, lo: number, hand: Int32Array): Int32Array;
  /** Deals a hand from the halves into either kind of array (see the first overload). */
  dealIntoHandFromHalves(
    hi: number,
    lo: number,
    hand?: number[] | Int32Array,
  ): number[] | Int32Array;
  dealIntoHandFromHalves(
    hi: number,
    lo: number,
    hand?: number[] | Int32Array,
  ): number[] | Int32Array {
    checkHalves(hi, lo);
    const n = this.handSize;
    if (hand instanceof Int32Array) {
      const out = hand.length === n
        ? hand
        : hand.length > n
        ? hand.subarray(0, n)
        : new Int32Array(n);
      this.#decode(hi, lo, out);
      return out;
    }
    // Decoding into an Int32Array keeps #decode monomorphic; the scratch is
    // busy while a deal is emitting (a pick may call this), so then use a new one.
    const cards = this.#dealing ? new Int32Array(n) : this.#scratch;
    this.#decode(hi, lo, cards);
    const out = hand ?? [];
    // Trim, never lengthen: writing indices 0..n-1 in order keeps the array packed.
    if (out.length > n) out.length = n;
    for (let i = 0; i < n; i++) out[i] = cards[i]!;
    return out;
  }

  /**
   * The card at `position` of the hand dealt from `hi · 2^32 + lo`:
   * `dealIntoHandFromHalves(hi, lo)[position]`, decoding only the digits up
   * to `position` (a queue set with nobody waiting needs one card).
   *
   * @throws {RangeError} when `hi` or `lo` is not an integer in `[0, 2^32)`
   * or `position` is not an integer in `[0, handSize)`.
   *
   * @example
   * ```ts
   * import { Dealer } from "./mod.ts";
   * new Dealer(128, 6).cardFromHalves(0, 1, 1); // 0
   * ```
   */
  cardFromHalves(hi: number, lo: number, position: number): number {
    checkHalves(hi, lo);
    if (!(Number.isInteger(position) && position >= 0 && position < this.handSize)) {
      throw new RangeError(
        `Cannot deal: position must be an integer in [0, ${this.handSize}), got ${
          describe(position)
        }`,
      );
    }
    // Its own buffer: a pick of a deal being emitted may call this, and the deal's cards are in
    // #scratch.
    const digits = this.#known;
    if (hi !== this.#knownHi || lo !== this.#knownLo || position >= this.#knownCount) {
      this.#digits(hi, lo, digits, position + 1);
      this.#knownCount = position + 1;
      this.#knownHi = hi;
      this.#knownLo = lo;
    }
    let card = digits[position]!;
    for (let j = position; j > 0; j--) if (card >= digits[j - 1]!) card++;
    return card;
  }

  /** Writes the hand for hash `hi · 2^32 + lo` into `out[0..handSize)`. */
  #decode(hi: number, lo: number, out: Int32Array): void {
    const n = this.handSize;
    this.#digits(hi, lo, out, n);
    // As in Kubernetes' `Deal`: digit i indexes the deck with the i earlier cards removed, so
    // it steps over each earlier digit it reaches. Going back to front keeps
    // the earlier digits unconverted while they are still needed.
    for (let k = n - 1; k > 0; k--) {
      let card = out[k]!;
      for (let j = k; j > 0; j--) if (card >= out[j - 1]!) card++;
      out[k] = card;
    }
  }

  /** Writes the first `n` mixed-radix digits of `hi · 2^32 + lo` into `out[0..n)`. */
  #digits(hi: number, lo: number, out: Int32Array, n: number): void {
    const deck = this.deckSize;
    // The value is held as a · 2^26 + b with a < 2^38 and b < 2^26.
    let a = hi * 64 + (lo >>> 26);
    let b = lo & 0x3ffffff;
    let i = 0;
    // Wide phase (value ≥ 2^52): long division by d ≤ 2^26 in two digits.
    // a + d < 2^53 and the partial dividend t = r · 2^26 + b < d · 2^26 ≤
    // 2^52, so both floors are exact, and t's quotient is below 2^26.
    for (; i < n && a >= TWO_26; i++) {
      const d = deck - i;
      const qa = Math.floor(a / d);
      const t = (a - qa * d) * TWO_26 + b;
      const qt = Math.floor(t / d);
      out[i] = t - qt * d;
      a = qa;
      b = qt;
    }
    // Narrow phase: v < 2^52 and d ≤ 2^26, so v + d < 2^53 and floor(v / d)
    // in float64 is the true quotient.
    let v = a * TWO_26 + b;
    for (; i < n; i++) {
      const d = deck - i;
      const q = Math.floor(v / d);
      out[i] = v - q * d;
      v = q;
    }
  }
}

function checkHash(hash: bigint): void {
  if (typeof hash !== "bigint") {
    throw new TypeError(`Cannot deal: hash must be a bigint, got ${describe(hash)}`);
  }
  if (hash < 0n || hash > MAX_UINT64) {
    throw new RangeError(`Cannot deal: hash must be in [0, 2^64), got ${hash}`);
  }
}

function checkHalves(hi: number, lo: number): void {
  // `x >>> 0 === x` holds exactly for numbers that are integers in [0, 2^32).
  if (hi >>> 0 === hi && lo >>> 0 === lo) return;
  const message = `Cannot deal: hash halves must be integers in [0, 2^32), got hi ${
    describe(hi)
  } and lo ${describe(lo)}`;
  throw typeof hi === "number" && typeof lo === "number"
    ? new RangeError(message)
    : new TypeError(message);
}

/** Formats an integer as Go's %d would, without exponent notation. */
function int(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
}

/** Names a received value for an error message, whatever its type. */
function describe(value: unknown): string {
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number") return String(value);
  if (value === null || value === undefined) return String(value);
  if (typeof value === "symbol") return value.toString();
  return typeof value;
}
