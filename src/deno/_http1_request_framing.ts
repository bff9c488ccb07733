/**
 * Our decisions about a request the gateway's HTTP/1.1 server reads, once
 * `http-parser-js` has split its request line and fields
 * (`_http1_request_parser.ts`): how long its body is (RFC 9112 §6.3 items
 * 4 to 7; a request is never delimited by the close), what its target is
 * (RFC 9112 §3.2), its Host (RFC 9112 §3.2), whether the connection
 * persists after it (RFC 9112 §9.3) and whether the client awaits a 100
 * (RFC 9110 §10.1.1). A request that cannot be read safely is refused
 * before its handler: {@linkcode RequestRefused} says with what status;
 * the server answers it and closes the connection.
 *
 * Lists (RFC 9110 §5.6.1) are split here on commas and trimmed of
 * OWS (spaces and tabs) only: `chunked\xa0` is no `chunked`.
 *
 * Pure functions, fuzzed against a plain reference model in
 * `tests/deno/http1_request_framing_test.ts`.
 *
 * @module
 */

import { charSet, isDigits, onlyOf } from "./_field_syntax.ts";

/** How a request's body is delimited (RFC 9112 §6.3 items 4-7 for requests). */
export type RequestBodyFraming =
  /** No body (neither Transfer-Encoding nor Content-Length, RFC 9112 §6.3 item 7). */
  | { readonly kind: "none" }
  /** Exactly `length` bytes (perhaps 0). */
  | { readonly kind: "length"; readonly length: number }
  /** The chunked transfer coding. */
  | { readonly kind: "chunked" };

/** The statuses a request is refused with before its handler. */
export type RefusalStatus = 400 | 414 | 431 | 501 | 505;

/** A request the server refuses before its handler: answer `status` and close the connection. */
export class RequestRefused extends Error {
  override name = "RequestRefused";
  /** 400 Bad Request, 414 URI Too Long, 431 Request Header Fields Too Large, 501 Not Implemented or 505 HTTP Version Not Supported. */
  readonly status: RefusalStatus;
  /** `reason` says what is wrong with the request. */
  constructor(status: RefusalStatus, reason: string) {
    super(reason);
    this.status = status;
  }
}

/** A request's head, as the server's handler needs it. */
export interface RequestHeadInfo {
  /** A token (RFC 9110 §9.1), as received (methods are case-sensitive). */
  readonly method: string;
  /**
   * The origin-form path and query, as received (`/a/b?c=d`); that of an
   * absolute-form target (`http://host/p?q` is `/p?q`); `*` for an
   * `OPTIONS` request to the server as a whole.
   */
  readonly target: string;
  /** HTTP/1.0 or HTTP/1.1 (a higher 1.x is read as 1.1, RFC 9110 §6.2). */
  readonly versionMinor: 0 | 1;
  /** Names and values, alternating, as received (Latin-1, names case kept). */
  readonly fields: string[];
  readonly framing: RequestBodyFraming;
  /** Whether the connection may carry another request after this one (RFC 9112 §9.3). */
  readonly keepAlive: boolean;
  /**
   * Whether the client awaits a 100 (Continue) before it sends the body:
   * `Expect: 100-continue` on an HTTP/1.1 request that has a body (RFC
   * 9110 §10.1.1: an HTTP/1.0 one's is ignored, and a server may omit the
   * 100 when the framing says there is no content). Other expectations
   * are ignored: the request is handled as if they were not there (RFC
   * 9110 §10.1.1 allows a 417, it does not require one).
   */
  readonly expectContinue: boolean;
  /**
   * The host the request is for: the Host field's value, or the authority
   * of an absolute-form target, which takes its place (RFC 9112 §3.2.2).
   * `null` for an HTTP/1.0 request without either.
   */
  readonly host: string | null;
}

/**
 * What a request-target may hold: visible ASCII (RFC 9112 §3.2), and no
 * `#` (a fragment is never sent, RFC 9110 §7.1).
 */
const TARGET = charSet(/^[\x21\x22\x24-\x7e]$/);
/**
 * A Host value or an authority without userinfo (RFC 9110 §7.2, RFC 3986
 * §3.2.2): reg-name, IPv4 or IP-literal characters, and a port.
 */
const HOST = charSet(/^[0-9A-Za-z\-._~%!$&'()*+,;=:\[\]]$/);

/** Whether `target` is made of {@linkcode TARGET}'s characters (one at least). */
function isTarget(target: string): boolean {
  return target.length > 0 && onlyOf(TARGET, target);
}

const NONE: RequestBodyFraming = { kind: "none" };
const CHUNKED: RequestBodyFraming = { kind: "chunked" };
const EMPTY: RequestBodyFraming = { kind: "length", length: 0 };

/**
 * How the body of a request with `fields` is framed (RFC 9112 §6.3): the
 * fields it reads are Transfer-Encoding and Content-Length, all of their
 * lines.
 *
 * @throws {RequestRefused} 400 for a framing that cannot be read
 *   reliably, 501 for a transfer coding we do not implement.
 */
export function requestBodyFraming(
  versionMinor: 0 | 1,
  fields: readonly string[],
): RequestBodyFraming {
  let lengths: string[] | null = null;
  let codings: string[] | null = null;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    // A quick filter on the length before lower-casing: most names are neither.
    if (name.length === 14 && name.toLowerCase() === "content-length") {
      lengths = elementsOf(fields[i + 1]!, lengths ?? []);
    } else if (name.length === 17 && name.toLowerCase() === "transfer-encoding") {
      codings = elementsOf(fields[i + 1]!, codings ?? []);
    }
  }
  if (codings !== null) {
    // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
    if (versionMinor === 0) {
      throw new RequestRefused(400, "Transfer-Encoding in an HTTP/1.0 request");
    }
    // RFC 9112 §6.1, §6.3 item 3: the shape of request smuggling; a proxy must not pick one.
    if (lengths !== null) {
      throw new RequestRefused(400, "both Transfer-Encoding and Content-Length");
    }
    const last = codings.length === 0 ? "" : codings[codings.length - 1]!;
    // RFC 9112 §6.3 item 4: "the server MUST respond with the 400 (Bad Request) status code".
    if (last.toLowerCase() !== "chunked") {
      throw new RequestRefused(400, `chunked is not the final coding of ${codingsText(codings)}`);
    }
    if (codings.length > 1) {
      // RFC 9112 §6.1: a sender "MUST NOT apply the chunked transfer coding more than once".
      for (let i = 0; i < codings.length - 1; i++) {
        if (codings[i]!.toLowerCase() === "chunked") {
          throw new RequestRefused(400, `chunked twice in ${codingsText(codings)}`);
        }
      }
      // RFC 9112 §6.1: a coding we do not understand (and would not pass on: hop-by-hop).
      throw new RequestRefused(501, `transfer coding not implemented: ${codingsText(codings)}`);
    }
    return CHUNKED;
  }
  if (lengths === null) return NONE;
  // RFC 9112 §6.3 item 5: a list whose elements are all the same valid value is that value.
  let length = -1;
  for (const element of lengths) {
    // 1*DIGIT (RFC 9110 §8.6), the only form of a Content-Length element.
    const n = isDigits(element) ? Number(element) : NaN;
    if (!(n <= Number.MAX_SAFE_INTEGER) || (length >= 0 && n !== length)) {
      throw new RequestRefused(400, `Content-Length ${JSON.stringify(lengths.join(", "))}`);
    }
    length = n;
  }
  if (length < 0) throw new RequestRefused(400, "an empty Content-Length");
  return length === 0 ? EMPTY : { kind: "length", length };
}

const codingsText = (codings: string[]) => JSON.stringify(codings.join(", "));

/**
 * The elements of a comma-separated list (RFC 9110 §5.6.1), trimmed of
 * OWS, empty ones left out, added to `into`.
 */
export function elementsOf(value: string, into: string[] = []): string[] {
  let from = 0;
  while (from <= value.length) {
    let to = value.indexOf(",", from);
    if (to < 0) to = value.length;
    let a = from, b = to;
    while (a < b && isOws(value.charCodeAt(a))) a++;
    while (b > a && isOws(value.charCodeAt(b - 1))) b--;
    if (a < b) into.push(a === 0 && b === value.length ? value : value.slice(a, b));
    from = to + 1;
  }
  return into;
}

const isOws = (c: number) => c === 0x20 || c === 0x09;

/** Whether the list `value` has the element `lowerName` (case-insensitive). */
function hasElement(value: string, lowerName: string): boolean {
  // The common case, one element as it is: no list to split.
  if (value.length === lowerName.length) return value.toLowerCase() === lowerName;
  for (const element of elementsOf(value)) {
    if (element.toLowerCase() === lowerName) return true;
  }
  return false;
}

/**
 * The origin-form path and query of `target` (RFC 9112 §3.2), and the
 * authority of an absolute-form one (else `null`).
 *
 * @throws {RequestRefused} 400 for an authority-form or asterisk-form
 *   target, any other form, or characters a target cannot hold.
 */
export function requestTarget(
  target: string,
): { readonly path: string; readonly authority: string | null } {
  const first = target.charCodeAt(0);
  if (first === 0x2f /* / */ && isTarget(target)) return { path: target, authority: null };
  // RFC 9112 §3.2.4's asterisk-form (a server-wide OPTIONS) is refused, as nginx refuses it: a
  // reverse proxy forwards to resources of its upstream, and `*` names none.
  // RFC 9112 §3.2.2: the absolute-form, which a server MUST accept.
  const scheme = target.indexOf("://");
  if ((scheme === 4 || scheme === 5) && isTarget(target)) {
    const name = target.slice(0, scheme).toLowerCase();
    if (name === "http" || name === "https") {
      const start = scheme + 3;
      let end = start;
      while (end < target.length) {
        const c = target.charCodeAt(end);
        if (c === 0x2f /* / */ || c === 0x3f /* ? */) break;
        end++;
      }
      const authority = target.slice(start, end);
      // RFC 9110 §4.2.4: userinfo is to be treated as an error (HOST has no `@`).
      if (authority !== "" && onlyOf(HOST, authority)) {
        const rest = target.slice(end);
        const path = rest === "" ? "/" : rest.charCodeAt(0) === 0x3f ? `/${rest}` : rest;
        return { path, authority };
      }
    }
  }
  throw new RequestRefused(400, `invalid request-target ${JSON.stringify(target.slice(0, 80))}`);
}

/**
 * A request's head, from the parts of its request line (the method a
 * token, the version checked) and its `fields`: its target, framing, Host,
 * persistence and expectation.
 *
 * @throws {RequestRefused} for a request the server refuses before its handler.
 */
export function requestHead(
  method: string,
  target: string,
  versionMinor: 0 | 1,
  fields: string[],
): RequestHeadInfo {
  // RFC 9112 §3.2.3: CONNECT takes the authority-form, which we do not serve.
  if (method === "CONNECT") throw new RequestRefused(400, "CONNECT (a tunnel) is not served");
  let path = target, authority: string | null = null;
  // The common case, origin-form, without the allocation of requestTarget's answer.
  if (target.charCodeAt(0) !== 0x2f || !isTarget(target)) {
    ({ path, authority } = requestTarget(target));
  }
  let host: string | null = null;
  let hosts = 0;
  let close = false, keepAlive = false, expect = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    // A quick filter on the length before lower-casing: most names are none of these.
    const n = name.length;
    if (n === 4 && name.toLowerCase() === "host") {
      hosts++;
      host = fields[i + 1]!;
    } else if (n === 10 && name.toLowerCase() === "connection") {
      const value = fields[i + 1]!;
      if (hasElement(value, "close")) close = true;
      else if (hasElement(value, "keep-alive")) keepAlive = true;
    } else if (n === 6 && name.toLowerCase() === "expect") {
      if (hasElement(fields[i + 1]!, "100-continue")) expect = true;
    }
  }
  // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
  // request message that lacks a Host header field and to any request message that contains
  // more than one Host header field line or a Host header field with an invalid field value."
  if (hosts > 1) throw new RequestRefused(400, "more than one Host field");
  if (hosts === 0 && versionMinor === 1) throw new RequestRefused(400, "no Host field");
  if (host !== null && !onlyOf(HOST, host)) {
    throw new RequestRefused(400, `invalid Host ${JSON.stringify(host.slice(0, 80))}`);
  }
  const framing = requestBodyFraming(versionMinor, fields);
  return {
    method,
    target: path,
    versionMinor,
    fields,
    framing,
    // RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
    keepAlive: !close && (versionMinor === 1 || keepAlive),
    expectContinue: expect && versionMinor === 1 && framing !== NONE && framing !== EMPTY,
    // RFC 9112 §3.2.2: the authority of an absolute-form target stands for the Host field.
    host: authority ?? host,
  };
}
