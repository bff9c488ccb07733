/**
 * A {@linkcode BudgetStore} in memory: the ledgers of holders in one
 * process (tests, the simulation, a coordinator server that serves
 * budgets). Each ledger is copied in and out, as a remote store would.
 *
 * @module
 */

import type { Ledger } from "./ledger.ts";
import { parseLedger } from "./ledger_schema.ts";
import type { BudgetStore, StoredLedger } from "./store.ts";

/** Budget ledgers in memory, versioned by a counter. */
export class MemoryBudgetStore implements BudgetStore {
  #ledgers = new Map<string, { ledger: string; version: number }>();
  #nextVersion = 1;

  /** The level's ledger and its version, or `null`. */
  read(level: string): Promise<StoredLedger | null> {
    return Promise.resolve(this.peek(level));
  }

  /** Writes `ledger` when the stored version is still `expected`. */
  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    try {
      return Promise.resolve(this.writeNow(level, expected, ledger));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** {@linkcode read}, at once. */
  peek(level: string): StoredLedger | null {
    const stored = this.#ledgers.get(level);
    if (stored === undefined) return null;
    return { ledger: JSON.parse(stored.ledger) as Ledger, version: String(stored.version) };
  }

  /**
   * {@linkcode write}, at once.
   *
   * @throws {TypeError} when `ledger` is not a budget ledger (a remote store would refuse it too).
   */
  writeNow(level: string, expected: string | null, ledger: Ledger): boolean {
    parseLedger(ledger, `Cannot write the ledger of level ${JSON.stringify(level)}`);
    const stored = this.#ledgers.get(level);
    const current = stored === undefined ? null : String(stored.version);
    if (current !== expected) return false;
    this.#ledgers.set(level, { ledger: JSON.stringify(ledger), version: this.#nextVersion++ });
    return true;
  }
}
