/**
 * `apf serve`'s seat-budget flags: which store a `--coordinator` address
 * names in budget mode, and the holder's lease and period.
 *
 * @module
 */

import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import { BudgetHolder } from "../budgets/holder.ts";
import { HttpBudgetStore } from "../budgets/http_store.ts";
import { KvBudgetStore } from "../deno/kv_budget_store.ts";
import type { BudgetStore } from "../budgets/store.ts";
import type { EffectiveConfiguration } from "../config/effective.ts";
import type { UnreachablePolicy } from "../remote/fallback.ts";
import { parseDurationMs } from "../_shared/duration.ts";

/** The flags' usage. */
export const BUDGET_FLAGS_USAGE =
  "[--coordinator-mode exact|budget] [--budget-lease <duration>] [--budget-period <duration>]";

/** The flags' help lines. */
export const BUDGET_FLAGS_HELP =
  `  --coordinator-mode M       exact (default for ws:, wss:): every request asks the coordinator;
                             budget (the only mode of redis:, rediss: and kv:): this gateway
                             decides every request on a share of each level's seats kept in
                             ledgers by the coordinator (/budgets/), a Redis or Valkey server
                             (redis://[:password@]HOST:PORT; the token file gives the password)
                             or a Deno KV file (kv:PATH, relative to where apf runs, opened with
                             --unstable-kv and written: the apf task grants both; kv: alone: the
                             default KV, as on Deno Deploy); its --config classifies, and every
                             gateway must run the same one
  --budget-lease <d>         how long a share holds without the store (default 5s)
  --budget-period <d>        how often each level's share is settled (default 1s)`;

/** The flags' names. */
export const BUDGET_FLAGS = ["coordinator-mode", "budget-lease", "budget-period"] as const;

/** What the flags say: the mode, and in budget mode the holder's timing. */
export interface BudgetFlags {
  /** `exact` or `budget`. */
  mode: "exact" | "budget";
  /** The lease, in ms. */
  leaseMs: number;
  /** The period, in ms. */
  periodMs: number;
}

/** Reads the flags (`last(name)`: the flag's last value); a string is the usage error. */
export function budgetFlagsOf(
  last: (name: string) => string | undefined,
  coordinator: string | undefined,
): BudgetFlags | string {
  const budgetOnly = coordinator !== undefined && /^(rediss?:\/\/|kv:)/.test(coordinator);
  const mode = last("coordinator-mode") ?? (budgetOnly ? "budget" : "exact");
  if (mode !== "exact" && mode !== "budget") {
    return `--coordinator-mode must be exact or budget, got ${JSON.stringify(mode)}`;
  }
  if (budgetOnly && mode !== "budget") {
    return `--coordinator ${coordinator!.split(":")[0]}: offers the budget mode only`;
  }
  if (coordinator === undefined && last("coordinator-mode") !== undefined) {
    return "--coordinator-mode needs --coordinator";
  }
  const duration = (name: string, fallback: number): number | string => {
    const text = last(name);
    if (text === undefined) return fallback;
    if (mode !== "budget") return `--${name} needs --coordinator-mode budget`;
    const ms = parseDurationMs(text);
    if (ms === undefined || !(ms >= 1)) {
      return `--${name} must be a duration of 1ms or more, like 5s, got ${JSON.stringify(text)}`;
    }
    return ms;
  };
  const leaseMs = duration("budget-lease", 5_000);
  if (typeof leaseMs === "string") return leaseMs;
  const periodMs = duration("budget-period", 1_000);
  if (typeof periodMs === "string") return periodMs;
  if (leaseMs <= periodMs) {
    return `--budget-lease (${leaseMs} ms) must be longer than --budget-period (${periodMs} ms)`;
  }
  return { mode, leaseMs, periodMs };
}

/** A budget store and how to let go of it. */
export interface OpenedStore {
  /** The store. */
  store: BudgetStore;
  /** Closes its connection or file. */
  close(): void | Promise<void>;
}

/**
 * The budget store a coordinator address names: `ws://HOST:PORT` → its
 * `/budgets/` over HTTP; `redis://`, `rediss://` → a Redis server (the
 * client is loaded only then); `kv:PATH` → a Deno KV file (`kv:` alone:
 * the default one).
 *
 * A relative KV path is the caller's (`resolvePath`: the CLI host's).
 *
 * @throws {Error} when the KV file cannot be opened (permissions, `--unstable-kv`).
 */
export async function budgetStoreAt(
  coordinator: string,
  token: string | null,
  resolvePath: (path: string) => string = (path) => path,
): Promise<OpenedStore> {
  if (coordinator.startsWith("kv:")) {
    const given = coordinator.slice("kv:".length);
    const path = given === "" ? "" : resolvePath(given);
    if (typeof Deno.openKv !== "function") {
      throw new TypeError("Deno KV needs --unstable-kv (deno run --unstable-kv ...)");
    }
    const kv = await KvBudgetStore.openKv(path === "" ? undefined : path);
    return { store: new KvBudgetStore(kv, { where: coordinator }), close: () => kv.close() };
  }
  const url = new URL(coordinator);
  if (url.protocol === "redis:" || url.protocol === "rediss:") {
    if (token !== null && url.password === "") url.password = encodeURIComponent(token);
    const { RedisBudgetStore } = await import("../redis/mod.ts");
    const store = new RedisBudgetStore(url.href);
    return { store, close: () => store.close() };
  }
  url.protocol = url.protocol === "wss:" ? "https:" : "http:";
  url.pathname = "/budgets";
  return { store: new HttpBudgetStore(url, { token }), close() {} };
}

/** A holder for the gateway, on `store`, with the flags' timing and the unreachable policy. */
export function gatewayHolder(
  configuration: EffectiveConfiguration,
  store: BudgetStore,
  flags: BudgetFlags,
  policy: UnreachablePolicy,
  fraction: number | undefined,
  onStoreError: (error: unknown) => void,
  adaptive: GradientControllerOptions | null = null,
): BudgetHolder {
  return new BudgetHolder(configuration, {
    store,
    periodMs: flags.periodMs,
    leaseMs: flags.leaseMs,
    policy,
    ...(fraction !== undefined && { fallbackFraction: fraction }),
    onStoreError,
    // Each gateway learns from its own requests; the ledger keeps the smallest limit.
    ...(adaptive !== null && { serverConcurrencyLimit: adaptive }),
  });
}
