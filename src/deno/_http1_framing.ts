/**
 * Our framing decisions for the HTTP/1.1 upstream client: how long a
 * response's body is (RFC 9112 §6.3), whether its connection may carry the
 * next request (RFC 9112 §9.3), what a chunk-size line says (RFC 9112 §7.1),
 * and how a request is framed. `http-parser-js` splits lines and fields;
 * every decision about the length and validity of a body is taken here, from
 * the header fields it found, and the parser is then made to follow it
 * (`_http1_parser.ts`). Pure functions, fuzzed against a plain reference
 * model of RFC 9112 §6.3 in `tests/deno/http1_framing_test.ts`.
 *
 * @module
 */

import { isDigits } from "./_field_syntax.ts";

/** How a response's body is delimited, or why it cannot be read safely. */
export type ResponseFraming =
  /** An interim (1xx) response: skipped, the final one follows (RFC 9110 §15.2). */
  | { readonly kind: "interim" }
  /** No body at all, whatever the headers say. */
  | { readonly kind: "none" }
  /** Exactly `length` bytes. */
  | { readonly kind: "length"; readonly length: number }
  /** The chunked transfer coding. */
  | { readonly kind: "chunked" }
  /** Everything until the upstream closes the connection. */
  | { readonly kind: "close" }
  /** Not to be forwarded: the proxy answers 502 and closes the connection. */
  | { readonly kind: "invalid"; readonly reason: string };

/** What the framing of a response depends on. */
export interface ResponseHead {
  /** The request's method (upper case). */
  readonly method: string;
  readonly status: number;
  readonly versionMajor: number;
  readonly versionMinor: number;
  /** Field names and values, alternating, as received (repeated fields apart). */
  readonly headers: readonly string[];
}

const INTERIM: ResponseFraming = { kind: "interim" };
const NONE: ResponseFraming = { kind: "none" };
const CHUNKED: ResponseFraming = { kind: "chunked" };
const CLOSE: ResponseFraming = { kind: "close" };

const invalid = (reason: string): ResponseFraming => ({ kind: "invalid", reason });

/**
 * The framing of a response, in the order of RFC 9112 §6.3. The fields it
 * reads are Content-Length and Transfer-Encoding, all of their lines.
 */
export function responseFraming(head: ResponseHead): ResponseFraming {
  const { status } = head;
  // RFC 9112 §2.3: this is an HTTP/1 connection; RFC 9110 §15: a status code is 100..599.
  if (head.versionMajor !== 1) return invalid(`HTTP/${head.versionMajor} response`);
  if (status < 100 || status > 599) return invalid(`status ${status}`);
  // RFC 9110 §15.2.2: we never ask to switch protocols; a 101 cannot be proxied here.
  if (status === 101) return invalid("101 Switching Protocols");
  // RFC 9112 §6.3 item 1: a 1xx ends with its header section; the final response follows.
  if (status < 200) return INTERIM;
  let lengths: string[] | null = null;
  let codings: string[] | null = null;
  const h = head.headers;
  for (let i = 0; i < h.length; i += 2) {
    const raw = h[i]!;
    // Only names of these two lengths are lower-cased: most fields are neither.
    if (raw.length !== 14 && raw.length !== 17) continue;
    const name = raw.toLowerCase();
    if (name === "content-length") (lengths ??= []).push(h[i + 1]!);
    else if (name === "transfer-encoding") (codings ??= []).push(...listOf(h[i + 1]!));
  }
  // RFC 9112 §6.3 item 5, RFC 9110 §8.6: one decimal value; repeated lines must agree (a comma
  // list, "5, 5", which RFC 9110 allows us to refuse, is refused); else a 502. Checked whether a
  // body follows or not: an invalid Content-Length is not passed on, even as the length a HEAD
  // or a 304 stands for.
  const length = lengths === null ? -1 : lengthOf(lengths);
  if (Number.isNaN(length)) return invalid(`Content-Length ${JSON.stringify(lengths!.join(", "))}`);
  // RFC 9112 §6.3 item 1: a response to HEAD, or a 204 or 304, has no body.
  if (head.method === "HEAD" || status === 204 || status === 304) return NONE;
  if (codings !== null) {
    // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
    if (head.versionMinor === 0) return invalid("Transfer-Encoding in an HTTP/1.0 response");
    // RFC 9112 §6.3 item 3: with both, the message "ought to be handled as an error": it is the
    // shape of response smuggling, and a proxy that picked either length would pass it on.
    if (lengths !== null) return invalid("both Transfer-Encoding and Content-Length");
    // RFC 9112 §6.3 item 4 and §7: only chunked, once. Another coding we would neither decode
    // nor pass on (Transfer-Encoding is hop-by-hop), so its body would reach the client garbled.
    if (codings.length !== 1 || codings[0]!.toLowerCase() !== "chunked") {
      return invalid(`Transfer-Encoding ${JSON.stringify(codings.join(", "))}`);
    }
    return status === 205 ? invalid("205 with a chunked body") : CHUNKED;
  }
  if (length >= 0) {
    // RFC 9112 §6.3 item 6. RFC 9110 §15.3.6: a 205 has no content.
    if (status === 205 && length !== 0) return invalid("205 with content");
    return { kind: "length", length };
  }
  // RFC 9110 §15.3.6: a 205 without a length ends at its header section (the server closes).
  if (status === 205) return NONE;
  // RFC 9112 §6.3 item 8: a response with neither is delimited by the end of the connection.
  return CLOSE;
}

/** The length the Content-Length lines agree on, or NaN. */
function lengthOf(values: readonly string[]): number {
  let length = NaN;
  // 1*DIGIT (RFC 9110 §8.6), the only form of a Content-Length value we accept.
  for (const value of values) {
    const n = isDigits(value) ? Number(value) : NaN;
    if (!(n <= Number.MAX_SAFE_INTEGER) || (length >= 0 && n !== length)) return NaN;
    length = n;
  }
  return length;
}

/** The elements of a comma-separated list (RFC 9110 §5.6.1), empty ones left out. */
export function listOf(value: string): string[] {
  const out: string[] = [];
  for (const part of value.split(",")) {
    const trimmed = part.trim();
    if (trimmed !== "") out.push(trimmed);
  }
  return out;
}

/** What the response says about its connection. */
export interface Persistence {
  /** Whether the connection may carry another request after this response. */
  readonly reusable: boolean;
  /** The upstream's `Keep-Alive: timeout=` hint in ms, or `null`. */
  readonly keepAliveMs: number | null;
}

const NOT_REUSABLE: Persistence = { reusable: false, keepAliveMs: null };
const REUSABLE: Persistence = { reusable: true, keepAliveMs: null };

/**
 * Whether the connection persists after a response framed as `framing`
 * (RFC 9112 §9.3): an HTTP/1.1 one unless it says `Connection: close`, an
 * HTTP/1.0 one only with `Connection: keep-alive`; never after a body read
 * to the end of the connection or invalid framing.
 */
export function persistence(head: ResponseHead, framing: ResponseFraming): Persistence {
  if (framing.kind === "close" || framing.kind === "invalid") return NOT_REUSABLE;
  // RFC 9110 §15.3.6: a 205 without a length is followed by the close.
  if (head.status === 205 && framing.kind === "none" && !hasField(head.headers, "content-length")) {
    return NOT_REUSABLE;
  }
  let close = false, keepAlive = false;
  let keepAliveMs: number | null = null;
  const h = head.headers;
  for (let i = 0; i < h.length; i += 2) {
    const name = h[i]!;
    // A quick filter on the length before lower-casing: most names are neither.
    if (name.length === 10 && name.toLowerCase() === "connection") {
      for (const option of listOf(h[i + 1]!)) {
        const o = option.toLowerCase();
        if (o === "close") close = true;
        else if (o === "keep-alive") keepAlive = true;
      }
    } else if (name.length === 10 && name.toLowerCase() === "keep-alive") {
      keepAliveMs = keepAliveTimeoutMs(h[i + 1]!);
    }
  }
  if (close || (head.versionMinor === 0 && !keepAlive)) return NOT_REUSABLE;
  return keepAliveMs === null ? REUSABLE : { reusable: true, keepAliveMs };
}

function hasField(headers: readonly string[], lowerName: string): boolean {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === lowerName) return true;
  }
  return false;
}

/** The `timeout=N` parameter of a `Keep-Alive` value (RFC 2068 §19.7.1.1), in ms, or `null`. */
export function keepAliveTimeoutMs(value: string): number | null {
  for (const param of listOf(value)) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "timeout") continue;
    const seconds = param.slice(eq + 1).trim();
    return isDigits(seconds) ? Number(seconds) * 1000 : null;
  }
  return null;
}

/** 1*HEXDIG at the start of a chunk-size line (RFC 9112 §7.1). */
const HEX = /^[0-9A-Fa-f]+/;

/**
 * The size a chunk-size line announces (RFC 9112 §7.1), or -1 when the
 * line is not `1*HEXDIG [ BWS ";" chunk-ext ]` with a size below 2^53.
 * Extensions are allowed and ignored (RFC 9112 §7.1.1: a recipient ignores
 * those it does not understand); no sign, no `0x`, no space before the size.
 */
export function chunkSize(line: string): number {
  const digits = HEX.exec(line)?.[0];
  if (digits === undefined) return -1;
  const rest = line.slice(digits.length);
  if (rest !== "" && !/^[ \t]*;[^\r\n]*$/.test(rest)) return -1;
  const size = Number.parseInt(digits, 16);
  return size <= Number.MAX_SAFE_INTEGER ? size : -1;
}

/**
 * Whether requests of `method` usually carry a body: without one they say
 * `Content-Length: 0`. Compared, not looked up in a `Set`: a method read
 * off the wire is a new string each time, and a look-up hashes it first.
 */
function bodyMethod(method: string): boolean {
  return method === "POST" || method === "PUT" || method === "PATCH";
}

/**
 * How a request's body is framed (RFC 9112 §6.2, §6.3 item 6): by the
 * `Content-Length` given with it, else chunked; with no body, nothing, but
 * `Content-Length: 0` for a method that usually has one (RFC 9110 §8.6: a
 * user agent should send it then, and some servers wait for a body
 * without it).
 */
export function requestFraming(
  method: string,
  hasBody: boolean,
  contentLength: string | null,
): "length" | "chunked" | "empty" | "none" {
  if (contentLength !== null) return "length";
  if (hasBody) return "chunked";
  return bodyMethod(method) ? "empty" : "none";
}

/** Whether a request of `method` may be sent again, having had no answer (RFC 9110 §9.2.2). */
function idempotent(method: string): boolean {
  switch (method) {
    case "GET":
    case "HEAD":
    case "OPTIONS":
    case "TRACE":
    case "PUT":
    case "DELETE":
      return true;
    default:
      return false;
  }
}

/**
 * Whether a request that failed on a kept-alive connection before any byte
 * of its response arrived may be sent once more on a new one (RFC 9112
 * §9.3.1: a connection closed by the server while idle). Always when its
 * head could not even be written (the upstream has seen nothing); after
 * that, only an idempotent request whose body is none, since there is no
 * copy of a streamed body to send again.
 */
export function mayRetry(method: string, written: boolean, hasBody: boolean): boolean {
  return !written || (idempotent(method) && !hasBody);
}
