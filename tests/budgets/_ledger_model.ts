/**
 * A model of one level's budget holders taking `settle` steps
 * (src/budgets/ledger.ts) on one ledger in a memory store: reads and writes
 * interleaved, holders dying and restarting, links and the store going down,
 * clocks that disagree within the skew bound, and a level limit that moves
 * (borrowing between levels, docs/semantics.md §6, recomputes it every
 * period; each holder learns the new value in its own step, and passes the
 * value it knows to `settle`, which holds the claims to the smallest limit
 * of the live ledger lines).
 *
 * What `runModel` checks at every step, and why it holds:
 *
 * 1. Seats in use never exceed the highest limit in force during the last
 *    W = lease + drain + skew. A limit is in force while it is the level's
 *    true limit, and also while a live holder still knows it: a holder that
 *    has not adopted a lower limit yet settles with its old one, and nothing
 *    tells the ledger about a limit nobody passes to `settle`. It follows
 *    from 2: the seats in use now were last raised by an admission less than
 *    the drain time ago (a seat admitted before has ended), which stayed
 *    within the limit its holder settled with; that holder admitted before
 *    its lease ended, so less than lease + drain after it read the ledger,
 *    alive and knowing that limit. (A holder cut off from the store is the
 *    case W is for: it admits on its last capacity until its lease ends.)
 *    With a fixed limit this is the ledger's rule: seats in use ≤ the limit.
 * 2. An admission never takes the seats in use above the limit its holder
 *    settled with (the limit it passed to its last written settle). When it
 *    wrote, its capacity and the other holders' claims summed to at most that
 *    limit. Every later write keeps them so: the writer sees this holder's
 *    line, live until after its lease by the drain and skew bound, so the
 *    smallest limit it settles under is no higher, and it either grows its
 *    claim only into unclaimed seats or keeps its claim as its seats drain.
 *    And a holder's seats in use never exceed its claim in the ledger.
 * 3. Hence, on a settled level: once every live holder has adopted the
 *    current limit L and written a settle computed with it (read after the
 *    adoption), and W has passed since L last changed, no admission takes
 *    the seats in use above L (2 gives it without W or the other holders).
 *    Seats admitted before may still be above L: they drain, as a lower
 *    limit in Kubernetes stops new admissions and lets running requests end.
 *
 * @module
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { type LeaseTerms, settle, type Settlement } from "../../src/budgets/ledger.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";

/** The lease, drain and skew of every model run. */
export const TERMS: LeaseTerms = { leaseMs: 3_000, drainMs: 1_000, skewMs: 200 };

/** How long a limit stays in force after it stopped being known (see the module doc, 1). */
export const WINDOW_MS = TERMS.leaseMs + TERMS.drainMs + TERMS.skewMs;

/** Holders in a model run. */
export const HOLDERS = 4;

/** The highest limit the moving-limit steps set. */
export const MAX_LIMIT = 8;

const LEVEL = "workload";

/** One step of the model. */
export type Step =
  | { t: "advance"; ms: number }
  | { t: "arrive"; h: number; holdMs: number }
  | { t: "read"; h: number }
  | { t: "write"; h: number }
  | { t: "die"; h: number }
  | { t: "restart"; h: number }
  | { t: "link"; h: number; up: boolean }
  | { t: "store"; up: boolean }
  /** The level's true limit changes (borrowing moved it). */
  | { t: "limit"; value: number }
  /** Holder `h` learns the current true limit. */
  | { t: "adopt"; h: number };

/** What a step left, for a test that follows a run. */
export interface StepView {
  /** The step's index in the run. */
  index: number;
  /** True time, in ms. */
  now: number;
  /** Seats in use over all holders. */
  inUse: number;
  /** Seats in use by each holder. */
  byHolder: number[];
  /** Each holder's capacity (0 for a dead one). */
  capacities: number[];
  /** The level's true limit. */
  limit: number;
  /** Whether the step was an arrival that got a seat. */
  admitted: boolean;
}

/** What a run saw, for the tests that check the runs are not vacuous. */
export interface ModelRun {
  /** The most seats in use at once. */
  peak: number;
  /** The limit fell while seats were in use, and later an admission filled the new limit exactly. */
  refilledAfterFall: boolean;
  /** The limit rose, and later an admission filled the new limit exactly. */
  filledAfterRise: boolean;
  /** Admissions checked against the settled level's form (module doc, 3). */
  settledChecks: number;
}

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
  /** The level's limit as it knows it: what it passes to `settle`. */
  limit: number;
  /** The limit it passed to its last written settle (none yet: Infinity). */
  settledLimit: number;
  /** A settle read but not written yet, and the limit it was computed with. */
  pending: { version: string | null; settlement: Settlement; limit: number } | null;
}

const holderArb = fc.integer({ min: 0, max: HOLDERS - 1 });
const advance = (max: number) =>
  fc.record({ t: fc.constant("advance" as const), ms: fc.integer({ min: 0, max }) });
const arrive = fc.record({
  t: fc.constant("arrive" as const),
  h: holderArb,
  // A request holds its seat at most the drain time.
  holdMs: fc.integer({ min: TERMS.drainMs / 2, max: TERMS.drainMs }),
});
const read = fc.record({ t: fc.constant("read" as const), h: holderArb });
const write = fc.record({ t: fc.constant("write" as const), h: holderArb });
const die = fc.record({ t: fc.constant("die" as const), h: holderArb });
const restart = fc.record({ t: fc.constant("restart" as const), h: holderArb });
const link = fc.record({ t: fc.constant("link" as const), h: holderArb, up: fc.boolean() });
const storeUpDown = fc.record({ t: fc.constant("store" as const), up: fc.boolean() });

/** The steps of a level whose limit does not move. */
export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: advance(200) },
  { weight: 10, arbitrary: arrive },
  { weight: 4, arbitrary: read },
  { weight: 4, arbitrary: write },
  { weight: 1, arbitrary: die },
  { weight: 1, arbitrary: restart },
  { weight: 1, arbitrary: link },
  { weight: 1, arbitrary: storeUpDown },
);

/**
 * The steps of a level whose limit moves: the same kinds, plus limit
 * changes and holders adopting them. Time moves faster and the limit
 * rarely, so that runs often see a limit fall under load, drain and fill
 * again, and reach a level settled on its limit for W.
 */
export const movingStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: advance(500) },
  { weight: 30, arbitrary: arrive },
  { weight: 12, arbitrary: read },
  { weight: 12, arbitrary: write },
  { weight: 1, arbitrary: die },
  { weight: 1, arbitrary: restart },
  { weight: 1, arbitrary: link },
  { weight: 1, arbitrary: storeUpDown },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("limit" as const),
      value: fc.integer({ min: 1, max: MAX_LIMIT }),
    }),
  },
  { weight: 10, arbitrary: fc.record({ t: fc.constant("adopt" as const), h: holderArb }) },
);

/**
 * Runs `steps` from a true limit `limit` that every holder knows, checking
 * the module doc's three rules at every step (an `AssertionError` when one
 * breaks); `onStep` sees the state after each step.
 */
export function runModel(
  limit: number,
  offsets: number[],
  steps: Step[],
  onStep?: (view: StepView) => void,
): ModelRun {
  const store = new MemoryBudgetStore();
  let now = 0;
  let storeUp = true;
  let trueLimit = limit;
  let lastChange = -Infinity;
  const run: ModelRun = {
    peak: 0,
    refilledAfterFall: false,
    filledAfterRise: false,
    settledChecks: 0,
  };
  // The limit a run waits to see filled: after a fall while seats were in use, or a rise.
  let watching: { limit: number; fell: boolean } | null = null;
  const holders: ModelHolder[] = offsets.map((offset, i) => ({
    id: `h${i}`,
    offset,
    alive: true,
    linkUp: true,
    capacity: 0,
    leaseEnd: -Infinity,
    running: [],
    refused: 0,
    limit,
    settledLimit: Infinity,
    pending: null,
  }));
  const clock = (h: ModelHolder) => now + h.offset;
  const reachable = (h: ModelHolder) => h.alive && h.linkUp && storeUp;
  const seatsInUse = () => holders.reduce((sum, h) => sum + h.running.length, 0);
  // The highest limit in force now: the true one, or one a live holder still settles with.
  const inForce = () =>
    holders.reduce((max, h) => (h.alive ? Math.max(max, h.limit) : max), trueLimit);
  // The limits no longer in force, each with the last time it was.
  const past: { until: number; limit: number }[] = [];
  for (const [index, step] of steps.entries()) {
    const before = inForce();
    let admitter: ModelHolder | null = null;
    switch (step.t) {
      case "advance":
        now += step.ms;
        for (const h of holders) h.running = h.running.filter((end) => end > now);
        break;
      case "arrive": {
        const h = holders[step.h]!;
        if (!h.alive) break;
        const admitting = clock(h) < h.leaseEnd ? h.capacity : 0; // closed once the lease ends
        if (h.running.length < admitting) {
          h.running.push(now + step.holdMs);
          admitter = h;
        } else h.refused++;
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
          limit: h.limit,
        }, TERMS);
        h.refused = 0;
        h.capacity = Math.min(h.capacity, settlement.capacity); // a lower capacity at once
        h.pending = { version: stored?.version ?? null, settlement, limit: h.limit };
        break;
      }
      case "write": {
        const h = holders[step.h]!;
        if (h.pending === null) break;
        const { version, settlement, limit } = h.pending;
        h.pending = null;
        if (!reachable(h)) break; // the write fails
        if (store.writeNow(LEVEL, version, settlement.ledger)) {
          h.capacity = settlement.capacity;
          h.leaseEnd = settlement.expiresAt;
          h.settledLimit = limit;
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
        // A dead holder's process starts again: a new holder, with a new id and nothing held; it
        // computes the current limit at start.
        const h = holders[step.h]!;
        if (h.alive) break;
        Object.assign(h, {
          id: `${h.id}+`,
          alive: true,
          linkUp: true,
          capacity: 0,
          leaseEnd: -Infinity,
          refused: 0,
          limit: trueLimit,
          settledLimit: Infinity,
        });
        break;
      }
      case "link":
        holders[step.h]!.linkUp = step.up;
        break;
      case "store":
        storeUp = step.up;
        break;
      case "limit":
        if (step.value === trueLimit) break;
        watching = step.value > trueLimit || seatsInUse() > 0
          ? { limit: step.value, fell: step.value < trueLimit }
          : null;
        trueLimit = step.value;
        lastChange = now;
        break;
      case "adopt": {
        const h = holders[step.h]!;
        if (h.alive) h.limit = trueLimit;
        break;
      }
    }
    const inUse = seatsInUse();
    run.peak = Math.max(run.peak, inUse);
    // 1. Within the highest limit in force since now − W.
    const after = inForce();
    if (after !== before) past.push({ until: now, limit: before });
    while (past.length > 0 && past[0]!.until < now - WINDOW_MS) past.shift();
    const bound = past.reduce((max, p) => Math.max(max, p.limit), after);
    assert.ok(
      inUse <= bound,
      `${inUse} seats in use over the limit ${bound} (the highest in force since ${
        now - WINDOW_MS
      } ms) at ${now} ms`,
    );
    if (admitter !== null) {
      // 2. An admission stays within the limit its holder settled with.
      assert.ok(
        inUse <= admitter.settledLimit,
        `an admission by ${admitter.id} took the seats in use to ${inUse}, over the limit ${admitter.settledLimit} it settled with, at ${now} ms`,
      );
      // 3. On a settled level, within the current limit.
      const settled = holders.every((h) =>
        !h.alive || (h.limit === trueLimit && h.settledLimit === trueLimit)
      );
      if (settled && now >= lastChange + WINDOW_MS) {
        run.settledChecks++;
        assert.ok(
          inUse <= trueLimit,
          `an admission took the seats in use to ${inUse}, over the settled limit ${trueLimit}, at ${now} ms`,
        );
      }
      if (watching !== null && watching.limit === trueLimit && inUse === trueLimit) {
        if (watching.fell) run.refilledAfterFall = true;
        else run.filledAfterRise = true;
        watching = null;
      }
    }
    onStep?.({
      index,
      now,
      inUse,
      byHolder: holders.map((h) => h.running.length),
      capacities: holders.map((h) => (h.alive ? h.capacity : 0)),
      limit: trueLimit,
      admitted: admitter !== null,
    });
  }
  return run;
}
