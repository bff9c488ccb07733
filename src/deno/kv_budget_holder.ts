/**
 * `kvBudgetHolder()`: seat budgets over Deno KV in one call, the shared
 * governance of a Deno Deploy app's isolates (or of processes sharing a
 * local KV file). Each holder decides its requests here, on its share of
 * every level's seats; the shares are kept in the KV store
 * (`kv_budget_store.ts`) and follow the holders' demand, and the claims of
 * a level never sum to more than its limit (`src/budgets/ledger.ts`).
 *
 * @module
 */

import { BudgetHolder } from "../budgets/holder.ts";
import type { EffectiveConfiguration } from "../config/effective.ts";
import type { Coordinator } from "../coordinator/types.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { UnreachablePolicy } from "../remote/fallback.ts";
import { kvBudgetStore } from "./kv_budget_store.ts";

/** Options of {@linkcode kvBudgetHolder}; the timings are those of every holder of the store. */
export interface KvBudgetHolderOptions {
  /** The key prefix the ledgers live under, one entry per level (default `["apf", "budgets"]`). */
  prefix?: Deno.KvKey;
  /** This holder's id among the level's holders (default: a random UUID). */
  id?: string;
  /** How often each level's ledger is read and written, in ms (default 1,000). */
  periodMs?: number;
  /** How long a claim lasts without being renewed, in ms (default 5,000). */
  leaseMs?: number;
  /**
   * How long a claim still counts after its lease, in ms: the longest a
   * request admitted just before may hold its seat (default: `leaseMs`).
   */
  drainMs?: number;
  /** How far the holders' wall clocks may disagree, in ms (default 1,000). */
  skewMs?: number;
  /** How long a KV operation may take before it counts as failed, in ms (default: `periodMs`). */
  storeTimeoutMs?: number;
  /**
   * What the holder does once its lease has ended without the store:
   * `local` (default) admits up to `fallbackFraction` of each level's limit,
   * `open` admits everything, `closed` nothing.
   */
  policy?: UnreachablePolicy;
  /** The `local` policy's fraction of each level's limit (default 0.1, at least one seat). */
  fallbackFraction?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
  /** Told of every failed KV operation (default: logged, once per outage). */
  onStoreError?: (error: unknown) => void;
}

/** A coordinator that decides here on budgets held in Deno KV: `apf({ coordinator })`. */
export interface KvBudgetHolder extends Coordinator {
  /** This holder's id in the ledgers. */
  readonly id: string;
  /** Resolves once every level's ledger was settled once (or failed to be). */
  ready(): Promise<void>;
  /** The local queue sets' state; each level's current limit is this holder's share. */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot;
  /** Stops settling; what waits is answered `unavailable`. Its claims run out with their lease. */
  close(): void;
  /** Closes the holder (for `using`). */
  [Symbol.dispose](): void;
}

/**
 * Starts a budget holder for every limited level of `configuration` over
 * `kv`. Give `apf()` the same effective configuration: the holder holds
 * the levels it classifies into.
 *
 * A level's seats are shared max-min fair by demand among the holders
 * that renewed their lease; a holder takes one KV read and one atomic
 * write per level per period (and one more when requests wait on fewer
 * seats than its share), none per request. Before its first settle a
 * level has no seats here (requests wait for it); a holder cut off from
 * KV keeps its seats until its lease ends, then `policy` applies. A dead
 * holder's seats come back `leaseMs + drainMs + skewMs` after its last
 * renewal.
 *
 * @param kv The store (`await Deno.openKv()`); close it after the holder.
 * @param configuration The effective configuration `apf()` uses.
 * @param options Timings and policy; every holder of one store should use the same.
 * @returns The holder, a coordinator for `apf({ coordinator })`.
 * @throws {RangeError} for a number out of range; {TypeError} for another invalid option.
 * @example
 * ```ts ignore
 * import { Hono } from "hono";
 * import { resolveConfiguration } from "@apf/edge";
 * import { apf, type ApfEnv } from "@apf/edge/hono";
 * import { kvBudgetHolder } from "@apf/edge/deno";
 *
 * const configuration = resolveConfiguration(undefined, { serverConcurrencyLimit: 50 });
 * const coordinator = kvBudgetHolder(await Deno.openKv(), configuration);
 * const app = new Hono<ApfEnv>();
 * app.use(apf({ config: configuration, coordinator }));
 * ```
 */
export function kvBudgetHolder(
  kv: Deno.Kv,
  configuration: EffectiveConfiguration,
  options: KvBudgetHolderOptions = {},
): KvBudgetHolder {
  const { prefix, ...holderOptions } = options ?? {};
  const store = kvBudgetStore(kv, prefix === undefined ? {} : { prefix });
  return new BudgetHolder(configuration, { ...holderOptions, store });
}
