/**
 * A store that starts empty (a memory store in a process that restarted, a
 * Redis without persistence) forgets the claims of holders that still have
 * requests running. For `graceMs` after it starts, this wrapper answers a
 * level without a ledger with one holding a placeholder claim on every
 * seat, so that the holders first write what they still have in use
 * (their claim never falls below it) and grow only once the placeholder's
 * lease has ended, plus each holder's drain time and skew bound.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";
import type { Ledger } from "./ledger.ts";
import type { BudgetStore, StoredLedger } from "./store.ts";

/** The placeholder holder's id in a recovering ledger. */
export const RECOVERY_HOLDER = "(recovering)";

/** `inner`, with a placeholder claim on every seat of a level first read within `graceMs`. */
export class RecoveringStore implements BudgetStore {
  #inner: BudgetStore;
  #clock: Clock;
  #until: number;

  /** Wraps `inner`; the grace starts now on `clock`'s wall time. */
  constructor(inner: BudgetStore, clock: Clock, graceMs: number) {
    this.#inner = inner;
    this.#clock = clock;
    this.#until = (clock.wallNow?.() ?? clock.now()) + graceMs;
  }

  /** The level's ledger; during the grace, a missing one is created with the placeholder. */
  async read(level: string): Promise<StoredLedger | null> {
    const stored = await this.#inner.read(level);
    const now = this.#clock.wallNow?.() ?? this.#clock.now();
    if (stored !== null || now >= this.#until) return stored;
    const placeholder: Ledger = {
      holders: {
        [RECOVERY_HOLDER]: {
          claim: Number.MAX_SAFE_INTEGER,
          demand: 0,
          limit: Number.MAX_SAFE_INTEGER,
          expiresAt: this.#until,
        },
      },
    };
    await this.#inner.write(level, null, placeholder);
    return await this.#inner.read(level);
  }

  /** Writes through to the inner store. */
  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    return this.#inner.write(level, expected, ledger);
  }
}
