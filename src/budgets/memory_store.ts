/**
 * A {@linkcode BudgetStore} in memory: the ledgers of holders in one
 * process (tests, the simulation, a coordinator server that serves
 * budgets). Each ledger is copied in and out, as a remote store would, and
 * read line by line as every engine reads (`readLedger`).
 *
 * @module
 */

import type { Ledger } from "./ledger.ts";
import { parseLedger, readLedger } from "./ledger_schema.ts";
import type { BudgetStore, StoredLedger } from "./store.ts";

/** Budget ledgers in memory, versioned by a counter. */
export class MemoryBudgetStore implements BudgetStore {
  /** Where the store is, for messages. */
  readonly where: string = "memory";
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
    return { ...readLedger(JSON.parse(stored.ledger)), version: String(stored.version) };
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
    this.put(level, ledger);
    return true;
  }

  /**
   * Stores any JSON `value` as the level's ledger, with a new version and no
   * check: what anyone with access to a real store can do (tests and the
   * simulation forge lines with it).
   */
  put(level: string, value: unknown): void {
    this.#ledgers.set(level, { ledger: JSON.stringify(value), version: this.#nextVersion++ });
  }

  /** Forgets every ledger, as a store restarted without its data does (versions are not reused). */
  forget(): void {
    this.#ledgers.clear();
  }
}
