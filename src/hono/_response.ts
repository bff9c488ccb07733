/**
 * The HTTP side of APF (`docs/semantics.md` §7.2, §7.4): the response headers every
 * classified request carries, and the 429 of a rejected one.
 *
 * @module
 */

import type { Classification } from "../classify/classifier.ts";
import { isPlainConstant, isPlainValue, listHas, mutableHeaderList } from "./_header_list.ts";

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
  const flowSchemaUid = c.flowSchema.uid, priorityLevelUid = c.priorityLevel.uid;
  // The common case, without the runtime's per-character checks: the response's own headers,
  // none of these three set yet, values that set() would keep as they are. The same pairs end
  // up in the same list as with set() and append().
  const list = mutableHeaderList(response.headers);
  if (
    list !== null && isPlainConstant(flowSchemaUid) && isPlainConstant(priorityLevelUid) &&
    !listHas(list, FLOW_SCHEMA_UID_LOWER) && !listHas(list, PRIORITY_LEVEL_UID_LOWER) &&
    (serverTiming === undefined ||
      (isPlainValue(serverTiming) && !listHas(list, SERVER_TIMING_LOWER)))
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
  const headers = out.headers;
  headers.set(PRIORITY_LEVEL_UID_HEADER, c.priorityLevel.uid);
  if (serverTiming !== undefined) headers.append(SERVER_TIMING_HEADER, serverTiming);
  return out;
}

/** Splits a request URL into its raw (still percent-encoded) path and query. */
export function splitUrl(url: string): { path: string; query: string } {
  // After "scheme://", the path starts at the first "/"; the query at "?".
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return { path: "/", query: "" };
  const q = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = hash < 0 ? url.length : hash;
  return q < 0 || q > end
    ? { path: url.slice(start, end), query: "" }
    : { path: url.slice(start, q), query: url.slice(q + 1, end) };
}
