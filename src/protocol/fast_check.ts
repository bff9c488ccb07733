/**
 * A fast check of the hot messages: the client's `ops` message, the hot
 * path of the coordinator server (zod took about a quarter of its time),
 * and the server's `decisions` message, the hot path of the client (zod
 * took about 7% of it). It is sound,
 * not complete: whatever it accepts, the zod schema accepts too; whatever
 * it does not, goes to zod, which accepts it or names the problem. So the
 * schema stays the one definition of the protocol. Internal to the wire.
 *
 * @module
 */

import { SAMPLE_OUTCOMES } from "../adaptive/types.ts";

const MAX_NAME = 1024;
const MAX_PATH = 8192;
const MAX_SEATS = 1_000_000;
const REQUEST_KEYS = new Set([
  "priorityLevel",
  "flowSchema",
  "flowHash",
  "distinguisher",
  "work",
  "waitLimitMs",
  "details",
]);
const WORK_KEYS = new Set(["initialSeats", "finalSeats", "additionalLatencyMs"]);
const DETAIL_KEYS = [
  "user",
  "verb",
  "path",
  "namespace",
  "name",
  "apiGroup",
  "apiVersion",
  "resource",
  "subresource",
] as const;

/** What a `release` may state of its seat's work (version 2). */
const OUTCOMES = new Set<unknown>(SAMPLE_OUTCOMES);

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isName = (v: unknown): boolean => typeof v === "string" && v.length <= MAX_NAME;
const isId = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isMs = (v: unknown): boolean => typeof v === "number" && v >= 0 && v < Infinity;
const isUint32 = (v: unknown): boolean => typeof v === "number" && v >>> 0 === v;
const isInt = (v: unknown, min: number): boolean =>
  typeof v === "number" && Number.isInteger(v) && v >= min && v <= MAX_SEATS;

/** How many enumerable keys `o` has, all of them own (a key from a prototype counts as 2 extra: never a match). */
function ownKeys(o: Obj): number {
  let n = 0;
  for (const k in o) n += Object.hasOwn(o, k) ? 1 : 2;
  return n;
}

function keysWithin(o: Obj, allowed: Set<string>): boolean {
  for (const k in o) if (!allowed.has(k) || !Object.hasOwn(o, k)) return false;
  return true;
}

/** A `SeatRequest` the schema accepts, checked fast (sound, not complete, like the rest). */
export function isPlainSeatRequest(r: unknown): boolean {
  return isRequest(r);
}

function isRequest(r: unknown): boolean {
  if (!isObject(r) || !keysWithin(r, REQUEST_KEYS)) return false;
  if (!isName(r.priorityLevel) || !isName(r.flowSchema)) return false;
  const hash = r.flowHash;
  if (hash !== undefined && hash !== null) {
    if (!isObject(hash) || !isUint32(hash.hi) || !isUint32(hash.lo)) return false;
    if (ownKeys(hash) !== 2) return false;
  }
  if (r.distinguisher !== undefined && !isName(r.distinguisher)) return false;
  if (r.waitLimitMs !== undefined && !isMs(r.waitLimitMs)) return false;
  const work = r.work;
  if (work !== undefined) {
    if (!isObject(work) || !keysWithin(work, WORK_KEYS)) return false;
    if (work.initialSeats !== undefined && !isInt(work.initialSeats, 1)) return false;
    if (work.finalSeats !== undefined && !isInt(work.finalSeats, 0)) return false;
    if (work.additionalLatencyMs !== undefined && !isMs(work.additionalLatencyMs)) return false;
  }
  const details = r.details;
  if (details !== undefined) {
    if (!isObject(details) || ownKeys(details) !== DETAIL_KEYS.length) return false;
    for (const k of DETAIL_KEYS) {
      const v = details[k];
      if (typeof v !== "string" || v.length > (k === "path" ? MAX_PATH : MAX_NAME)) return false;
    }
  }
  return true;
}

function isOp(op: unknown): boolean {
  if (!Array.isArray(op)) return false;
  switch (op[0]) {
    case "acquire":
      return op.length === 3 && isId(op[1]) && isRequest(op[2]);
    case "release":
      return (op.length === 3 || (op.length === 4 && OUTCOMES.has(op[3]))) && isId(op[1]) &&
        (op[2] === null || isMs(op[2]));
    case "cancel":
    case "initialized":
    case "renew":
      return op.length === 2 && isId(op[1]);
    default:
      return false;
  }
}

/** True when `value` is an `ops` message the schema accepts (false: ask the schema). */
export function isPlainOpsMessage(value: Obj, maxBatch: number): boolean {
  const ops = value.ops;
  if (value.t !== "ops" || !Array.isArray(ops) || ops.length === 0 || ops.length > maxBatch) {
    return false;
  }
  let keys = 0;
  for (const k in value) {
    if (k !== "t" && k !== "ops") return false;
    keys++;
  }
  if (keys !== 2) return false;
  for (let i = 0; i < ops.length; i++) if (!isOp(ops[i])) return false;
  return true;
}

const REASONS = new Set([
  "queue-full",
  "concurrency-limit",
  "time-out",
  "cancelled",
  "unavailable",
]);

function isDecision(d: unknown): boolean {
  if (!Array.isArray(d) || !isId(d[0])) return false;
  switch (d[1]) {
    case "admitted":
      return d.length === 3 && isMs(d[2]);
    case "rejected": {
      const retry = d[3];
      return d.length === 4 && typeof d[2] === "string" && REASONS.has(d[2]) &&
        typeof retry === "number" && Number.isInteger(retry) && retry >= 1 && retry <= 3600;
    }
    case "expired":
      return d.length === 2;
    default:
      return false;
  }
}

/** True when `value` is a `decisions` message the schema accepts (false: ask the schema). */
export function isPlainDecisionsMessage(value: Obj, maxBatch: number): boolean {
  const d = value.d;
  if (value.t !== "decisions" || !Array.isArray(d) || d.length === 0 || d.length > maxBatch) {
    return false;
  }
  let keys = 0;
  for (const k in value) {
    if (k !== "t" && k !== "d") return false;
    keys++;
  }
  if (keys !== 2) return false;
  for (let i = 0; i < d.length; i++) if (!isDecision(d[i])) return false;
  return true;
}
