/** Budget holders on the fake clock over one memory store, for the holder tests. */

import assert from "node:assert/strict";
import { BudgetHolder, type BudgetHolderOptions } from "../../src/budgets/holder.ts";
import type { Ledger } from "../../src/budgets/ledger.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";
import { type BudgetStore, type StoredLedger, StoreRefusedError } from "../../src/budgets/store.ts";
import type { Admission, SeatRequest } from "../../src/coordinator/types.ts";
import { type Clock, FakeEventClock, type Timer } from "../../src/fairqueuing/clock.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

/** A limited level, `work`, of 4 seats (as many shares as the mandatory `catch-all`), queuing. */
export const CONFIG = configOf(8, [
  exempt(),
  limited("work", { shares: 5, queuing: { queues: 8, handSize: 2, queueLengthLimit: 50 } }),
]);
export const LIMIT = 4;
assert.equal(CONFIG.priorityLevels.find((l) => l.name === "work")!.nominal, LIMIT);

/** A memory store that can be taken down, made to refuse, and counted. */
export class TestStore implements BudgetStore {
  readonly where = "memory";
  readonly memory = new MemoryBudgetStore();
  down = false;
  refuse = false;
  /** Writes to refuse as if another holder had written first. */
  conflicts = 0;
  /** While set, a write lands at once but its answer waits for it (a process frozen in it). */
  answerAfter: Promise<void> | null = null;
  reads = 0;
  writes = 0;

  read(level: string): Promise<StoredLedger | null> {
    this.reads++;
    return this.#gate(() => this.memory.peek(level));
  }

  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    this.writes++;
    if (this.conflicts > 0) {
      this.conflicts--;
      return Promise.resolve(false);
    }
    const answer = this.#gate(() => this.memory.writeNow(level, expected, ledger));
    const after = this.answerAfter;
    return after === null ? answer : after.then(() => answer);
  }

  #gate<T>(answer: () => T): Promise<T> {
    if (this.refuse) return Promise.reject(new StoreRefusedError("memory", "WRONGPASS"));
    if (this.down) return Promise.reject(new Error("connection refused"));
    return Promise.resolve(answer());
  }
}

export let flow = 0;
export const request = (extra: Partial<SeatRequest> = {}): SeatRequest => ({
  priorityLevel: "work",
  flowSchema: "fs",
  flowHash: { hi: 0, lo: flow++ },
  waitLimitMs: 10_000,
  ...extra,
});

export interface Setup {
  clock: FakeEventClock;
  store: TestStore;
  holders: BudgetHolder[];
  errors: unknown[];
}

/**
 * `count` holders on one fake clock and one test store, with `options` (or
 * `options(clock, i)`, for one holder's own clock) over the defaults:
 * period 1 s without jitter, lease 3 s, drain 1 s, margin 0.1 s.
 */
export function setup(
  count: number,
  options:
    | Partial<BudgetHolderOptions>
    | ((clock: FakeEventClock, i: number) => Partial<BudgetHolderOptions>) = {},
): Setup {
  const clock = new FakeEventClock(1_700_000_000_000);
  const store = new TestStore();
  const errors: unknown[] = [];
  const holders = Array.from({ length: count }, (_, i) =>
    new BudgetHolder(CONFIG, {
      store,
      clock,
      id: `h${i}`,
      periodMs: 1_000,
      leaseMs: 3_000,
      drainMs: 1_000,
      driftMarginMs: 100,
      random: () => 0, // periods of exactly 1 s: no jitter
      onStoreError: (e) => errors.push(e),
      onWarning: () => {},
      ...(typeof options === "function" ? options(clock, i) : options),
    }));
  return { clock, store, holders, errors };
}

export function done(s: Setup): void {
  for (const h of s.holders) h.close();
  assert.equal(s.clock.pendingTimers, 0, "no timer left behind");
}

/** A line's window with the setup's terms: lease 3 s + drain 1 s + margin 0.1 s. */
export const WINDOW_MS = 4_100;

/** Advances the fake clock by `ms` in steps of 10 ms, letting promises run between. */
export async function run(s: Setup, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 10) {
    s.clock.advance(10);
    await settle(20);
  }
}

/** The admission's outcome so far, or `"pending"`. */
export function track(p: Promise<Admission>): { outcome: Admission | "pending" } {
  const t: { outcome: Admission | "pending" } = { outcome: "pending" };
  p.then((a) => t.outcome = a);
  return t;
}

/** Releases the seat of a tracked admission, if it got one. */
export function release(t: { outcome: Admission | "pending" }): void {
  const o = t.outcome;
  if (o !== "pending" && o.admitted) o.seat.release();
}

export const inUse = (s: Setup) =>
  s.holders.reduce(
    (sum, h) => sum + h.snapshot().levels.find((l) => l.name === "work")!.queueSet.seatsInUse,
    0,
  );

/**
 * Keeps `backlog` requests of `holder` in flight (waiting or running); each runs for `workMs`
 * once admitted. Returns a stepper for the test's loop and a stopper.
 */
export function steadyLoad(s: Setup, holder: BudgetHolder, backlog: number, workMs: number) {
  const running: { seat: { release(): boolean }; until: number }[] = [];
  let inFlight = 0, stopped = false, served = 0;
  const top = () => {
    while (inFlight < backlog) {
      inFlight++;
      void holder.acquire(request()).then((a) => {
        if (a.admitted && stopped) a.seat.release(); // admitted after stop(): nobody works
        else if (a.admitted) {
          served++;
          running.push({ seat: a.seat, until: s.clock.now() + workMs });
        } else inFlight--;
      });
    }
  };
  return {
    /** Requests admitted so far. */
    get served() {
      return served;
    },
    step() {
      for (let i = running.length - 1; i >= 0; i--) {
        if (running[i]!.until <= s.clock.now()) {
          running.splice(i, 1)[0]!.seat.release();
          inFlight--;
        }
      }
      top();
    },
    stop() {
      backlog = 0;
      stopped = true;
      for (const r of running.splice(0)) r.seat.release();
    },
  };
}

/**
 * `base`'s time read `offset` ms apart, monotonic and wall alike (a machine
 * whose clock is set apart); its timers run on `base`. Moving `offset` moves
 * the time it reads without running a timer: a process whose timers have
 * not run yet since it was frozen.
 */
export class ShiftedClock implements Clock {
  /** The clock it reads and sets timers on. */
  readonly base: FakeEventClock;
  /** Ms it reads ahead of `base` (behind, when negative). */
  offset: number;

  constructor(base: FakeEventClock, offset: number) {
    this.base = base;
    this.offset = offset;
  }

  now(): number {
    return this.base.now() + this.offset;
  }

  wallNow(): number {
    return this.base.wallNow() + this.offset;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    return this.base.setTimer(delayMs, callback);
  }
}
