/**
 * Reading the scenario of `apf simulate` (`docs/semantics.md` §10.1): JSON in, a
 * {@linkcode Scenario} with every default filled in out. Every omitted field
 * takes its default, member by member, so `{}` is the Kubernetes test
 * `TestUniformFlowsHandSize1` scenario. Problems are reported with the JSON
 * path of the offending field, first problem only.
 *
 * The checks are hand-written rather than zod: each rule states its bound and
 * quotes the value it got, and the combined rules (`execMs + thinkMs`, the
 * Dealer's entropy limit, the total work) need the sibling fields anyway.
 *
 * @module
 */

import { Dealer, MAX_DECK_SIZE } from "../fairqueuing/shuffle_shard.ts";
import type { QueueSetQueuing } from "../fairqueuing/types.ts";
import {
  clientList,
  describe,
  field,
  finite,
  integer,
  join,
  object,
  positive,
  ScenarioError,
  text,
} from "./_json_fields.ts";
import type { Scenario, ScenarioClient, ScenarioPriorityLevel } from "./types.ts";

export { ScenarioError };

/** Most clients a scenario may have. */
export const MAX_CLIENTS = 10_000;
/** Most threads of one client. */
export const MAX_THREADS = 100_000;
/** Most calls per thread of one client. */
export const MAX_CALLS = 10_000_000;
/** Most calls of a whole scenario: `threads · calls` summed over the clients. */
export const MAX_TOTAL_CALLS = 50_000_000;

const TWO_64 = 1n << 64n;

/**
 * Parses a scenario from JSON text and fills in the defaults.
 *
 * @throws {ScenarioError} when the text is not JSON or the scenario is invalid.
 *
 * @example
 * ```ts
 * import { parseScenario } from "./scenario.ts";
 * const s = parseScenario('{"durationMs": 1000, "clients": [{"threads": 2}]}');
 * s.clients[0]!.flowHash; // 1001001001n
 * s.priorityLevel.queuing; // { queues: 9, queueLengthLimit: 8, handSize: 1 }
 * ```
 */
export function parseScenario(text: string): Scenario {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ScenarioError("", `invalid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  return scenarioFromJson(value);
}

/**
 * Validates an already-parsed JSON value as a scenario and fills in the
 * defaults. Fields set to `undefined` count as omitted.
 *
 * @throws {ScenarioError} naming the first invalid or unknown field.
 *
 * @example
 * ```ts
 * import { scenarioFromJson } from "@apf/edge/sim";
 * scenarioFromJson({}).name; // "uniform-handsize-1"
 * ```
 */
export function scenarioFromJson(value: unknown): Scenario {
  const top = object(value, "", [
    "name",
    "priorityLevel",
    "requestWaitLimitMs",
    "durationMs",
    "clients",
  ]);
  const scenario: Scenario = {
    name: field(top, "", "name", "uniform-handsize-1", text(false)),
    priorityLevel: field(top, "", "priorityLevel", {}, priorityLevel),
    requestWaitLimitMs: field(
      top,
      "",
      "requestWaitLimitMs",
      null,
      (v, p) => v === null ? null : finite(0)(v, p),
    ),
    durationMs: field(top, "", "durationMs", 50_000, positive),
    clients: field(top, "", "clients", [{}], clients),
  };
  return scenario;
}

function priorityLevel(value: unknown, path: string): ScenarioPriorityLevel {
  const v = object(value, path, ["type", "concurrencyLimit", "queuing"]);
  return {
    type: field(v, path, "type", "Limited", (x, p) => {
      if (x === "Limited" || x === "Exempt") return x;
      throw new ScenarioError(p, `must be "Limited" or "Exempt", got ${describe(x)}`);
    }),
    concurrencyLimit: field(v, path, "concurrencyLimit", 4, integer(0)),
    queuing: field(v, path, "queuing", {}, (x, p) => x === null ? null : queuing(x, p)),
  };
}

function queuing(value: unknown, path: string): QueueSetQueuing {
  const v = object(value, path, ["queues", "queueLengthLimit", "handSize"]);
  const q: QueueSetQueuing = {
    queues: field(v, path, "queues", 9, integer(1)),
    queueLengthLimit: field(v, path, "queueLengthLimit", 8, integer(1)),
    handSize: field(v, path, "handSize", 1, integer(1)),
  };
  if (q.handSize > q.queues) {
    throw new ScenarioError(
      join(path, "handSize"),
      `must be at most queues (${q.queues}), got ${q.handSize}`,
    );
  }
  try {
    new Dealer(q.queues, q.handSize);
  } catch (e) {
    // The level needs a Dealer (Kubernetes' `NewDealer`), so its refusals are the scenario's.
    const key = q.queues > MAX_DECK_SIZE ? "queues" : "handSize";
    throw new ScenarioError(join(path, key), e instanceof Error ? e.message : String(e));
  }
  return q;
}

function clients(value: unknown, path: string): ScenarioClient[] {
  const out = clientList(value, path, MAX_CLIENTS, client);
  let total = 0;
  for (const c of out) total += c.threads * c.calls;
  if (total > MAX_TOTAL_CALLS) {
    throw new ScenarioError(
      path,
      `total calls (threads * calls summed over clients) must be at most ${MAX_TOTAL_CALLS}, got ${total}`,
    );
  }
  return out;
}

function client(value: unknown, path: string): ScenarioClient {
  const v = object(value, path, [
    "name",
    "flowHash",
    "threads",
    "calls",
    "execMs",
    "thinkMs",
    "initialSeats",
    "finalSeats",
    "additionalLatencyMs",
    "split",
  ]);
  const execMs = field(v, path, "execMs", 1000, finite(0));
  return {
    name: field(v, path, "name", "a", text(true)),
    flowHash: field(v, path, "flowHash", "1001001001", flowHash),
    threads: field(v, path, "threads", 8, integer(1, MAX_THREADS)),
    calls: field(v, path, "calls", 20, integer(0, MAX_CALLS)),
    execMs,
    // Negative think time is legitimate (Kubernetes' TestWindup thinks -1ns):
    // only a negative cycle would make no sense.
    thinkMs: field(v, path, "thinkMs", 999.999999, (x, p) => {
      const think = finite()(x, p);
      if (execMs + think >= 0) return think;
      throw new ScenarioError(p, `execMs + thinkMs must be >= 0, got ${execMs} + ${think}`);
    }),
    initialSeats: field(v, path, "initialSeats", 1, integer(1)),
    finalSeats: field(v, path, "finalSeats", 1, integer(0)),
    additionalLatencyMs: field(v, path, "additionalLatencyMs", 0, finite(0)),
    split: field(v, path, "split", false, (x, p) => {
      if (typeof x === "boolean") return x;
      throw new ScenarioError(p, `must be a boolean, got ${describe(x)}`);
    }),
  };
}

function flowHash(value: unknown, path: string): bigint {
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value >= 0) return BigInt(value);
    throw new ScenarioError(
      path,
      `must be a non-negative safe integer when given as a number (use a decimal string), got ${value}`,
    );
  }
  if (typeof value !== "string" || !/^[0-9]+$/.test(value)) {
    throw new ScenarioError(
      path,
      `must be an unsigned 64-bit integer as a decimal string, got ${describe(value)}`,
    );
  }
  // The length guard keeps BigInt from parsing a huge string only to reject it.
  const digits = value.replace(/^0+(?=.)/, "");
  if (digits.length > 20 || BigInt(digits) >= TWO_64) {
    throw new ScenarioError(path, `must be less than 2^64, got ${describe(value)}`);
  }
  return BigInt(digits);
}
