/**
 * A model of one level's budget holders taking `settle` steps
 * (src/budgets/ledger.ts) on one ledger in a memory store, each judging the
 * others' lines with its own `LineWatch` (src/budgets/line_watch.ts) on its
 * own clock, and running its lease as `BudgetHolder` does (from the start
 * of its last successful write; at its end no admission on the budget, and
 * the unreachable policy only once an operation started after the end has
 * failed). The faults: reads and writes interleaved, holders dying and
 * restarting, links and the store going down, clocks apart by minutes
 * either way and running up to 1% fast or slow, holders frozen for any
 * length (a frozen holder takes no step, but the requests it admitted end
 * on time: the upstream is not frozen), a store that forgets every ledger,
 * forged lines (a claim of 1e9 seats, a malformed line, a value that is no
 * ledger), and a level limit that moves (borrowing between levels,
 * docs/semantics.md §6; each holder learns the new value in its own step,
 * and passes the value it knows to `settle`, which holds the claims to the
 * smallest limit of the live ledger lines).
 *
 * What `runModel` checks at every step, and why it holds:
 *
 * 1. Seats admitted on a budget never exceed the highest limit in force
 *    during the last W, the window (lease + drain + margin on a reader's
 *    clock) stretched by the clocks' rates: a limit is in force while it is
 *    the level's true limit, while a live holder still knows it, and when
 *    a write of a settle computed with it lands: a holder may learn a new
 *    limit between its read and its write (`BudgetHolder`'s borrowing
 *    timer may fire while the write awaits), and the write, however late,
 *    grants the capacity computed with the old limit for a lease from its
 *    start; the new limit applies from its next settle.
 *    The seats in use now were last raised by an admission less than the
 *    drain time ago, within its holder's capacity, which its last write
 *    granted: the other holders count that line until they have seen it
 *    unchanged for a window on their clocks, which (the margin covers the
 *    rates) is after its lease ended and its requests drained.
 *    Seats admitted by the `local` policy come on top, at most its fallback
 *    seats per holder whose lease ended with the store out of reach; with
 *    `closed` there are none, so every seat in use is within the bound.
 * 2. An admission on a budget never takes the budget seats in use above the
 *    limit its holder settled with, unless it settled under a recovery
 *    mark: then the others' claims are not in the ledger, and only rule 1
 *    binds (the claims remembered were granted under a limit in force).
 * 3. On a settled level (every live holder has adopted the current limit L
 *    and written a settle computed with it, none under a recovery mark, and
 *    W has passed since L last changed) no admission on a budget takes them
 *    above L.
 *
 * A store that forgot: a holder whose lease runs and whose line is gone
 * writes it back under a recovery mark, and nobody grows past what it
 * remembers while the mark is in force. A holder that wrote before and
 * finds no line a holder could write (no ledger, or a forger's written over
 * the store that forgot) starts the mark too, though it remembers nothing. A holder that never wrote cannot
 * tell such a store from a new one (ledger.ts says so): the model lets no
 * such holder read or write within W after the store forgot. That is the
 * one fault the guarantee assumes away.
 *
 * Liveness, `heal`: once the faults end, every holder alive and wanting
 * the whole level, with one read and write each per period, the level's
 * seats are all usable again, each holder with at least an equal share,
 * within {@linkcode HEAL_PERIODS} periods.
 *
 * @module
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { type LeaseTerms, settle, type Settlement } from "../../src/budgets/ledger.ts";
import { LineWatch } from "../../src/budgets/line_watch.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";

/** A forger's line: valid in shape, a billion seats, its lease "ending" in the year 30000. */
export const FORGED_LINE = {
  claim: 1e9,
  demand: 0,
  limit: 1e9,
  beat: 1,
  leaseMs: 2_000,
  drainMs: 0,
  expiresAt: 9.4e14,
};

/** The lease, drain and margin of every model run. */
export const TERMS: LeaseTerms = { leaseMs: 3_000, drainMs: 1_000, marginMs: 400 };

/** The most a holder's clock runs fast or slow: 1%. */
export const MAX_DRIFT = 0.01;

/** The window in true time: lease + drain + margin on the slowest clock. */
export const WINDOW_MS = Math.ceil(
  (TERMS.leaseMs + TERMS.drainMs + TERMS.marginMs) / (1 - MAX_DRIFT),
);

/** Holders in a model run. */
export const HOLDERS = 4;

/** The highest limit the moving-limit steps set (the level's MaxCL). */
export const MAX_LIMIT = 8;

/** The settle period of the healing phase, in ms of true time. */
export const HEAL_PERIOD_MS = 1_000;

/**
 * Periods after the faults end within which the level is whole again: a
 * window for the lines, marks and forgeries last seen, one for a holder's
 * seats to drain, one to settle on it.
 */
export const HEAL_PERIODS: number = Math.ceil(WINDOW_MS / HEAL_PERIOD_MS) + 3;

const LEVEL = "workload";

/** A holder's clock: `offset + rate × true time`. */
export interface ModelClock {
  /** Its time at true time 0, in ms (minutes apart are fine). */
  offset: number;
  /** How fast it runs: within 1 ± {@linkcode MAX_DRIFT}. */
  rate: number;
}

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
  /** Holder `h` stops taking steps (`on`), or takes them again. */
  | { t: "freeze"; h: number; on: boolean }
  /** The store forgets every ledger (restarted without its data). */
  | { t: "amnesia" }
  /** Someone with access to the store forges the ledger. */
  | { t: "forge"; kind: "huge" | "malformed" | "garbage" }
  /** The level's true limit changes (borrowing moved it). */
  | { t: "limit"; value: number }
  /** Holder `h` learns the current true limit. */
  | { t: "adopt"; h: number };

/** The unreachable policy of a run, and its fallback seats per holder. */
export interface ModelOptions {
  /** `closed` (default) or `local`. */
  policy?: "closed" | "local";
  /** The `local` policy's seats per holder (default 1). */
  fallbackSeats?: number;
  /** Other lease terms (default {@linkcode TERMS}). */
  terms?: LeaseTerms;
  /** After the steps, heal and check liveness (default false). */
  heal?: boolean;
}

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
  /** Admissions by the `local` policy. */
  fallbackAdmissions: number;
  /** Settles that wrote a claim back under a recovery mark. */
  writeBacks: number;
  /** Periods the healing phase took to make the level whole (`heal` only). */
  healedIn: number | null;
}

interface Running {
  /** True time it ends. */
  end: number;
  /** Admitted by the fallback policy. */
  fallback: boolean;
}

interface ModelHolder {
  id: string;
  clock: ModelClock;
  alive: boolean;
  linkUp: boolean;
  frozen: boolean;
  watch: LineWatch;
  /** `none` before its first write; `budget`; `fallback` once its policy applies. */
  mode: "none" | "budget" | "fallback";
  /** Seats it may have in use (its local limit). */
  capacity: number;
  /** Its clock at the start of its last successful write, or `null`. */
  leaseFrom: number | null;
  lastClaim: number;
  lastBeat: number;
  running: Running[];
  /** Requests refused since its last settle (its demand beyond what runs). */
  refused: number;
  /** The level's limit as it knows it: what it passes to `settle`. */
  limit: number;
  /** The limit it passed to its last written settle (none yet: Infinity). */
  settledLimit: number;
  /** Its last written settle was under a recovery mark. */
  recovering: boolean;
  /** A settle read but not written yet: the version, the settle, its limit, its start. */
  pending:
    | { version: string | null; settlement: Settlement; limit: number; startedAt: number }
    | null;
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
const freeze = fc.record({ t: fc.constant("freeze" as const), h: holderArb, on: fc.boolean() });
const amnesia = fc.constant({ t: "amnesia" as const });
const forge = fc.record({
  t: fc.constant("forge" as const),
  kind: fc.constantFrom("huge" as const, "malformed" as const, "garbage" as const),
});

/** Clocks minutes apart, each within 1% of the true rate. */
export const clocksArb: fc.Arbitrary<ModelClock[]> = fc.array(
  fc.record({
    offset: fc.integer({ min: -600_000, max: 600_000 }),
    rate: fc.double({ min: 1 - MAX_DRIFT, max: 1 + MAX_DRIFT, noNaN: true }),
  }),
  { minLength: HOLDERS, maxLength: HOLDERS },
);

/** The rarer faults: a freeze or a thaw, a store that forgets, a forgery. */
const rareFault = fc.oneof(
  { weight: 4, arbitrary: freeze },
  { weight: 1, arbitrary: amnesia },
  { weight: 1, arbitrary: forge },
);

/** The steps of a level whose limit does not move, faults included. */
export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 9, arbitrary: advance(200) },
  { weight: 1, arbitrary: advance(WINDOW_MS) },
  { weight: 30, arbitrary: arrive },
  { weight: 12, arbitrary: read },
  { weight: 12, arbitrary: write },
  { weight: 1, arbitrary: die },
  { weight: 1, arbitrary: restart },
  { weight: 1, arbitrary: link },
  { weight: 1, arbitrary: storeUpDown },
  { weight: 2, arbitrary: rareFault },
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
  { weight: 1, arbitrary: rareFault },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("limit" as const),
      value: fc.integer({ min: 1, max: MAX_LIMIT }),
    }),
  },
  { weight: 10, arbitrary: fc.record({ t: fc.constant("adopt" as const), h: holderArb }) },
);

/** Honest clocks: all agree, at the true rate. */
export function sameClocks(count: number): ModelClock[] {
  return Array.from({ length: count }, () => ({ offset: 0, rate: 1 }));
}

/**
 * Runs `steps` from a true limit `limit` that every holder knows, checking
 * the module doc's rules at every step (an `AssertionError` when one
 * breaks); `onStep` sees the state after each step.
 */
export function runModel(
  limit: number,
  clocks: readonly ModelClock[],
  steps: readonly Step[],
  options: ModelOptions = {},
  onStep?: (view: StepView) => void,
): ModelRun {
  const terms = options.terms ?? TERMS;
  const policy = options.policy ?? "closed";
  const fallbackSeats = policy === "closed" ? 0 : options.fallbackSeats ?? 1;
  const window = Math.ceil((terms.leaseMs + terms.drainMs + terms.marginMs) / (1 - MAX_DRIFT));
  const store = new MemoryBudgetStore();
  let now = 0;
  let storeUp = true;
  let trueLimit = limit;
  let lastChange = -Infinity;
  /** Until when a holder that never wrote may not read: W after the store forgot. */
  let blindUntil = -Infinity;
  let forgeries = 0;
  const run: ModelRun = {
    peak: 0,
    refilledAfterFall: false,
    filledAfterRise: false,
    settledChecks: 0,
    fallbackAdmissions: 0,
    writeBacks: 0,
    healedIn: null,
  };
  // The limit a run waits to see filled: after a fall while seats were in use, or a rise.
  let watching: { limit: number; fell: boolean } | null = null;
  const fresh = (id: string, clock: ModelClock, known: number): ModelHolder => ({
    id,
    clock,
    alive: true,
    linkUp: true,
    frozen: false,
    watch: new LineWatch(),
    mode: "none",
    capacity: 0,
    leaseFrom: null,
    lastClaim: 0,
    lastBeat: 0,
    running: [],
    refused: 0,
    limit: known,
    settledLimit: Infinity,
    recovering: false,
    pending: null,
  });
  const holders = clocks.map((clock, i) => fresh(`h${i}`, clock, limit));
  const clockOf = (h: ModelHolder) => h.clock.offset + h.clock.rate * now;
  const reachable = (h: ModelHolder) => h.alive && h.linkUp && storeUp && !h.frozen;
  const leaseRuns = (h: ModelHolder) =>
    h.leaseFrom !== null && clockOf(h) - h.leaseFrom < terms.leaseMs;
  const seatsInUse = () => holders.reduce((sum, h) => sum + h.running.length, 0);
  const budgetSeats = () =>
    holders.reduce((sum, h) => sum + h.running.filter((r) => !r.fallback).length, 0);
  // The highest limit in force now: the true one, or one a live holder still knows.
  const inForce = () =>
    holders.reduce((max, h) => (h.alive ? Math.max(max, h.limit) : max), trueLimit);
  // The limits no longer in force, each with the last time it was.
  const past: { until: number; limit: number }[] = [];
  // The limit the settle a write landed in this step was computed with: in force as it lands,
  // though its holder may have learnt another since its read.
  let landedWith: number | null = null;

  /** A store operation started at `startedAt` (its clock) failed. */
  const failed = (h: ModelHolder, startedAt: number) => {
    if (leaseRuns(h)) return; // it keeps its seats until its lease ends
    // Its lease ended after the operation started: it tries once more before any policy.
    if (h.mode === "budget" && h.leaseFrom !== null && startedAt < h.leaseFrom + terms.leaseMs) {
      return;
    }
    h.mode = "fallback";
    h.capacity = fallbackSeats;
  };
  const doRead = (h: ModelHolder) => {
    if (!h.alive || h.frozen || h.pending !== null) return;
    if (h.lastBeat === 0 && now < blindUntil) return; // the fault the guarantee assumes away
    const startedAt = clockOf(h);
    if (!reachable(h)) return failed(h, startedAt);
    const stored = store.peek(LEVEL);
    const settlement = settle(
      stored,
      {
        id: h.id,
        now: clockOf(h),
        wallNow: clockOf(h),
        inUse: h.running.length,
        demand: h.running.length + h.refused,
        limit: h.limit,
        maxLimit: MAX_LIMIT,
        remembered: leaseRuns(h) ? h.lastClaim : null,
        lastBeat: h.lastBeat,
      },
      terms,
      h.watch,
    );
    h.refused = 0;
    h.capacity = Math.min(h.capacity, settlement.capacity); // a lower capacity at once
    h.pending = { version: stored?.version ?? null, settlement, limit: h.limit, startedAt };
  };
  const doWrite = (h: ModelHolder) => {
    if (h.pending === null || h.frozen || !h.alive) return;
    const { version, settlement, limit: settledWith, startedAt } = h.pending;
    h.pending = null;
    if (h.lastBeat === 0 && now < blindUntil) return; // the fault the guarantee assumes away
    if (!reachable(h)) return failed(h, startedAt);
    const from = clockOf(h);
    if (!store.writeNow(LEVEL, version, settlement.ledger)) return;
    if (settlement.forgotten) run.writeBacks++;
    h.leaseFrom = from;
    h.lastClaim = settlement.claim;
    h.lastBeat = settlement.beat;
    h.capacity = settlement.capacity;
    h.mode = "budget";
    h.settledLimit = settledWith;
    landedWith = settledWith;
    h.recovering = settlement.recovery !== null;
  };
  const doArrive = (h: ModelHolder, holdMs: number): boolean => {
    if (!h.alive || h.frozen) return false;
    // The lease's end stops admissions on the budget (its timer, or the acquire that sees it).
    if (h.mode === "budget" && !leaseRuns(h)) h.capacity = 0;
    if (h.running.length < h.capacity) {
      const fallback = h.mode === "fallback";
      h.running.push({ end: now + holdMs, fallback });
      if (fallback) run.fallbackAdmissions++;
      return true;
    }
    h.refused++;
    return false;
  };
  const advanceTo = (t: number) => {
    now = t;
    for (const h of holders) h.running = h.running.filter((r) => r.end > now);
  };

  for (const [index, step] of steps.entries()) {
    const before = inForce();
    landedWith = null;
    let admitter: ModelHolder | null = null;
    switch (step.t) {
      case "advance":
        advanceTo(now + step.ms);
        break;
      case "arrive": {
        const h = holders[step.h];
        if (h !== undefined && doArrive(h, step.holdMs) && !h.running.at(-1)!.fallback) {
          admitter = h;
        }
        break;
      }
      case "read":
        if (holders[step.h] !== undefined) doRead(holders[step.h]!);
        break;
      case "write":
        if (holders[step.h] !== undefined) doWrite(holders[step.h]!);
        break;
      case "die": {
        const h = holders[step.h];
        if (h === undefined) break;
        h.alive = false;
        h.running = [];
        h.pending = null;
        break;
      }
      case "restart": {
        // A dead holder's process starts again: a new holder, with a new id and nothing held; it
        // computes the current limit at start.
        const h = holders[step.h];
        if (h === undefined || h.alive) break;
        holders[step.h] = fresh(`${h.id}+`, h.clock, trueLimit);
        break;
      }
      case "link":
        if (holders[step.h] !== undefined) holders[step.h]!.linkUp = step.up;
        break;
      case "store":
        storeUp = step.up;
        break;
      case "freeze":
        if (holders[step.h] !== undefined) holders[step.h]!.frozen = step.on;
        break;
      case "amnesia":
        store.forget();
        blindUntil = now + window;
        break;
      case "forge": {
        const stored = store.peek(LEVEL)?.ledger ?? { holders: {} };
        const id = `forger-${forgeries++}`;
        if (step.kind === "garbage") {
          store.put(LEVEL, "not a ledger");
          blindUntil = now + window; // every line is gone, as when the store forgets
        } else {
          const line = step.kind === "huge" ? FORGED_LINE : { claim: "lots", demand: 0 };
          store.put(LEVEL, { ...stored, holders: { ...stored.holders, [id]: line } });
        }
        break;
      }
      case "limit":
        if (step.value === trueLimit) break;
        watching = step.value > trueLimit || seatsInUse() > 0
          ? { limit: step.value, fell: step.value < trueLimit }
          : null;
        trueLimit = step.value;
        lastChange = now;
        break;
      case "adopt": {
        const h = holders[step.h];
        if (h?.alive) h.limit = trueLimit;
        break;
      }
    }
    const inUse = seatsInUse();
    const onBudget = budgetSeats();
    run.peak = Math.max(run.peak, inUse);
    // 1. Within the highest limit in force since now − W; fallback seats on top, per holder.
    const after = inForce();
    if (after !== before) past.push({ until: now, limit: before });
    if (landedWith !== null) past.push({ until: now, limit: landedWith });
    while (past.length > 0 && past[0]!.until < now - window) past.shift();
    const bound = past.reduce((max, p) => Math.max(max, p.limit), after);
    assert.ok(
      onBudget <= bound,
      `${onBudget} seats in use on budgets, over the limit ${bound} (the highest in force since ${
        now - window
      } ms) at ${now} ms`,
    );
    for (const h of holders) {
      const fallback = h.running.filter((r) => r.fallback).length;
      assert.ok(fallback <= fallbackSeats, `${h.id}: ${fallback} fallback seats at ${now} ms`);
    }
    if (admitter !== null && !admitter.recovering) {
      // 2. An admission stays within the limit its holder settled with.
      assert.ok(
        onBudget <= admitter.settledLimit,
        `an admission by ${admitter.id} took the seats in use to ${onBudget}, over the limit ${admitter.settledLimit} it settled with, at ${now} ms`,
      );
      // 3. On a settled level, within the current limit.
      const settled = holders.every((h) =>
        !h.alive || (h.limit === trueLimit && h.settledLimit === trueLimit && !h.recovering)
      );
      if (settled && now >= lastChange + window) {
        run.settledChecks++;
        assert.ok(
          onBudget <= trueLimit,
          `an admission took the seats in use to ${onBudget}, over the settled limit ${trueLimit}, at ${now} ms`,
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

  if (options.heal === true) {
    // The faults end: every holder alive (a dead one restarted), thawed, linked, knowing the
    // limit; the store up; nobody forges. Each wants the whole level, and settles once a period.
    storeUp = true;
    advanceTo(Math.max(now, blindUntil));
    for (const [i, h] of holders.entries()) {
      if (!h.alive) holders[i] = fresh(`${h.id}+`, h.clock, trueLimit);
      Object.assign(holders[i]!, { frozen: false, linkUp: true, limit: trueLimit });
      doWrite(holders[i]!); // what was in flight lands or conflicts
    }
    const equal = Math.floor(trueLimit / holders.length);
    for (let period = 1; period <= HEAL_PERIODS + 2; period++) {
      advanceTo(now + HEAL_PERIOD_MS);
      for (const h of holders) {
        for (let i = 0; i < trueLimit; i++) doArrive(h, terms.drainMs / 2);
        doRead(h);
        doWrite(h);
      }
      const whole = holders.reduce((sum, h) => sum + h.capacity, 0) >= trueLimit &&
        holders.every((h) => h.mode === "budget" && h.capacity >= equal);
      if (whole) {
        run.healedIn = period;
        break;
      }
    }
  }
  return run;
}
