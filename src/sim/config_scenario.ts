/**
 * Reading a whole-configuration scenario (a scenario with a `config` key):
 * JSON in, a {@linkcode ConfigScenario} with every default filled in out.
 * Problems name the JSON path of the field, first problem only.
 *
 * @module
 */

import { DEFAULT_SERVER_CONCURRENCY_LIMIT } from "../config/constants.ts";
import {
  DEFAULT_QUEUE_WAIT_LIMIT_MS,
  MAX_QUEUE_WAIT_LIMIT_MS,
} from "../coordinator/seat_request.ts";
import type { WorkEstimate } from "../fairqueuing/types.ts";
import {
  type GradientControllerOptions,
  type ResolvedGradientOptions,
  resolveGradientOptions,
} from "../adaptive/gradient_options.ts";
import {
  type Check,
  clientList,
  describe,
  field,
  finite,
  integer,
  object,
  positive,
  ScenarioError,
  text,
} from "./_json_fields.ts";
import type { ConfigScenario, ConfigScenarioClient, HoldersScenario } from "./config_types.ts";
import { MAX_CLIENTS, MAX_THREADS } from "./scenario.ts";
import type { UpstreamChange, UpstreamScenario } from "./upstream.ts";

/** Most threads of a whole-configuration scenario, summed over its clients. */
export const MAX_CONFIG_THREADS = 1_000_000;

/** Longest simulated time of a whole-configuration scenario: one day. */
export const MAX_CONFIG_DURATION_MS = 86_400_000;

/**
 * Validates a parsed JSON value as a whole-configuration scenario (it must
 * have a `config` key) and fills in the defaults.
 *
 * @throws {ScenarioError} naming the first invalid or unknown field.
 * @example
 * ```ts
 * import { configScenarioFromJson } from "@apf/edge/sim";
 * const s = configScenarioFromJson({ config: [], clients: [{ name: "a", path: "/api/v1/pods" }] });
 * s.serverConcurrencyLimit; // 600
 * ```
 */
export function configScenarioFromJson(value: unknown): ConfigScenario {
  const top = object(value, "", [
    "name",
    "config",
    "mandatoryOnly",
    "serverConcurrencyLimit",
    "queueWaitLimitMs",
    "durationMs",
    "clients",
    "holders",
    "upstream",
  ]);
  if (!Object.hasOwn(top, "config")) {
    throw new ScenarioError("config", "is required in a whole-configuration scenario");
  }
  const limit = field(
    top,
    "",
    "serverConcurrencyLimit",
    DEFAULT_SERVER_CONCURRENCY_LIMIT,
    serverConcurrencyLimit,
  );
  const upstreamModel = field(top, "", "upstream", null, nullable(upstream));
  const scenario: ConfigScenario = {
    name: field(top, "", "name", "whole-configuration", text(false)),
    config: field(top, "", "config", null, (v, p) => v === null ? [] : strings(v, p, true)),
    mandatoryOnly: field(top, "", "mandatoryOnly", false, boolean),
    serverConcurrencyLimit: typeof limit === "number" ? limit : limit.initial,
    adaptive: typeof limit === "number" ? null : limit,
    queueWaitLimitMs: field(
      top,
      "",
      "queueWaitLimitMs",
      DEFAULT_QUEUE_WAIT_LIMIT_MS,
      (v, p) => {
        const ms = finite(0)(v, p);
        if (ms > MAX_QUEUE_WAIT_LIMIT_MS) {
          throw new ScenarioError(p, `must be at most ${MAX_QUEUE_WAIT_LIMIT_MS}, got ${ms}`);
        }
        return ms;
      },
    ),
    durationMs: field(top, "", "durationMs", 60_000, (v, p) => {
      const ms = positive(v, p);
      if (ms > MAX_CONFIG_DURATION_MS) {
        throw new ScenarioError(p, `must be at most ${MAX_CONFIG_DURATION_MS}, got ${ms}`);
      }
      return ms;
    }),
    clients: field(
      top,
      "",
      "clients",
      null,
      (v, p) => clients(v, p, upstreamModel !== null),
    ),
    holders: field(top, "", "holders", null, nullable(holders)),
    upstream: upstreamModel,
  };
  if (upstreamModel !== null) {
    // A call's time in the upstream is its work plus its wait for a worker: workMs is the first.
    for (const c of scenario.clients) c.execMs = upstreamModel.workMs;
  }
  if (scenario.adaptive !== null && scenario.holders !== null) {
    throw new ScenarioError(
      "serverConcurrencyLimit",
      "a learned limit (auto) does not run with holders yet; give a number",
    );
  }
  scenario.clients.forEach((c, i) => {
    const count = scenario.holders?.count ?? 1;
    if (c.holder >= count) {
      throw new ScenarioError(
        `clients[${i}].holder`,
        scenario.holders === null
          ? "needs holders"
          : `must be below holders.count (${count}), got ${c.holder}`,
      );
    }
  });
  return scenario;
}

/** Most budget holders of a scenario. */
export const MAX_HOLDERS = 64;

function holders(value: unknown, path: string): HoldersScenario {
  const v = object(value, path, [
    "count",
    "periodMs",
    "leaseMs",
    "drainMs",
    "driftMarginMs",
    "storeLatencyMs",
  ]);
  const periodMs = field(v, path, "periodMs", 1_000, positive);
  const leaseMs = field(v, path, "leaseMs", 5_000, positive);
  if (leaseMs <= periodMs) {
    throw new ScenarioError(`${path}.leaseMs`, `must be longer than periodMs (${periodMs})`);
  }
  return {
    count: field(v, path, "count", null, integer(1, MAX_HOLDERS)),
    periodMs,
    leaseMs,
    drainMs: field(v, path, "drainMs", leaseMs, finite(0)),
    driftMarginMs: field(v, path, "driftMarginMs", 0, finite(0)),
    storeLatencyMs: field(v, path, "storeLatencyMs", 0, finite(0)),
  };
}

/**
 * `serverConcurrencyLimit`: a number, `"auto"` (the gradient controller's
 * defaults) or the controller's options.
 */
function serverConcurrencyLimit(value: unknown, path: string): number | ResolvedGradientOptions {
  if (typeof value === "number") return integer(1, 1_000_000)(value, path);
  if (value === "auto") return resolveGradientOptions();
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ScenarioError(
      path,
      `must be an integer >= 1, "auto" or the controller's options, got ${describe(value)}`,
    );
  }
  try {
    return resolveGradientOptions(value as GradientControllerOptions);
  } catch (e) {
    if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
    throw new ScenarioError(
      path,
      e.message.replace(/^Cannot create the gradient controller: /, ""),
    );
  }
}

/** Most changes of K in an upstream. */
export const MAX_UPSTREAM_CHANGES = 1000;

function upstream(value: unknown, path: string): UpstreamScenario {
  const v = object(value, path, ["workers", "workMs", "jitter", "changes"]);
  return {
    workers: field(v, path, "workers", null, integer(1, MAX_THREADS)),
    workMs: field(v, path, "workMs", null, positive),
    jitter: field(v, path, "jitter", 0, (x, p) => {
      const j = finite(0)(x, p);
      if (j >= 1) throw new ScenarioError(p, `must be below 1, got ${j}`);
      return j;
    }),
    changes: field(v, path, "changes", [], (x, p) => {
      if (!Array.isArray(x)) throw new ScenarioError(p, `must be an array, got ${describe(x)}`);
      if (x.length > MAX_UPSTREAM_CHANGES) {
        throw new ScenarioError(
          p,
          `must have at most ${MAX_UPSTREAM_CHANGES} changes, got ${x.length}`,
        );
      }
      let previous = 0;
      return x.map((c, i): UpstreamChange => {
        const at = `${p}[${i}]`;
        const o = object(c, at, ["atMs", "workers"]);
        const atMs = field(o, at, "atMs", null, finite(0));
        if (atMs < previous) {
          throw new ScenarioError(
            `${at}.atMs`,
            `must be >= the previous change's (${previous}), got ${atMs}`,
          );
        }
        previous = atMs;
        return { atMs, workers: field(o, at, "workers", null, integer(1, MAX_THREADS)) };
      });
    }),
  };
}

function clients(value: unknown, path: string, upstream: boolean): ConfigScenarioClient[] {
  const out = clientList(value, path, MAX_CLIENTS, (c, p) => {
    if (upstream && typeof c === "object" && c !== null && Object.hasOwn(c, "execMs")) {
      throw new ScenarioError(
        `${p}.execMs`,
        "comes from the upstream (its workMs and queue) when there is one; remove it",
      );
    }
    return client(c, p);
  });
  const threads = out.reduce((sum, c) => sum + c.threads, 0);
  if (threads > MAX_CONFIG_THREADS) {
    throw new ScenarioError(
      path,
      `total threads must be at most ${MAX_CONFIG_THREADS}, got ${threads}`,
    );
  }
  return out;
}

function client(value: unknown, path: string): ConfigScenarioClient {
  const v = object(value, path, [
    "name",
    "user",
    "groups",
    "method",
    "path",
    "query",
    "threads",
    "calls",
    "execMs",
    "thinkMs",
    "startMs",
    "stopMs",
    "work",
    "holder",
  ]);
  const startMs = field(v, path, "startMs", 0, finite(0));
  return {
    name: field(v, path, "name", null, text(true)),
    user: field(v, path, "user", null, (x, p) => x === null ? null : text(true)(x, p)),
    groups: field(v, path, "groups", [], (x, p) => strings(x, p, false)),
    method: field(v, path, "method", "GET", (x, p) => {
      if (typeof x === "string" && /^[A-Za-z]+$/.test(x)) return x.toUpperCase();
      throw new ScenarioError(p, `must be an HTTP method, got ${describe(x)}`);
    }),
    path: field(v, path, "path", null, (x, p) => {
      if (typeof x === "string" && x.startsWith("/")) return x;
      throw new ScenarioError(p, `must be a string starting with "/", got ${describe(x)}`);
    }),
    query: field(v, path, "query", "", (x, p) => text(false)(x, p).replace(/^\?/, "")),
    threads: field(v, path, "threads", 1, integer(1, MAX_THREADS)),
    calls: field(v, path, "calls", null, nullable(integer(0))),
    execMs: field(v, path, "execMs", 100, finite(0)),
    thinkMs: field(v, path, "thinkMs", 0, finite(0)),
    startMs,
    stopMs: field(
      v,
      path,
      "stopMs",
      null,
      nullable((x, p) => {
        const ms = finite(0)(x, p);
        if (ms < startMs) throw new ScenarioError(p, `must be >= startMs (${startMs}), got ${ms}`);
        return ms;
      }),
    ),
    work: field(v, path, "work", null, nullable(work)),
    holder: field(v, path, "holder", 0, integer(0, MAX_HOLDERS - 1)),
  };
}

function work(value: unknown, path: string): Required<WorkEstimate> {
  const v = object(value, path, ["initialSeats", "finalSeats", "additionalLatencyMs"]);
  return {
    initialSeats: field(v, path, "initialSeats", 1, integer(1)),
    finalSeats: field(v, path, "finalSeats", 0, integer(0)),
    additionalLatencyMs: field(v, path, "additionalLatencyMs", 0, finite(0)),
  };
}

function nullable<T>(check: Check<T>): Check<T | null> {
  return (value, path) => value === null ? null : check(value, path);
}

function boolean(value: unknown, path: string): boolean {
  if (typeof value === "boolean") return value;
  throw new ScenarioError(path, `must be a boolean, got ${describe(value)}`);
}

function strings(value: unknown, path: string, nonEmpty: boolean): string[] {
  if (!Array.isArray(value)) {
    throw new ScenarioError(path, `must be an array, got ${describe(value)}`);
  }
  value.forEach((s, i) => text(nonEmpty)(s, `${path}[${i}]`));
  return value as string[];
}
