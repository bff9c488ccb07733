/**
 * Validation of queue-set configurations and work estimates: the first of
 * the two phases of a configuration change (validate everything, then
 * commit), so that a bad configuration changes nothing.
 *
 * @module
 */

import { Dealer } from "./shuffle_shard.ts";
import type { QueueSetConfig, WorkEstimate } from "./types.ts";
import { valueError } from "../_shared/errors.ts";

/** A validated configuration, in Kubernetes' terms (the queue set's `qCfg` and `dCfg`). */
export interface ResolvedConfig {
  /** `DesiredNumQueues`: -1 exempt, 0 reject instead of queuing, > 0 queues. */
  desiredQueues: number;
  /** Seats of the level (0 for exempt sets, where it is not used). */
  concurrencyLimit: number;
  /** Queue length limit (kept from the previous configuration when not queuing). */
  queueLengthLimit: number;
  /** Hand size (kept from the previous configuration when not queuing). */
  handSize: number;
  /** The dealer for `desiredQueues` and `handSize`, when queuing. */
  dealer: Dealer | null;
  /** Lazy wait limit in ms, or null. */
  requestWaitLimitMs: number | null;
}

/** Throws a TypeError: a wrong type, a missing field or an unknown name. */
function fail(name: string, message: string): never {
  throw new TypeError(`Cannot configure queue set ${JSON.stringify(name)}: ${message}`);
}

/** Throws for a bad `value`: a RangeError when it is a number out of range, else a TypeError. */
function failValue(name: string, message: string, value: unknown): never {
  throw valueError(value, `Cannot configure queue set ${JSON.stringify(name)}: ${message}`);
}

function show(value: unknown): string {
  return typeof value === "bigint" ? `${value}n` : JSON.stringify(value) ?? String(value);
}

function isCount(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min;
}

/**
 * Validates `config` and resolves it against the previous configuration.
 *
 * @throws {TypeError} when `config` is not an object, or a field is missing, of the wrong
 * type or an unknown name, naming the field and the value received.
 * @throws {RangeError} when a number is out of range, naming the field and the value received.
 */
export function resolveConfig(
  name: string,
  config: QueueSetConfig,
  previous: ResolvedConfig | null,
): ResolvedConfig {
  if (typeof config !== "object" || config === null) {
    throw new TypeError(
      `Cannot configure queue set ${JSON.stringify(name)}: config must be an object, got ${
        show(config)
      }`,
    );
  }
  const type = config.type;
  if (type !== "Limited" && type !== "Exempt") {
    fail(name, `type must be "Limited" or "Exempt", got ${show(type)}`);
  }
  const wait = type === "Limited" ? config.requestWaitLimitMs ?? null : null;
  if (wait !== null && !(typeof wait === "number" && wait >= 0 && wait < Infinity)) {
    failValue(
      name,
      `requestWaitLimitMs must be null or a finite number >= 0, got ${show(wait)}`,
      wait,
    );
  }
  const keep = {
    queueLengthLimit: previous?.queueLengthLimit ?? 0,
    handSize: previous?.handSize ?? 0,
    dealer: null,
    requestWaitLimitMs: wait,
  };
  if (type === "Exempt") {
    const cl = config.concurrencyLimit ?? 0;
    if (!isCount(cl, 0)) {
      failValue(name, `concurrencyLimit must be an integer >= 0, got ${show(cl)}`, cl);
    }
    return { desiredQueues: -1, concurrencyLimit: cl, ...keep };
  }
  const cl = config.concurrencyLimit;
  if (!isCount(cl, 0)) {
    failValue(name, `concurrencyLimit must be an integer >= 0, got ${show(cl)}`, cl);
  }
  const q = config.queuing;
  if (q === undefined) fail(name, "queuing is required for a Limited queue set (null: no queuing)");
  if (q === null) return { desiredQueues: 0, concurrencyLimit: cl, ...keep };
  if (typeof q !== "object") fail(name, `queuing must be an object or null, got ${show(q)}`);
  if (!isCount(q.queues, 1)) {
    failValue(name, `queuing.queues must be an integer >= 1, got ${show(q.queues)}`, q.queues);
  }
  if (!isCount(q.queueLengthLimit, 0)) {
    failValue(
      name,
      `queuing.queueLengthLimit must be an integer >= 0, got ${show(q.queueLengthLimit)}`,
      q.queueLengthLimit,
    );
  }
  if (!isCount(q.handSize, 1)) {
    failValue(
      name,
      `queuing.handSize must be an integer >= 1, got ${show(q.handSize)}`,
      q.handSize,
    );
  }
  let dealer: Dealer;
  try {
    dealer = new Dealer(q.queues, q.handSize);
  } catch (e) {
    // Both sizes are counts by now: what the Dealer refuses is their range.
    failValue(name, `queuing: ${(e as Error).message}`, q.handSize);
  }
  return {
    desiredQueues: q.queues,
    concurrencyLimit: cl,
    queueLengthLimit: q.queueLengthLimit,
    handSize: q.handSize,
    dealer,
    requestWaitLimitMs: wait,
  };
}

/** A validated work estimate. */
export interface ResolvedWork {
  initialSeats: number;
  finalSeats: number;
  additionalLatencyMs: number;
}

/** The work of a request without an estimate: one seat, no final phase. */
export const DEFAULT_WORK: ResolvedWork = {
  initialSeats: 1,
  finalSeats: 0,
  additionalLatencyMs: 0,
};

/**
 * Validates a work estimate, filling in the defaults.
 *
 * @throws {RangeError} naming the field when a number is out of range, {TypeError} when a
 * field is not a number.
 */
export function resolveWork(work: WorkEstimate | undefined): ResolvedWork {
  if (work === undefined) return DEFAULT_WORK;
  const { initialSeats = 1, finalSeats = 0, additionalLatencyMs = 0 } = work;
  if (!isCount(initialSeats, 1)) {
    throw valueError(
      initialSeats,
      `Cannot start a request: work.initialSeats must be an integer >= 1, got ${
        show(initialSeats)
      }`,
    );
  }
  if (!isCount(finalSeats, 0)) {
    throw valueError(
      finalSeats,
      `Cannot start a request: work.finalSeats must be an integer >= 0, got ${show(finalSeats)}`,
    );
  }
  if (
    !(typeof additionalLatencyMs === "number" && additionalLatencyMs >= 0 &&
      additionalLatencyMs < Infinity)
  ) {
    throw valueError(
      additionalLatencyMs,
      `Cannot start a request: work.additionalLatencyMs must be a finite number >= 0, got ${
        show(additionalLatencyMs)
      }`,
    );
  }
  return { initialSeats, finalSeats, additionalLatencyMs };
}
