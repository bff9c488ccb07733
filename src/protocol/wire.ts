/**
 * The remote coordinator's wire protocol, versions 1 and 2 (see
 * `PROTOCOL.md` in this folder): the messages a client and a coordinator
 * server exchange over a WebSocket, their zod schemas, and decoding that
 * never throws. A malformed, oversized or unknown message decodes to a
 * {@linkcode WireError} naming the problem, so the receiver can answer it
 * and carry on without any change of state.
 *
 * Many operations travel in one frame: a client coalesces the acquires,
 * releases, cancels, `initialized()` calls and lease renewals of a tick into
 * one `ops` message, and the server answers decisions in batches.
 *
 * @module
 */

import { z } from "zod";
import { isPlainDecisionsMessage, isPlainOpsMessage, isPlainSeatRequest } from "./fast_check.ts";
import type { SeatRequest } from "../coordinator/types.ts";
import { SAMPLE_OUTCOMES, type SampleOutcome } from "../adaptive/types.ts";
import { errorClassOf } from "../_shared/errors.ts";

/** The protocol versions this implementation speaks, newest last. */
export const WIRE_VERSIONS: readonly number[] = [1, 2];

/**
 * The first version whose `release` may state how the seat's work ended
 * (a server of version 1 refuses the field as malformed).
 */
export const RELEASE_OUTCOME_VERSION = 2;

/** WebSocket close code after a protocol violation (RFC 6455 §7.4.1). */
export const CLOSE_PROTOCOL_ERROR = 1002;
/** WebSocket close code after refused authentication (application range). */
export const CLOSE_UNAUTHENTICATED = 4401;

/** Largest frame accepted, in UTF-16 code units of the JSON text (1 Mi). */
export const MAX_FRAME_LENGTH = 1 << 20;

/** Most operations or decisions in one message. */
export const MAX_BATCH = 10_000;

/** Longest name (level, schema, distinguisher, client, session) accepted. */
export const MAX_NAME_LENGTH = 1024;

/** What went wrong with a message, as sent in an `error` message. */
export type WireErrorCode =
  | "malformed"
  | "too-large"
  | "unknown-type"
  | "unsupported-version"
  | "unauthenticated"
  | "hello-expected"
  | "duplicate-id"
  | "invalid-request";

/** A problem with a received message: its code and a message naming it. */
export interface WireError {
  /** The kind of problem. */
  code: WireErrorCode;
  /** What exactly, for people (never contains a secret). */
  message: string;
}

/**
 * An operation of an `ops` message; `id` names the acquire it belongs to. A
 * `release` may end with the outcome of the seat's work (version 2; absent:
 * `"ok"`).
 */
export type WireOp =
  | ["acquire", number, SeatRequest]
  | ["release", number, number | null]
  | ["release", number, number | null, SampleOutcome]
  | ["cancel", number]
  | ["initialized", number]
  | ["renew", number];

/** A decision of a `decisions` message. */
export type WireDecision =
  | [number, "admitted", number]
  | [
    number,
    "rejected",
    "queue-full" | "concurrency-limit" | "time-out" | "cancelled" | "unavailable",
    number,
  ]
  | [number, "expired"];

/** The configuration a coordinator hands its clients: what they classify with. */
export interface WireConfiguration {
  /** The server concurrency limit. */
  serverConcurrencyLimit: number;
  /** The user objects (FlowSchemas and PriorityLevelConfigurations, in manifest shape). */
  objects: unknown[];
  /** Whether the objects merge with the mandatory built-in objects only. */
  mandatoryOnly: boolean;
}

/** Messages a client sends. */
export type ClientMessage =
  | { t: "hello"; v: number[]; token: string | null; client: string; resume: string | null }
  | { t: "ops"; ops: WireOp[] };

/** Messages a coordinator server sends. */
export type ServerMessage =
  | {
    t: "welcome";
    v: number;
    session: string;
    leaseMs: number;
    graceMs: number;
    config: WireConfiguration;
    reclaimed: number[];
  }
  | { t: "decisions"; d: WireDecision[] }
  | { t: "config"; config: WireConfiguration }
  | { t: "error"; code: WireErrorCode; message: string; id: number | null };

// ---- schemas ------------------------------------------------------------

const name = z.string().max(MAX_NAME_LENGTH);
const id = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const uint32 = z.number().int().min(0).max(0xffffffff);
const ms = z.number().nonnegative().finite();
const outcome = z.enum(SAMPLE_OUTCOMES as readonly [SampleOutcome, ...SampleOutcome[]]);

const details = z.strictObject({
  user: name,
  verb: name,
  path: z.string().max(8192),
  namespace: name,
  name,
  apiGroup: name,
  apiVersion: name,
  resource: name,
  subresource: name,
});

const seatRequest = z.strictObject({
  priorityLevel: name,
  flowSchema: name,
  flowHash: z.strictObject({ hi: uint32, lo: uint32 }).nullable().optional(),
  distinguisher: name.optional(),
  work: z.strictObject({
    initialSeats: z.number().int().min(1).max(1_000_000).optional(),
    finalSeats: z.number().int().min(0).max(1_000_000).optional(),
    additionalLatencyMs: ms.optional(),
  }).optional(),
  waitLimitMs: ms.optional(),
  details: details.optional(),
});

const op = z.union([
  z.tuple([z.literal("acquire"), id, seatRequest]),
  z.tuple([z.literal("release"), id, ms.nullable(), outcome.optional()]),
  z.tuple([z.literal("cancel"), id]),
  z.tuple([z.literal("initialized"), id]),
  z.tuple([z.literal("renew"), id]),
]);

const clientSchemas = {
  hello: z.strictObject({
    t: z.literal("hello"),
    v: z.array(z.number().int().positive()).min(1).max(16),
    token: z.string().max(4096).nullable(),
    client: name,
    resume: name.nullable(),
  }),
  ops: z.strictObject({ t: z.literal("ops"), ops: z.array(op).min(1).max(MAX_BATCH) }),
};

const configuration = z.strictObject({
  serverConcurrencyLimit: z.number().int().positive(),
  objects: z.array(z.unknown()),
  mandatoryOnly: z.boolean(),
});

const reason = z.enum(["queue-full", "concurrency-limit", "time-out", "cancelled", "unavailable"]);
const decision = z.union([
  z.tuple([id, z.literal("admitted"), ms]),
  z.tuple([id, z.literal("rejected"), reason, z.number().int().min(1).max(3600)]),
  z.tuple([id, z.literal("expired")]),
]);
const errorCode = z.enum([
  "malformed",
  "too-large",
  "unknown-type",
  "unsupported-version",
  "unauthenticated",
  "hello-expected",
  "duplicate-id",
  "invalid-request",
]);

const serverSchemas = {
  welcome: z.strictObject({
    t: z.literal("welcome"),
    v: z.number().int().positive(),
    session: name,
    leaseMs: z.number().positive().finite(),
    graceMs: ms,
    config: configuration,
    reclaimed: z.array(id).max(MAX_BATCH),
  }),
  decisions: z.strictObject({
    t: z.literal("decisions"),
    d: z.array(decision).min(1).max(MAX_BATCH),
  }),
  config: z.strictObject({ t: z.literal("config"), config: configuration }),
  error: z.strictObject({
    t: z.literal("error"),
    code: errorCode,
    message: z.string().max(4096),
    id: id.nullable(),
  }),
};

// ---- decoding -----------------------------------------------------------

/** A decoded message, or the problem with it. */
export type Decoded<M> = { ok: true; message: M } | { ok: false; error: WireError };

function decode<M>(
  data: unknown,
  schemas: Record<string, z.ZodType<unknown>>,
  fast?: (value: Record<string, unknown>) => boolean,
): Decoded<M> {
  if (typeof data !== "string") {
    return fail("malformed", "frames must be JSON text, got a binary frame");
  }
  if (data.length > MAX_FRAME_LENGTH) {
    return fail("too-large", `frame of ${data.length} characters exceeds ${MAX_FRAME_LENGTH}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (e) {
    return fail("malformed", `invalid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return fail("malformed", "a message must be a JSON object");
  }
  const type = (value as { t?: unknown }).t;
  const schema = typeof type === "string" && Object.hasOwn(schemas, type)
    ? schemas[type]!
    : undefined;
  if (schema === undefined) {
    return fail(
      "unknown-type",
      `unknown message type ${JSON.stringify(type) ?? "undefined"} (expected ${
        Object.keys(schemas).join(", ")
      })`,
    );
  }
  if (fast?.(value as Record<string, unknown>)) return { ok: true, message: value as M };
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
    return fail("malformed", `${type} message${at}: ${issue.message}`);
  }
  return { ok: true, message: parsed.data as M };
}

function fail(code: WireErrorCode, message: string): { ok: false; error: WireError } {
  return { ok: false, error: { code, message } };
}

/**
 * Decodes a frame a client sent; never throws.
 *
 * @example
 * ```ts
 * import { decodeClientMessage } from "./mod.ts";
 * decodeClientMessage('{"t":"ops","ops":[["cancel",7]]}'); // { ok: true, message: { t: "ops", ops: [["cancel", 7]] } }
 * decodeClientMessage("nope").ok; // false
 * ```
 */
export function decodeClientMessage(data: unknown): Decoded<ClientMessage> {
  return decode<ClientMessage>(data, clientSchemas, isPlainOps);
}

const isPlainOps = (value: Record<string, unknown>): boolean => isPlainOpsMessage(value, MAX_BATCH);

/** {@linkcode decodeClientMessage} by the schema alone, without the fast path (the reference for tests). */
export function decodeClientMessageBySchema(data: unknown): Decoded<ClientMessage> {
  return decode<ClientMessage>(data, clientSchemas);
}

/** Decodes a frame a coordinator server sent; never throws. */
export function decodeServerMessage(data: unknown): Decoded<ServerMessage> {
  return decode<ServerMessage>(data, serverSchemas, isPlainDecisions);
}

const isPlainDecisions = (value: Record<string, unknown>): boolean =>
  isPlainDecisionsMessage(value, MAX_BATCH);

/** {@linkcode decodeServerMessage} by the schema alone, without the fast path (the reference for tests). */
export function decodeServerMessageBySchema(data: unknown): Decoded<ServerMessage> {
  return decode<ServerMessage>(data, serverSchemas);
}

/** The JSON text of a message. */
export function encodeMessage(message: ClientMessage | ServerMessage): string {
  return JSON.stringify(message);
}

/**
 * The version to speak with a client offering `offered`: the newest both
 * sides know, or `null` when there is none.
 */
export function negotiateVersion(offered: readonly number[]): number | null {
  let best: number | null = null;
  for (const v of offered) if (WIRE_VERSIONS.includes(v) && (best === null || v > best)) best = v;
  return best;
}

/** Why a request cannot go over the wire, with the error class the embedded coordinator would throw. */
export interface SeatRequestProblem {
  /** `RangeError` for a number out of range, `TypeError` for anything else. */
  error: "RangeError" | "TypeError";
  /** What exactly, for people. */
  message: string;
}

/**
 * Checks a request against the wire's `SeatRequest` schema before it is
 * batched: one malformed acquire would make the server refuse its whole
 * `ops` message, so the client refuses it alone, as a programming error.
 */
export function seatRequestProblem(request: unknown): SeatRequestProblem | null {
  const parsed = seatRequest.safeParse(request);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0]!;
  const at = issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  // The class follows the value received, as the embedded coordinator's checks do: a number
  // out of range (1.5 where an integer goes, NaN, -1) is a RangeError, anything else (a number
  // where a name goes included) a TypeError.
  let value: unknown = request;
  for (const key of issue.path) {
    value = typeof value === "object" && value !== null
      ? (value as Record<PropertyKey, unknown>)[key]
      : undefined;
  }
  const numberExpected = issue.code !== "invalid_type" ||
    ["number", "int", "bigint"].includes(String(issue.expected));
  return {
    error: numberExpected ? errorClassOf(value) : "TypeError",
    message: `Cannot acquire a seat: invalid request${at}: ${issue.message}`,
  };
}

/**
 * The error to reject an acquire with when `request` cannot go over the
 * wire (the class the embedded coordinator would throw), or `null`: the
 * fast check first, the schema to name the problem.
 */
export function seatRequestError(request: unknown): TypeError | RangeError | null {
  if (isPlainSeatRequest(request)) return null;
  const problem = seatRequestProblem(request);
  if (problem === null) return null;
  return problem.error === "RangeError"
    ? new RangeError(problem.message)
    : new TypeError(problem.message);
}
