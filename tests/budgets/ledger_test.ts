/**
 * The budget ledger's rule, by examples and by a model: holders taking
 * `settle` steps on one ledger in a memory store, with reads and writes
 * interleaved, holders dying, links and the store going down, and clocks
 * that disagree within the skew bound, never have more seats in use than
 * the level's limit.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { isExpired, type LeaseTerms, settle, type Settlement } from "../../src/budgets/ledger.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";

const TERMS: LeaseTerms = { leaseMs: 3_000, drainMs: 1_000, skewMs: 200 };

const me = (id: string, now: number, inUse: number, demand: number, limit = 10) => ({
  id,
  now,
  inUse,
  demand,
  limit,
});

Deno.test("settle: the first holder takes its demand and headroom; the rest stays free", () => {
  const s = settle(null, me("a", 0, 0, 4), TERMS);
  assert.equal(s.target, 5);
  assert.equal(s.capacity, 5);
  assert.equal(s.claim, 5);
  assert.equal(s.expiresAt, 3_000);
  assert.deepEqual(s.ledger.holders.a, { claim: 5, demand: 4, limit: 10, expiresAt: 3_000 });
});

Deno.test("settle: a holder grows only into seats nobody claims; the other drains to its share", () => {
  const a = settle(null, me("a", 0, 0, 100), TERMS);
  assert.equal(a.claim, 10, "alone, the elephant takes the level");
  // The mouse arrives: its share is 5, but every seat is claimed.
  const b = settle(a.ledger, me("b", 10, 0, 5), TERMS);
  assert.equal(b.target, 5);
  assert.equal(b.capacity, 0, "nothing free yet");
  assert.equal(b.claim, 0);
  // The elephant, 10 seats in use, sees its share fall to 5: capacity at once, claim as it drains.
  const a2 = settle(b.ledger, me("a", 1_000, 10, 100), TERMS);
  assert.equal(a2.target, 5);
  assert.equal(a2.capacity, 5);
  assert.equal(a2.claim, 10, "its seats in use still count");
  const a3 = settle(a2.ledger, me("a", 2_000, 5, 100), TERMS);
  assert.equal(a3.claim, 5, "drained to its share");
  const b2 = settle(a3.ledger, me("b", 2_010, 0, 5), TERMS);
  assert.equal(b2.capacity, 5, "the mouse gets the freed seats");
});

Deno.test("settle: claims count until lease + drain + skew on the reader's clock; then they go", () => {
  const a = settle(null, me("a", 0, 10, 10), TERMS);
  const at = (now: number) => settle(a.ledger, me("b", now, 0, 10), TERMS);
  assert.equal(at(4_200).capacity, 0, "lease 3,000 + drain 1,000 + skew 200: still counted");
  assert.deepEqual(at(4_200).expired, []);
  const later = at(4_201);
  assert.equal(later.capacity, 10);
  assert.deepEqual(later.expired, ["a"]);
  assert.equal(later.ledger.holders.a, undefined, "the expired line is dropped");
  assert.equal(isExpired(a.ledger.holders.a!, 4_201, TERMS), true);
});

Deno.test("settle: the smallest limit of the live holders holds", () => {
  const a = settle(null, me("a", 0, 0, 100, 6), TERMS);
  assert.equal(a.claim, 6);
  const b = settle(a.ledger, me("b", 0, 0, 100, 10), TERMS);
  assert.equal(b.limit, 6);
  assert.equal(b.capacity, 0);
});

// ---- the model ---------------------------------------------------------------------------------

const LEVEL = "workload";

interface ModelHolder {
  id: string;
  /** Its clock minus the true time, within ±skew/2 so that two clocks differ by at most skew. */
  offset: number;
  alive: boolean;
  linkUp: boolean;
  capacity: number;
  /** Lease end on its clock; it admits only before it. */
  leaseEnd: number;
  /** End times (true time) of the requests holding its seats. */
  running: number[];
  /** Requests refused since its last settle (its demand beyond what runs). */
  refused: number;
  /** A settle read but not written yet. */
  pending: { version: string | null; settlement: Settlement } | null;
}

type Step =
  | { t: "advance"; ms: number }
  | { t: "arrive"; h: number; holdMs: number }
  | { t: "read"; h: number }
  | { t: "write"; h: number }
  | { t: "die"; h: number }
  | { t: "restart"; h: number }
  | { t: "link"; h: number; up: boolean }
  | { t: "store"; up: boolean };

const HOLDERS = 4;

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("advance" as const),
      ms: fc.integer({ min: 0, max: 200 }),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      t: fc.constant("arrive" as const),
      h: fc.integer({ min: 0, max: HOLDERS - 1 }),
      // A request holds its seat at most the drain time.
      holdMs: fc.integer({ min: TERMS.drainMs / 2, max: TERMS.drainMs }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant("read" as const),
      h: fc.integer({ min: 0, max: HOLDERS - 1 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant("write" as const),
      h: fc.integer({ min: 0, max: HOLDERS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("die" as const),
      h: fc.integer({ min: 0, max: HOLDERS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("restart" as const),
      h: fc.integer({ min: 0, max: HOLDERS - 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("link" as const),
      h: fc.integer({ min: 0, max: HOLDERS - 1 }),
      up: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("store" as const), up: fc.boolean() }) },
);

/** Runs `steps`; returns the most seats in use at once, after checking the limit at every step. */
function runModel(limit: number, offsets: number[], steps: Step[]): { peak: number } {
  const store = new MemoryBudgetStore();
  let now = 0;
  let storeUp = true;
  let peak = 0;
  const holders: ModelHolder[] = offsets.map((offset, i) => ({
    id: `h${i}`,
    offset,
    alive: true,
    linkUp: true,
    capacity: 0,
    leaseEnd: -Infinity,
    running: [],
    refused: 0,
    pending: null,
  }));
  const clock = (h: ModelHolder) => now + h.offset;
  const reachable = (h: ModelHolder) => h.alive && h.linkUp && storeUp;
  for (const step of steps) {
    switch (step.t) {
      case "advance":
        now += step.ms;
        for (const h of holders) h.running = h.running.filter((end) => end > now);
        break;
      case "arrive": {
        const h = holders[step.h]!;
        if (!h.alive) break;
        const admitting = clock(h) < h.leaseEnd ? h.capacity : 0; // closed once the lease ends
        if (h.running.length < admitting) h.running.push(now + step.holdMs);
        else h.refused++;
        break;
      }
      case "read": {
        const h = holders[step.h]!;
        if (!reachable(h) || h.pending !== null) break;
        const stored = store.peek(LEVEL);
        const settlement = settle(stored?.ledger ?? null, {
          id: h.id,
          now: clock(h),
          inUse: h.running.length,
          demand: h.running.length + h.refused,
          limit,
        }, TERMS);
        h.refused = 0;
        h.capacity = Math.min(h.capacity, settlement.capacity); // a lower capacity at once
        h.pending = { version: stored?.version ?? null, settlement };
        break;
      }
      case "write": {
        const h = holders[step.h]!;
        if (h.pending === null) break;
        const { version, settlement } = h.pending;
        h.pending = null;
        if (!reachable(h)) break; // the write fails
        if (store.writeNow(LEVEL, version, settlement.ledger)) {
          h.capacity = settlement.capacity;
          h.leaseEnd = settlement.expiresAt;
        }
        break;
      }
      case "die": {
        const h = holders[step.h]!;
        h.alive = false;
        h.running = [];
        h.pending = null;
        break;
      }
      case "restart": {
        // A dead holder's process starts again: a new holder, with a new id and nothing held.
        const h = holders[step.h]!;
        if (h.alive) break;
        Object.assign(h, {
          id: `${h.id}+`,
          alive: true,
          linkUp: true,
          capacity: 0,
          leaseEnd: -Infinity,
          refused: 0,
        });
        break;
      }
      case "link":
        holders[step.h]!.linkUp = step.up;
        break;
      case "store":
        storeUp = step.up;
        break;
    }
    const inUse = holders.reduce((sum, h) => sum + h.running.length, 0);
    peak = Math.max(peak, inUse);
    assert.ok(inUse <= limit, `${inUse} seats in use over the limit ${limit} at ${now} ms`);
  }
  return { peak };
}

Deno.test("model: seats in use never exceed the limit, whatever interleaves", () => {
  let runs = 0, full = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }),
      fc.array(fc.integer({ min: -TERMS.skewMs / 2, max: TERMS.skewMs / 2 }), {
        minLength: HOLDERS,
        maxLength: HOLDERS,
      }),
      fc.array(stepArb, { minLength: 50, maxLength: 300, size: "max" }),
      (limit, offsets, steps) => {
        runs++;
        if (runModel(limit, offsets, steps).peak === limit) full++;
      },
    ),
    { numRuns: 2000 },
  );
  // Not vacuous: many runs fill the level at some point (more than half without the faults; the
  // deaths and outages leave fewer holders to fill it).
  assert.ok(full > runs / 5, `${full} of ${runs} runs reached the limit`);
});

Deno.test("model: with a clock skew past the bound, the limit can be broken (the bound is needed)", () => {
  // h0's clock is 2 s behind: its lease (3 s on its clock) ends at 3,000 ms true time, but h1
  // takes its claim back at 2,200 ms (h0's expiresAt 1,000 + drain 1,000 + skew 200, on h1's clock).
  const limit = 2;
  const offsets = [-2_000, 0, 0, 0];
  const steps: Step[] = [
    { t: "arrive", h: 0, holdMs: 1 }, // refused: its demand
    { t: "read", h: 0 },
    { t: "write", h: 0 },
    { t: "link", h: 0, up: false },
    { t: "advance", ms: 2_300 },
    { t: "arrive", h: 1, holdMs: 1_000 },
    { t: "read", h: 1 },
    { t: "write", h: 1 },
    { t: "arrive", h: 1, holdMs: 1_000 },
    { t: "arrive", h: 1, holdMs: 1_000 },
    { t: "arrive", h: 0, holdMs: 1_000 }, // h0's clock says 300: its lease has 700 ms left
  ];
  assert.throws(() => runModel(limit, offsets, steps), /over the limit/);
});

Deno.test("model: a holder draining to a lower share keeps claiming its seats in use", () => {
  const limit = 4;
  const steps: Step[] = [
    // h0 alone: 4 requests, then its claim covers them.
    ...Array.from({ length: 4 }, (): Step => ({ t: "arrive", h: 0, holdMs: 1_000 })),
    { t: "read", h: 0 },
    { t: "write", h: 0 },
    ...Array.from({ length: 4 }, (): Step => ({ t: "arrive", h: 0, holdMs: 1_000 })),
    // h1 wants 4 too: its share is 2, but nothing is free.
    ...Array.from({ length: 4 }, (): Step => ({ t: "arrive", h: 1, holdMs: 1_000 })),
    { t: "read", h: 1 },
    { t: "write", h: 1 },
    // h0 settles: share 2, capacity 2 at once, but 4 seats still in use: it claims 4.
    { t: "read", h: 0 },
    { t: "write", h: 0 },
    // h1 still wants 4: it may take only what h0 no longer claims.
    ...Array.from({ length: 4 }, (): Step => ({ t: "arrive", h: 1, holdMs: 1_000 })),
    { t: "read", h: 1 },
    { t: "write", h: 1 },
    ...Array.from({ length: 4 }, (): Step => ({ t: "arrive", h: 1, holdMs: 1_000 })),
  ];
  const { peak } = runModel(limit, [0, 0, 0, 0], steps);
  assert.equal(peak, 4);
});
