/**
 * Budget ledgers over HTTP: the compare and set of {@linkcode BudgetStore}
 * as conditional requests, so that any HTTP server holding a store can
 * serve holders anywhere `fetch` runs (`apf coordinator` does, at
 * `/budgets/`).
 *
 * - `GET <base>/<level>`: `200 {"ledger": …, "version": "…"}` (the version
 *   also as the `ETag`), or `404` when the level has no ledger yet.
 * - `PUT <base>/<level>` with the ledger as JSON and `If-Match: "<version>"`
 *   (or `If-None-Match: *` for a level without a ledger): `204` when
 *   written, `412` when another write landed since.
 * - `Authorization: Bearer <token>` when the server asks for one; `401` or
 *   `403` is a refused credential ({@linkcode StoreRefusedError}).
 *
 * @module
 */

import type { Ledger } from "./ledger.ts";
import { readLedger } from "./ledger_schema.ts";
import { type BudgetStore, type StoredLedger, StoreRefusedError } from "./store.ts";

/** Options of {@linkcode HttpBudgetStore}. */
export interface HttpBudgetStoreOptions {
  /** Sent as `Authorization: Bearer <token>` (default: none). */
  token?: string | null;
  /** The `fetch` to use (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** A {@linkcode BudgetStore} at an HTTP address. */
export class HttpBudgetStore implements BudgetStore {
  #base: string;
  /** Where the store is, for messages. */
  readonly where: string;
  #token: string | null;
  #fetch: (request: Request) => Promise<Response>;

  /**
   * The store at `url` (for example `http://127.0.0.1:7070/budgets`).
   *
   * @throws {TypeError} when `url` is not an `http:` or `https:` URL, or
   * carries credentials (give the token as `options.token`).
   */
  constructor(url: string | URL, options: HttpBudgetStoreOptions = {}) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TypeError(`Cannot use the budget store: invalid URL ${String(url)}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(
        `Cannot use the budget store: expected an http: or https: URL, got ${parsed.protocol}`,
      );
    }
    if (parsed.username !== "" || parsed.password !== "") {
      throw new TypeError(
        "Cannot use the budget store: give the credential as options.token, not in the URL",
      );
    }
    this.#base = parsed.href.replace(/\/+$/, "");
    this.where = this.#base;
    this.#token = options.token ?? null;
    this.#fetch = options.fetch ?? ((request) => fetch(request));
  }

  /** The level's ledger and its version, or `null`. */
  async read(level: string): Promise<StoredLedger | null> {
    const response = await this.#send(level, { method: "GET" });
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    await this.#check(response, level);
    const body = await response.json() as { ledger?: unknown; version?: unknown };
    if (typeof body?.version !== "string") {
      throw new TypeError(`${this.#where(level)}: the answer has no version`);
    }
    return { ...readLedger(body.ledger), version: body.version };
  }

  /** Writes `ledger` if the stored version is still `expected`. */
  async write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    const response = await this.#send(level, {
      method: "PUT",
      headers: {
        "Content-Type": "application/json",
        ...(expected === null ? { "If-None-Match": "*" } : { "If-Match": `"${expected}"` }),
      },
      body: JSON.stringify(ledger),
    });
    if (response.status === 412) {
      await response.body?.cancel();
      return false;
    }
    await this.#check(response, level);
    await response.body?.cancel();
    return true;
  }

  #send(level: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.#token !== null) headers.set("Authorization", `Bearer ${this.#token}`);
    return this.#fetch(
      new Request(`${this.#base}/${encodeURIComponent(level)}`, { ...init, headers }),
    );
  }

  async #check(response: Response, level: string): Promise<void> {
    if (response.ok) return;
    const text = (await response.text()).trim().slice(0, 200);
    if (response.status === 401 || response.status === 403) {
      throw new StoreRefusedError(this.where, `HTTP ${response.status} ${text}`.trim());
    }
    throw new Error(`${this.#where(level)}: HTTP ${response.status} ${text}`.trim());
  }

  #where(level: string): string {
    return `The budget store at ${this.where}, level ${JSON.stringify(level)}`;
  }
}
