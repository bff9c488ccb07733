/**
 * The Deno KV budget engine: a {@linkcode BudgetStore} over a `Deno.Kv`
 * (Deno Deploy's, or a local SQLite file that processes on one machine
 * share). A level's ledger is one entry under a key prefix; its version is
 * the entry's versionstamp, and a write is an atomic operation that checks
 * it (`kv.atomic().check(...).set(...)`), so of two holders that read one
 * version only the first write lands.
 *
 * A value that is not a ledger (written by something else under the
 * prefix), or lines that are not, read as suspects (`readLedger`): the
 * holders report them and write over them.
 *
 * A local KV file shared by several handles (processes, or `Deno.openKv`
 * called more than once) is one SQLite database: a commit that meets
 * another one's lock is rejected with "database is locked" rather than
 * waited for (Deno 2.9). It did not land, so the store tries it again a
 * few times, a few milliseconds apart, before the holder sees a failure.
 *
 * Deno KV keeps a value of at most 64 KiB: about 650 holders per level
 * with ids as long as a UUID (each line is an id and four numbers). A
 * holder that would make the ledger larger fails to write (a store
 * failure: its policy applies).
 *
 * @module
 */

import type { Ledger } from "../budgets/ledger.ts";
import { readLedger } from "../budgets/ledger_schema.ts";
import type { BudgetStore, StoredLedger } from "../budgets/store.ts";
import { systemClock } from "../fairqueuing/clock.ts";

/** Options of {@linkcode KvBudgetStore}. */
export interface KvBudgetStoreOptions {
  /** The key prefix the ledgers live under, one entry per level (default `["apf", "budgets"]`). */
  prefix?: Deno.KvKey;
  /** Where the KV is, for messages (default `Deno KV`; the CLI gives `kv:PATH`). */
  where?: string;
}

const DEFAULT_PREFIX: Deno.KvKey = ["apf", "budgets"];

/** A versionstamp as Deno KV writes it: 10 bytes in hex. */
const VERSIONSTAMP = /^[0-9a-f]{20}$/;

/** Attempts of an operation that meets SQLite's lock, and the most ms between two. */
const BUSY_ATTEMPTS = 8;
const BUSY_MAX_DELAY_MS = 15;
/** Opening waits longer: another process's setup of a new file holds the lock for a while. */
const OPEN_ATTEMPTS = 40;

/**
 * A {@linkcode BudgetStore} in Deno KV: each level's ledger at
 * `[...prefix, level]`.
 *
 * @example
 * ```ts ignore
 * import { BudgetHolder, resolveConfiguration } from "@apf/edge";
 * import { apf } from "@apf/edge/hono";
 * import { KvBudgetStore } from "@apf/edge/deno";
 *
 * const configuration = resolveConfiguration(undefined, { serverConcurrencyLimit: 50 });
 * const store = new KvBudgetStore(await Deno.openKv());
 * const coordinator = new BudgetHolder(configuration, { store });
 * app.use(apf({ config: configuration, coordinator }));
 * ```
 */
export class KvBudgetStore implements BudgetStore {
  /** Where the KV is, for messages. */
  readonly where: string;
  #kv: Deno.Kv;
  #prefix: Deno.KvKey;

  /**
   * `Deno.openKv(path)`, tried again while the file is locked: processes
   * that start together and open one new KV file meet while one of them
   * sets the database up, and the others' opening fails with "database is
   * locked" (Deno 2.9). Without `path`, Deno's default KV (Deno Deploy's,
   * or a file in Deno's cache).
   *
   * @example
   * ```ts ignore
   * import { KvBudgetStore } from "@apf/edge/deno";
   * const store = new KvBudgetStore(await KvBudgetStore.openKv("/tmp/apf.sqlite"));
   * ```
   *
   * @throws {Error} what `Deno.openKv` throws (permissions, `--unstable-kv`),
   * or "database is locked" when the file stays locked through every attempt.
   */
  static openKv(path?: string): Promise<Deno.Kv> {
    return retryingBusy(() => Deno.openKv(path), OPEN_ATTEMPTS);
  }

  /**
   * The store over `kv` (`await Deno.openKv()`). Closing `kv` is the
   * caller's, after the holders that use it.
   *
   * @throws {TypeError} when `kv` is not a `Deno.Kv` or `prefix` not an array of key parts.
   */
  constructor(kv: Deno.Kv, options: KvBudgetStoreOptions = {}) {
    if (typeof kv?.get !== "function" || typeof (kv as Partial<Deno.Kv>).atomic !== "function") {
      throw new TypeError(
        `Cannot create the Deno KV budget store: kv must be a Deno.Kv (Deno.openKv()), got ${
          String(kv)
        }`,
      );
    }
    const prefix = options?.prefix ?? DEFAULT_PREFIX;
    if (!Array.isArray(prefix) || !prefix.every(isKeyPart)) {
      throw new TypeError(
        `Cannot create the Deno KV budget store: prefix must be an array of key parts, got ${
          String(prefix)
        }`,
      );
    }
    this.#kv = kv;
    this.#prefix = [...prefix];
    this.where = typeof options.where === "string" ? options.where : "Deno KV";
  }

  /** The level's ledger and its version (the entry's versionstamp), or `null`. */
  async read(level: string): Promise<StoredLedger | null> {
    const key = [...this.#prefix, level];
    const entry = await retryingBusy(() => this.#kv.get(key));
    if (entry.versionstamp === null) return null;
    return { ...readLedger(entry.value), version: entry.versionstamp };
  }

  /** Writes `ledger` when the entry's versionstamp is still `expected` (an atomic check and set). */
  async write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    // Not a version Deno KV made: it cannot be the stored one (and `check` would throw on it).
    if (expected !== null && !VERSIONSTAMP.test(expected)) return false;
    const key = [...this.#prefix, level];
    const result = await retryingBusy(() =>
      this.#kv.atomic().check({ key, versionstamp: expected }).set(key, ledger).commit()
    );
    return result.ok;
  }
}

/**
 * `operation()`, tried again while it fails on a local file's lock (SQLite's
 * `SQLITE_BUSY`, which a transaction that did not commit reports).
 */
async function retryingBusy<T>(
  operation: () => Promise<T>,
  attempts = BUSY_ATTEMPTS,
): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= attempts || !/database is locked/.test(String(error))) throw error;
    }
    // Apart by a random delay, so that holders that met do not meet again.
    const delayMs = 1 + Math.random() * BUSY_MAX_DELAY_MS;
    await new Promise((resolve) => systemClock.setTimer(delayMs, () => resolve(undefined)));
  }
}

function isKeyPart(part: unknown): part is Deno.KvKeyPart {
  return ["string", "number", "bigint", "boolean"].includes(typeof part) ||
    part instanceof Uint8Array;
}
