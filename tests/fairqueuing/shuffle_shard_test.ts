import assert from "node:assert/strict";
import { MAX_HASH_BITS, requiredEntropyBits } from "../../src/_shared/numbers.ts";
import fc from "fast-check";
import { sha256 } from "@noble/hashes/sha2.js";
import { Dealer, MAX_DECK_SIZE } from "../../src/fairqueuing/shuffle_shard.ts";

const MAX_UINT64 = 2n ** 64n - 1n;
const GOLDEN_HASHES = [0n, 1n, 12345678901234567n, MAX_UINT64] as const;

/**
 * Kubernetes' `Deal` in the plainest terms, on BigInt: mixed-radix digits,
 * then each digit skips the earlier digits it reaches.
 */
function referenceDeal(deck: number, hand: number, hash: bigint): number[] {
  const digits: number[] = [];
  for (let i = 0; i < hand; i++) {
    const radix = BigInt(deck - i);
    digits.push(Number(hash % radix));
    hash /= radix;
  }
  return digits.map((digit, i) => {
    let card = digit;
    for (let j = i; j >= 1; j--) if (card >= digits[j - 1]!) card++;
    return card;
  });
}

function halves(hash: bigint): [hi: number, lo: number] {
  return [Number(hash >> 32n), Number(hash & 0xffffffffn)];
}

/** Every way the Dealer offers to deal `hash`, so each vector checks them all. */
function allDeals(dealer: Dealer, hash: bigint): number[][] {
  const [hi, lo] = halves(hash);
  const picked: number[] = [];
  const indices: number[] = [];
  dealer.deal(hash, (card, index) => {
    picked.push(card);
    indices.push(index);
  });
  assert.deepEqual(indices, [...Array(dealer.handSize).keys()]);
  const fromHalves: number[] = [];
  dealer.dealFromHalves(hi, lo, (card) => fromHalves.push(card));
  return [
    picked,
    fromHalves,
    dealer.dealIntoHand(hash),
    Array.from(dealer.dealIntoHand(hash, new Int32Array(dealer.handSize))),
    dealer.dealIntoHandFromHalves(hi, lo),
    Array.from({ length: dealer.handSize }, (_, k) => dealer.cardFromHalves(hi, lo, k)),
  ];
}

function assertDeals(dealer: Dealer, hash: bigint, expected: number[]): void {
  for (const got of allDeals(dealer, hash)) {
    assert.deepEqual(got, expected, `${dealer.deckSize}/${dealer.handSize} hash ${hash}`);
  }
}

/** Largest hand a Dealer accepts for `deck` (the entropy rule of `RequiredEntropyBits`). */
function maxHand(deck: number): number {
  let hand = 1;
  while (hand < deck && requiredEntropyBits(deck, hand + 1) <= MAX_HASH_BITS) hand++;
  return hand;
}

/** Valid (deck, hand) pairs, with small decks and the extremes well represented. */
const dealerSizes: fc.Arbitrary<[number, number]> = fc
  .oneof(
    fc.integer({ min: 1, max: 300 }),
    fc.integer({ min: 1, max: MAX_DECK_SIZE }),
    fc.constantFrom(1, 2, 15, 16, 1024, MAX_DECK_SIZE - 1, MAX_DECK_SIZE),
  )
  .chain((deck) =>
    fc.tuple(
      fc.constant(deck),
      fc.oneof(fc.integer({ min: 1, max: maxHand(deck) }), fc.constant(maxHand(deck))),
    )
  );

const uint64: fc.Arbitrary<bigint> = fc.oneof(
  fc.bigInt({ min: 0n, max: MAX_UINT64 }),
  // Around the switch from long division to one-number arithmetic (2^52),
  // the float64 integer limit (2^53) and the top of the range.
  fc.constantFrom(2n ** 52n, 2n ** 53n, 2n ** 60n, 2n ** 63n).chain((base) =>
    fc.bigInt({ min: -4096n, max: 4096n }).map((delta) => base + delta)
  ),
  fc.bigInt({ min: MAX_UINT64 - 4096n, max: MAX_UINT64 }),
);

Deno.test("constants match Kubernetes' shufflesharding.go", () => {
  assert.equal(MAX_HASH_BITS, 60);
  assert.equal(MAX_DECK_SIZE, 67_108_864);
});

Deno.test("requiredEntropyBits matches known deck and hand sizes (docs/semantics.md §3)", () => {
  const examples: [number, number, number][] = [
    [1024, 6, 60],
    [512, 8, 72],
    [64, 8, 48],
    [128, 6, 42],
    [128, 8, 56],
    [64, 10, 60],
    [16, 4, 16],
    [10_000_000, 2, 47],
  ];
  for (const [deck, hand, bits] of examples) {
    assert.equal(requiredEntropyBits(deck, hand), bits, `${deck}/${hand}`);
  }
});

Deno.test("Dealer deals the golden vectors of Kubernetes' shufflesharding package", () => {
  const table: [number, number, number[][]][] = [
    [64, 8, [
      [0, 1, 2, 3, 4, 5, 6, 7],
      [1, 0, 2, 3, 4, 5, 6, 7],
      [7, 22, 1, 35, 53, 54, 9, 13],
      [63, 15, 55, 23, 31, 2, 39, 34],
    ]],
    [128, 6, [
      [0, 1, 2, 3, 4, 5],
      [1, 0, 2, 3, 4, 5],
      [7, 14, 94, 102, 22, 65],
      [127, 1, 7, 56, 91, 6],
    ]],
    [256, 7, [
      [0, 1, 2, 3, 4, 5, 6],
      [1, 0, 2, 3, 4, 5, 6],
      [135, 112, 21, 124, 79, 137, 47],
      [255, 0, 128, 209, 194, 53, 21],
    ]],
    [32, 3, [[0, 1, 2], [1, 0, 2], [7, 14, 19], [31, 15, 23]]],
    [1, 1, [[0], [0], [0], [0]]],
  ];
  for (const [deck, hand, hands] of table) {
    const dealer = new Dealer(deck, hand);
    GOLDEN_HASHES.forEach((hash, i) => assertDeals(dealer, hash, hands[i]!));
  }
});

// Combined vectors (hashFlowID, then Deal, as Kubernetes computes them); the hashes are
// checked against SHA-256 below.
const COMBINED: [
  fsName: string,
  distinguisher: string,
  hash: bigint,
  deck: number,
  hand: number[],
][] = [
  [
    "workload-low",
    "system:serviceaccount:default:x",
    8462628243316140706n,
    128,
    [34, 111, 31, 26, 108, 36],
  ],
  ["global-default", "alice", 17644606172554983095n, 128, [55, 62, 126, 125, 105, 1]],
  ["exempt", "", 18422507136572196352n, 64, [0, 17, 28, 59, 14, 29, 32, 47]],
  ["service-accounts", "kube-system", 4467590379269162614n, 128, [118, 93, 51, 6, 16, 29]],
  [
    "service-accounts",
    "system:serviceaccount:default:x",
    9267409685745014192n,
    128,
    [48, 52, 46, 15, 25, 35],
  ],
  ["system-nodes", "system:node:n1", 8967139723188866340n, 64, [36, 37, 40, 20, 55, 27]],
  ["system-leader-election", "system:kube-scheduler", 11657850540737501994n, 16, [10, 15, 8, 13]],
];

Deno.test("Dealer deals the combined vectors (hashFlowID → Deal)", () => {
  for (const [, , hash, deck, hand] of COMBINED) {
    assertDeals(new Dealer(deck, hand.length), hash, hand);
  }
});

Deno.test("the combined vectors' hashes are Kubernetes' hashFlowID", () => {
  const encoder = new TextEncoder();
  for (const [fsName, distinguisher, hash] of COMBINED) {
    const digest = sha256(encoder.encode(`${fsName}\0${distinguisher}`));
    const view = new DataView(digest.buffer, digest.byteOffset, 8);
    assert.equal(view.getBigUint64(0, true), hash, `${fsName}/${distinguisher}`);
    // The split the fast path documents: lo first, little-endian.
    assert.deepEqual([view.getUint32(4, true), view.getUint32(0, true)], halves(hash));
  }
});

Deno.test("Dealer refuses sizes with NewDealer's messages, in its order", () => {
  const refused: [number, number, string][] = [
    [-100, 8, "deckSize -100 or handSize 8 is not positive"],
    [100, 0, "deckSize 100 or handSize 0 is not positive"],
    [0, 8, "deckSize 0 or handSize 8 is not positive"],
    [0, 0, "deckSize 0 or handSize 0 is not positive"],
    [-1, 5, "deckSize -1 or handSize 5 is not positive"], // positivity before hand > deck
    [100, 101, "handSize 101 is greater than deckSize 100"],
    [1, 2, "handSize 2 is greater than deckSize 1"],
    [2 ** 27, 2 ** 28, "handSize 268435456 is greater than deckSize 134217728"], // before size
    [2 ** 27, 2, "deckSize 134217728 is impractically large"],
    [MAX_DECK_SIZE + 1, 1, "deckSize 67108865 is impractically large"],
    [2 ** 27, 5, "deckSize 134217728 is impractically large"], // before entropy (135 bits)
    [2 ** 70, 1, "deckSize 1180591620717411303424 is impractically large"],
    [512, 8, "required entropy bits of deckSize 512 and handSize 8 is greater than 60"],
    [64, 11, "required entropy bits of deckSize 64 and handSize 11 is greater than 60"],
    [
      MAX_DECK_SIZE,
      3,
      "required entropy bits of deckSize 67108864 and handSize 3 is greater than 60",
    ],
  ];
  for (const [deck, hand, message] of refused) {
    assert.throws(() => new Dealer(deck, hand), { name: "RangeError", message });
  }
});

Deno.test("Dealer accepts sizes at the limits", () => {
  for (
    const [deck, hand] of [[1024, 6], [64, 10], [MAX_DECK_SIZE, 1], [MAX_DECK_SIZE, 2], [1, 1], [
      15,
      15,
    ], [16, 15]]
  ) {
    const dealer = new Dealer(deck!, hand!);
    assert.equal(dealer.deckSize, deck);
    assert.equal(dealer.handSize, hand);
  }
});

Deno.test("Dealer refuses sizes that are not integers", () => {
  for (const [deck, hand] of [[1.5, 1], [64, 2.5], [NaN, 1], [Infinity, 1], [64, -Infinity]]) {
    assert.throws(() => new Dealer(deck!, hand!), {
      name: "RangeError",
      message:
        `Cannot create a Dealer: sizes must be integers, got deckSize ${deck} and handSize ${hand}`,
    });
  }
  assert.throws(() => new Dealer("64" as unknown as number, 8), {
    name: "TypeError",
    message:
      'Cannot create a Dealer: sizes must be numbers, got deckSize string "64" and handSize 8',
  });
  assert.throws(() => new Dealer(64, 8n as unknown as number), {
    name: "TypeError",
    message: "Cannot create a Dealer: sizes must be numbers, got deckSize 64 and handSize 8n",
  });
});

Deno.test("Dealer refuses hashes that are not unsigned 64-bit bigints", () => {
  const dealer = new Dealer(64, 8);
  const pick = () => assert.fail("must not deal");
  const outOfRange: [bigint, string][] = [
    [-1n, "Cannot deal: hash must be in [0, 2^64), got -1"],
    [2n ** 64n, "Cannot deal: hash must be in [0, 2^64), got 18446744073709551616"],
    [-(2n ** 63n), "Cannot deal: hash must be in [0, 2^64), got -9223372036854775808"],
  ];
  for (const [hash, message] of outOfRange) {
    assert.throws(() => dealer.deal(hash, pick), { name: "RangeError", message });
    assert.throws(() => dealer.dealIntoHand(hash), { name: "RangeError", message });
  }
  const wrongType: [unknown, string][] = [
    [1, "Cannot deal: hash must be a bigint, got 1"],
    ["1", 'Cannot deal: hash must be a bigint, got string "1"'],
    [undefined, "Cannot deal: hash must be a bigint, got undefined"],
    [null, "Cannot deal: hash must be a bigint, got null"],
    [{}, "Cannot deal: hash must be a bigint, got object"],
  ];
  for (const [hash, message] of wrongType) {
    assert.throws(() => dealer.deal(hash as bigint, pick), { name: "TypeError", message });
    assert.throws(() => dealer.dealIntoHand(hash as bigint), { name: "TypeError", message });
  }
});

Deno.test("Dealer refuses hash halves that are not unsigned 32-bit integers", () => {
  const dealer = new Dealer(64, 8);
  const pick = () => assert.fail("must not deal");
  const bad: [number, number, string][] = [
    [-1, 0, "got hi -1 and lo 0"],
    [0, 2 ** 32, "got hi 0 and lo 4294967296"],
    [1.5, 0, "got hi 1.5 and lo 0"],
    [0, NaN, "got hi 0 and lo NaN"],
    [Infinity, 0, "got hi Infinity and lo 0"],
  ];
  for (const [hi, lo, got] of bad) {
    const message = `Cannot deal: hash halves must be integers in [0, 2^32), ${got}`;
    assert.throws(() => dealer.dealFromHalves(hi, lo, pick), { name: "RangeError", message });
    assert.throws(() => dealer.dealIntoHandFromHalves(hi, lo), { name: "RangeError", message });
  }
  assert.throws(() => dealer.dealFromHalves("1" as unknown as number, 0, pick), {
    name: "TypeError",
    message: 'Cannot deal: hash halves must be integers in [0, 2^32), got hi string "1" and lo 0',
  });
});

Deno.test("Dealer.cardFromHalves refuses a position outside the hand and bad halves", () => {
  const dealer = new Dealer(64, 8);
  for (const position of [-1, 8, 1.5, NaN]) {
    assert.throws(() => dealer.cardFromHalves(0, 1, position), {
      name: "RangeError",
      message: `Cannot deal: position must be an integer in [0, 8), got ${position}`,
    });
  }
  assert.throws(() => dealer.cardFromHalves(-1, 0, 0), {
    name: "RangeError",
    message: "Cannot deal: hash halves must be integers in [0, 2^32), got hi -1 and lo 0",
  });
});

Deno.test("deals use all 64 bits of the hash, not just 60", () => {
  const dealer = new Dealer(64, 8);
  for (const high of [2n ** 60n, 2n ** 63n, 0xfn << 60n]) {
    assert.notDeepEqual(dealer.dealIntoHand(high), dealer.dealIntoHand(0n));
    assert.deepEqual(dealer.dealIntoHand(high), referenceDeal(64, 8, high));
  }
});

Deno.test("property: every hand holds handSize distinct cards in [0, deckSize)", () => {
  fc.assert(
    fc.property(dealerSizes, uint64, ([deck, hand], hash) => {
      const cards = new Dealer(deck, hand).dealIntoHand(hash);
      assert.equal(cards.length, hand);
      assert.equal(new Set(cards).size, hand);
      for (const card of cards) assert.ok(Number.isInteger(card) && card >= 0 && card < deck);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("property: the number fast path equals a BigInt reference deal", () => {
  fc.assert(
    fc.property(dealerSizes, uint64, ([deck, hand], hash) => {
      const expected = referenceDeal(deck, hand, hash);
      for (const got of allDeals(new Dealer(deck, hand), hash)) assert.deepEqual(got, expected);
    }),
    { numRuns: 5000 },
  );
});

Deno.test("hashes below deck·(deck−1)·…(falling factorial) deal every ordered hand once", () => {
  // The deal is a bijection from [0, deck!/(deck−hand)!) onto ordered hands.
  for (const [deck, hand] of [[12, 4], [8, 8], [40, 3], [1, 1]]) {
    const dealer = new Dealer(deck!, hand!);
    let count = 1;
    for (let f = deck!; f > deck! - hand!; f--) count *= f;
    const seen = new Set<string>();
    const out = new Int32Array(hand!);
    for (let h = 0; h < count; h++) seen.add(dealer.dealIntoHandFromHalves(0, h, out).join());
    assert.equal(seen.size, count, `${deck}/${hand}`);
  }
});

Deno.test("hashes of one falling factorial give every unordered hand equally often", () => {
  // After Kubernetes' TestUniformDistribution: 128/3 over [0, 128·127·126).
  const deck = 128, hand = 3;
  const dealer = new Dealer(deck, hand);
  // Counts indexed by the sorted hand read as a base-128 number.
  const counts = new Int32Array(deck ** hand);
  const out = new Int32Array(hand);
  for (let h = 0; h < deck * (deck - 1) * (deck - 2); h++) {
    dealer.dealIntoHandFromHalves(0, h, out);
    const [a, b, c] = out as unknown as [number, number, number];
    const lo = Math.min(a, b, c), hi = Math.max(a, b, c);
    counts[(lo * deck + (a + b + c - lo - hi)) * deck + hi]! += 1;
  }
  let hands = 0;
  for (const n of counts) {
    if (n === 0) continue;
    hands++;
    assert.equal(n, 6); // once in each of the 3! orders
  }
  assert.equal(hands, (deck * (deck - 1) * (deck - 2)) / 6);
});

Deno.test("dealIntoHand reuses the hand it is given, like DealIntoHand", () => {
  const dealer = new Dealer(6, 6);
  const expected = referenceDeal(6, 6, 0n);
  for (const length of [0, 4, 6, 10]) {
    const given = Array.from({ length }, () => 99);
    const got = dealer.dealIntoHand(0n, given);
    assert.equal(got, given, `number[] of ${length}`);
    assert.deepEqual(got, expected);
  }
  assert.deepEqual(dealer.dealIntoHand(0n), expected);

  const exact = new Int32Array(6);
  assert.equal(dealer.dealIntoHand(0n, exact), exact);
  assert.deepEqual(Array.from(exact), expected);

  const longer = new Int32Array(10).fill(-1);
  const view = dealer.dealIntoHand(0n, longer);
  assert.equal(view.length, 6);
  assert.equal(view.buffer, longer.buffer);
  assert.deepEqual(Array.from(longer), [...expected, -1, -1, -1, -1]);

  const shorter = new Int32Array(4);
  const fresh = dealer.dealIntoHand(0n, shorter);
  assert.notEqual(fresh, shorter);
  assert.deepEqual(Array.from(fresh), expected);
  assert.deepEqual(Array.from(shorter), [0, 0, 0, 0]);
});

Deno.test("a pick may deal again from the same dealer", () => {
  const dealer = new Dealer(64, 8);
  const hash = 12345678901234567n;
  const outer: number[] = [];
  const inner: number[][] = [];
  dealer.deal(hash, (card) => {
    outer.push(card);
    const nested: number[] = [];
    dealer.deal(MAX_UINT64, (c) => nested.push(c));
    inner.push(nested, dealer.dealIntoHand(MAX_UINT64));
  });
  assert.deepEqual(outer, [7, 22, 1, 35, 53, 54, 9, 13]);
  for (const nested of inner) assert.deepEqual(nested, [63, 15, 55, 23, 31, 2, 39, 34]);
});

Deno.test("a pick that throws leaves the dealer usable", () => {
  const dealer = new Dealer(32, 3);
  assert.throws(() =>
    dealer.deal(1n, () => {
      throw new Error("boom");
    }), { message: "boom" });
  const cards: number[] = [];
  dealer.deal(12345678901234567n, (card) => cards.push(card));
  assert.deepEqual(cards, [7, 14, 19]);
});

Deno.test("property: cards asked for in any order, hashes repeated or not, are the reference deal's", () => {
  // A queue set with nobody waiting asks one card per arrival, the position turning each time:
  // the dealer keeps the digits of the last hash, and must never answer from another's.
  fc.assert(
    fc.property(
      dealerSizes,
      fc.array(uint64, { minLength: 1, maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 40 }),
      ([deck, hand], pool, asks) => {
        const dealer = new Dealer(deck, hand);
        const hands = pool.map((hash) => referenceDeal(deck, hand, hash));
        for (const [which, at] of asks) {
          const k = which % pool.length, position = at % hand;
          const [hi, lo] = halves(pool[k]!);
          assert.equal(dealer.cardFromHalves(hi, lo, position), hands[k]![position]);
        }
      },
    ),
    { numRuns: 1000 },
  );
});

Deno.test("a card asked for while a deal is being emitted leaves the deal's cards alone", () => {
  const dealer = new Dealer(128, 6);
  const [hi, lo] = halves(12345678901234567n);
  const [otherHi, otherLo] = halves(MAX_UINT64);
  const cards: number[] = [];
  const inner: number[] = [];
  dealer.dealFromHalves(hi, lo, (card, i) => {
    cards.push(card);
    // From the last position back: the first ask decodes every digit.
    inner.push(dealer.cardFromHalves(otherHi, otherLo, 5 - i));
  });
  assert.deepEqual(cards, referenceDeal(128, 6, 12345678901234567n));
  assert.deepEqual(inner, referenceDeal(128, 6, MAX_UINT64).reverse());
});
