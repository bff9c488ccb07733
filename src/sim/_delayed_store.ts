/**
 * A budget store whose every operation takes `latencyMs` on a simulated
 * clock, as a store across a network would.
 *
 * @module
 */

import type { Ledger } from "../budgets/ledger.ts";
import type { BudgetStore, StoredLedger } from "../budgets/store.ts";
import type { Clock } from "../fairqueuing/clock.ts";

/** `inner`, with each answer `latencyMs` later (the operation itself happens at once). */
export class DelayedBudgetStore implements BudgetStore {
  #inner: BudgetStore;
  #clock: Clock;
  #latencyMs: number;

  constructor(inner: BudgetStore, clock: Clock, latencyMs: number) {
    this.#inner = inner;
    this.#clock = clock;
    this.#latencyMs = latencyMs;
  }

  read(level: string): Promise<StoredLedger | null> {
    return this.#later(this.#inner.read(level));
  }

  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    return this.#later(this.#inner.write(level, expected, ledger));
  }

  #later<T>(answer: Promise<T>): Promise<T> {
    if (this.#latencyMs === 0) return answer;
    return answer.then((value) =>
      new Promise<T>((resolve) => this.#clock.setTimer(this.#latencyMs, () => resolve(value)))
    );
  }
}
