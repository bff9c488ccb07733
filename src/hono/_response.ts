/**
 * The HTTP side of APF (`docs/semantics.md` §7.2, §7.4): the response headers every
 * classified request carries, and the 429 of a rejected one.
 *
 * @module
 */

import type { Classification } from "../classify/classifier.ts";
import { isPlainConstant, isPlainValue, mutableHeaderList } from "./_header_list.ts";
import { sameName } from "../_shared/field_names.ts";

/** Header naming the FlowSchema (its UID) that classified the request. */
export const FLOW_SCHEMA_UID_HEADER = "X-Kubernetes-PF-FlowSchema-UID";
/** Header naming the priority level (its UID) the request went to. */
export const PRIORITY_LEVEL_UID_HEADER = "X-Kubernetes-PF-PriorityLevel-UID";
const FLOW_SCHEMA_UID_LOWER = FLOW_SCHEMA_UID_HEADER.toLowerCase();
const PRIORITY_LEVEL_UID_LOWER = PRIORITY_LEVEL_UID_HEADER.toLowerCase();
const SERVER_TIMING_HEADER = "Server-Timing";
const SERVER_TIMING_LOWER = "server-timing";
/** The body of every 429 (Kubernetes: `tooManyRequests` in `pkg/server/filters/maxinflight.go`). */
export const TOO_MANY_REQUESTS_BODY = "Too many requests, please try again later.\n";

/** The 429 of a rejected request, with Retry-After and the two UID headers. */
export function tooManyRequests(c: Classification, retryAfterSeconds: number): Response {
  const fields = tooManyRequestsFields(c, retryAfterSeconds);
  const headers = new Headers();
  for (let i = 0; i < fields.length; i += 2) headers.append(fields[i]!, fields[i + 1]!);
  return new Response(TOO_MANY_REQUESTS_BODY, { status: 429, headers });
}

/** The header fields of {@linkcode tooManyRequests}, names and values alternating. */
export function tooManyRequestsFields(c: Classification, retryAfterSeconds: number): string[] {
  return [
    "Retry-After",
    String(retryAfterSeconds),
    "Content-Type",
    "text/plain; charset=utf-8",
    "X-Content-Type-Options",
    "nosniff",
    FLOW_SCHEMA_UID_HEADER,
    c.flowSchema.uid,
    PRIORITY_LEVEL_UID_HEADER,
    c.priorityLevel.uid,
  ];
}

/**
 * `response` carrying the two UID headers (and `serverTiming` appended to
 * `Server-Timing`, when given): the same response with its headers set, or
 * a copy when they are immutable (a fetched response's).
 */
export function withApfHeaders(
  response: Response,
  c: Classification,
  serverTiming?: string,
): Response {
  return addApfHeaders(
    response,
    response.headers,
    c,
    serverTiming,
    serverTiming === undefined || isPlainValue(serverTiming),
  );
}

/** The `Server-Timing` entry of a request that waited `waitedMs` in a queue. */
function serverTimingOf(waitedMs: number): string {
  // A number's text is visible ASCII (digits, ".", "e", "+", "-", NaN, Infinity): a plain value.
  return waitedMs === 0 ? NO_WAIT : `apf;dur=${waitedMs}`;
}
const NO_WAIT = "apf;dur=0";

/**
 * {@linkcode withApfHeaders} for the response to an admitted request, whose
 * `headers` the caller has read already, with {@linkcode serverTimingOf}
 * its wait.
 */
export function withAdmittedHeaders(
  response: Response,
  headers: Headers,
  c: Classification,
  waitedMs: number,
): Response {
  return addApfHeaders(response, headers, c, serverTimingOf(waitedMs), true);
}

function addApfHeaders(
  response: Response,
  headers: Headers,
  c: Classification,
  serverTiming: string | undefined,
  plainTiming: boolean,
): Response {
  const flowSchemaUid = c.flowSchema.uid, priorityLevelUid = c.priorityLevel.uid;
  // The common case, without the runtime's per-character checks: the response's own headers,
  // none of these three set yet, values that set() would keep as they are. The same pairs end
  // up in the same list as with set() and append().
  const list = mutableHeaderList(headers);
  if (
    list !== null && plainTiming && isPlainConstant(flowSchemaUid) &&
    isPlainConstant(priorityLevelUid) && !hasApfHeader(list, serverTiming !== undefined)
  ) {
    list.push([FLOW_SCHEMA_UID_HEADER, flowSchemaUid], [
      PRIORITY_LEVEL_UID_HEADER,
      priorityLevelUid,
    ]);
    if (serverTiming !== undefined) list.push([SERVER_TIMING_HEADER, serverTiming]);
    return response;
  }
  let out = response;
  try {
    out.headers.set(FLOW_SCHEMA_UID_HEADER, c.flowSchema.uid);
  } catch {
    out = new Response(response.body, response);
    out.headers.set(FLOW_SCHEMA_UID_HEADER, c.flowSchema.uid);
  }
  const outHeaders = out.headers;
  outHeaders.set(PRIORITY_LEVEL_UID_HEADER, c.priorityLevel.uid);
  if (serverTiming !== undefined) outHeaders.append(SERVER_TIMING_HEADER, serverTiming);
  return out;
}

/** Whether `list` names a UID header (or, with `timing`, `Server-Timing`), in any case: one pass. */
function hasApfHeader(list: readonly (readonly [string, string])[], timing: boolean): boolean {
  for (let i = 0; i < list.length; i++) {
    const name = list[i]![0];
    if (
      sameName(name, FLOW_SCHEMA_UID_LOWER) || sameName(name, PRIORITY_LEVEL_UID_LOWER) ||
      (timing && sameName(name, SERVER_TIMING_LOWER))
    ) {
      return true;
    }
  }
  return false;
}

/** Splits a request URL into its raw (still percent-encoded) path and query. */
export function splitUrl(url: string): { path: string; query: string } {
  // After "scheme://", the path starts at the first "/"; the query at "?". The "//" is found
  // by single characters: searching for two costs a call into the runtime per request. When
  // the first "/" is followed by another, the first "//" is there.
  const first = url.indexOf("/");
  const slashes = first >= 0 && url.charCodeAt(first + 1) === 0x2f ? first : url.indexOf("//");
  const start = url.indexOf("/", slashes + 2);
  if (start < 0) return { path: "/", query: "" };
  const q = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = hash < 0 ? url.length : hash;
  return q < 0 || q > end
    ? { path: url.slice(start, end), query: "" }
    : { path: url.slice(start, q), query: url.slice(q + 1, end) };
}
