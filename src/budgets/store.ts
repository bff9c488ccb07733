/**
 * What a budget engine provides: a level's ledger, read with its version,
 * and written only over the version read (compare and set). Deno KV
 * (versionstamp checks), Redis (a Lua script), a Durable Object (one
 * thread) and `apf coordinator` (one process) each give this with their own
 * atomic operations; the rest of the budget logic is theirs in common.
 *
 * @module
 */

import type { Ledger } from "./ledger.ts";
import type { SuspectLine } from "./line_watch.ts";

/**
 * A ledger as stored, with the version to write over: its valid lines, and
 * those that are not (`readLedger` of `ledger_schema.ts` parses it so).
 */
export interface StoredLedger {
  /** The valid lines. */
  ledger: Ledger;
  /** The lines that are not (malformed), by id. */
  suspects?: readonly SuspectLine[];
  /** The engine's version of it (opaque). */
  version: string;
}

/** A store of budget ledgers, one per priority level. */
export interface BudgetStore {
  /** Where the store is, for messages (never with a credential). */
  readonly where?: string;
  /**
   * The level's ledger and its version, or `null` when it has none yet. A
   * stored value that is not a ledger, or lines that are not, are suspects
   * (`readLedger`), not errors: a bad line must not stop the level.
   */
  read(level: string): Promise<StoredLedger | null>;
  /**
   * Writes `ledger` when the stored version is still `expected` (`null`: the
   * level had no ledger); resolves whether it did. Rejects when the store
   * cannot be reached (the holder keeps its claim until its lease ends).
   */
  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean>;
}

/**
 * The store refused this holder's credential (a wrong password or token): a
 * configuration error, not an outage. The holder stops; `ready()` and every
 * acquire reject with it, and no unreachable policy answers. The message
 * names the store, never the credential.
 */
export class StoreRefusedError extends Error {
  /**
   * Creates the error.
   *
   * @param store Where the store is (its address without credentials).
   * @param reason What the store said.
   */
  constructor(store: string, reason: string) {
    super(`The budget store at ${store} refused this holder's credential: ${reason}`);
    this.name = "StoreRefusedError";
  }
}
