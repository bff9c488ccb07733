/**
 * A {@linkcode BudgetStore} on Redis or Valkey: each level's ledger is one
 * hash, `<prefix><level>`, with two fields, `version` and `ledger` (JSON).
 * A read is one `HMGET`; a write is one Lua script, which Redis runs
 * atomically: it compares the stored version with the one read (no
 * `version` field: none) and, only when they are equal, sets the ledger
 * with a new version. Each version is a fresh random id made by the writer,
 * not a counter: a server restarted without its data must never hand out
 * again a version a holder read before, or that holder's write would land
 * over a ledger it never saw.
 *
 * The connection (`_connection.ts`) fails fast while the server cannot be
 * reached, and turns a refused credential into a `StoreRefusedError`. A
 * key whose ledger is not JSON, or not a ledger, reads as one with suspect
 * lines (`readLedger`): the holders report it and write over it.
 *
 * @module
 */

import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { checkNumber } from "../_shared/errors.ts";
import { checkOptionNames } from "../_shared/options.ts";
import { show } from "../_shared/show.ts";
import type { Ledger } from "../budgets/ledger.ts";
import type { BudgetStore, StoredLedger } from "../budgets/store.ts";
import { parseLedger, readLedger } from "../budgets/ledger_schema.ts";
import { type RedisClient, RedisConnection } from "./_connection.ts";
import { parseRedisUrl } from "./_redis_url.ts";

/** Options of {@linkcode RedisBudgetStore}. */
export interface RedisBudgetStoreOptions {
  /** `redis://[[username]:password@]host[:port][/db]`, or `rediss://` for TLS. */
  url: string;
  /** What each level's key starts with (default `apf:budgets:`). */
  prefix?: string;
  /** How long connecting, or one operation, may take before it fails, in ms (default 2,000). */
  timeoutMs?: number;
  /** PEM certificates of the authorities to trust for `rediss://` (default: the system's). */
  caCerts?: string[];
  /** The clock that times operations (default: the system clock). */
  clock?: Clock;
}

const OPTION_NAMES = ["url", "prefix", "timeoutMs", "caCerts", "clock"] as const;
const DEFAULT_PREFIX = "apf:budgets:";
const DEFAULT_TIMEOUT_MS = 2_000;

/**
 * Compare and set of one level's ledger. KEYS[1]: the level's key;
 * ARGV[1]: the version read ('' for none), ARGV[2]: the new version,
 * ARGV[3]: the ledger. Returns 1 when it wrote, 0 when the version differed.
 */
const WRITE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'version') or ''
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'ledger', ARGV[3])
return 1
`;

/**
 * A budget store on a Redis or Valkey server, holding one connection until
 * closed.
 *
 * @example
 * ```ts ignore
 * import { RedisBudgetStore } from "@apf/edge/redis";
 * await using store = new RedisBudgetStore("redis://:secret@127.0.0.1:6379/0");
 * const stored = await store.read("workload-low"); // { ledger, version } or null
 * ```
 */
export class RedisBudgetStore implements BudgetStore, AsyncDisposable {
  /** The server, as `redis://host:port` (never with the password). */
  readonly where: string;
  #prefix: string;
  #connection: RedisConnection;
  #writeSha: Promise<string>;

  /**
   * A store on the server at `url` (or `options.url`); it connects on the
   * first operation.
   *
   * @param urlOrOptions `redis://[[username]:password@]host[:port][/db]`, `rediss://` for TLS, or the options.
   * @throws {TypeError} for a URL that is not a Redis URL, or another bad option; {RangeError} for `timeoutMs` out of range.
   */
  constructor(urlOrOptions: string | RedisBudgetStoreOptions) {
    const options = typeof urlOrOptions === "string" ? { url: urlOrOptions } : urlOrOptions;
    if (typeof options !== "object" || options === null) {
      throw new TypeError(
        `Cannot create the Redis budget store: expected a URL or options, got ${show(options)}`,
      );
    }
    checkOptionNames("create the Redis budget store", options, OPTION_NAMES);
    const address = parseRedisUrl(options.url);
    this.where = address.where;
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== "string") {
      throw new TypeError(
        `Cannot create the Redis budget store: prefix must be a string, got ${show(prefix)}`,
      );
    }
    this.#prefix = prefix;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    checkNumber(
      timeoutMs,
      (n) => n >= 1 && n <= 2 ** 31 - 1,
      () =>
        `Cannot create the Redis budget store: timeoutMs must be a number from 1 to 2^31-1, got ${
          show(timeoutMs)
        }`,
    );
    const caCerts = options.caCerts;
    if (
      caCerts !== undefined &&
      !(Array.isArray(caCerts) && caCerts.every((c) => typeof c === "string"))
    ) {
      throw new TypeError(
        "Cannot create the Redis budget store: caCerts must be an array of PEM strings",
      );
    }
    this.#connection = new RedisConnection(address, {
      timeoutMs,
      caCerts,
      clock: options.clock ?? systemClock,
    });
    this.#writeSha = sha1Hex(WRITE_SCRIPT);
  }

  /** The level's ledger and its version, or `null` when its key has none. */
  read(level: string): Promise<StoredLedger | null> {
    return this.#run("read", level, async (client, key) => {
      const [version, ledger] = await client.hmGet(key, ["version", "ledger"]);
      // No version: nothing to write over (the write script compares with none).
      if (typeof version !== "string" || version === "") return null;
      let value: unknown = null;
      try {
        value = JSON.parse(ledger ?? "null");
      } catch {
        // Not JSON: read as no ledger at all, a suspect the holder reports.
      }
      return { ...readLedger(value), version };
    });
  }

  /** Writes `ledger` when the level's version is still `expected`; resolves whether it did. */
  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    if (expected !== null && (typeof expected !== "string" || expected === "")) {
      return Promise.reject(
        new TypeError(
          `Cannot write the budget ledger: expected must be a version read or null, got ${
            show(expected)
          }`,
        ),
      );
    }
    try {
      parseLedger(ledger, `Cannot write the budget ledger of ${show(level)}`);
    } catch (error) {
      return Promise.reject(error);
    }
    const json = JSON.stringify(ledger);
    return this.#run("write", level, async (client, key) => {
      const args = { keys: [key], arguments: [expected ?? "", crypto.randomUUID(), json] };
      let written: unknown;
      try {
        written = await client.evalSha(await this.#writeSha, args);
      } catch (error) {
        // The server has not cached the script (a restart, SCRIPT FLUSH): EVAL caches it again.
        if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
        written = await client.eval(WRITE_SCRIPT, args);
      }
      return written === 1;
    });
  }

  /** Closes the connection, once the operations under way have their answer; every operation after it rejects. */
  close(): Promise<void> {
    return this.#connection.close();
  }

  /** Closes the connection (for `await using`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** `operation` on `level`'s key. */
  #run<T>(
    what: "read" | "write",
    level: string,
    operation: (client: RedisClient, key: string) => Promise<T>,
  ): Promise<T> {
    if (typeof level !== "string" || level === "") {
      return Promise.reject(
        new TypeError(
          `Cannot ${what} the budget ledger: the level must be a non-empty string, got ${
            show(level)
          }`,
        ),
      );
    }
    const key = this.#prefix + level;
    return this.#connection.run(
      `${what} the budget ledger of ${JSON.stringify(level)}`,
      (client) => operation(client, key),
    );
  }
}

async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
