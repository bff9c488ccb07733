/**
 * Response heads of the gateway's own HTTP/1.1 server, as bytes on the
 * wire (RFC 9112 §4, §5): the status line, the fields as given (checked:
 * a name must be a token, a value must not break the head), the framing
 * and connection fields this hop decides, and `Date` when the upstream gave
 * none (RFC 9110 §6.6.1: a recipient with a clock forwarding a response
 * without one appends it).
 *
 * @module
 */

import { BREAKS_LINE, isToken } from "./_field_syntax.ts";

/** How the body follows the head. */
export type BodyFraming =
  /** No body (HEAD, 204, 304, or none): `Content-Length` among the fields, if any, is kept. */
  | "none"
  /** `Content-Length` is among the fields and the body is that long. */
  | "fields"
  /** The body is in hand: its length is written here. */
  | "length"
  /** Chunked (an HTTP/1.1 client, a body of unknown length). */
  | "chunked"
  /** Until the connection closes (an HTTP/1.0 client, a body of unknown length). */
  | "close";

/** A field the head cannot carry: the upstream's response is not passed on. */
export class InvalidField extends Error {
  override name = "InvalidField";
}

/** The reasons of the statuses the gateway answers itself, and a few common others. */
const REASONS: Record<number, string> = {
  200: "OK",
  204: "No Content",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  413: "Content Too Large",
  414: "URI Too Long",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

let dateSecond = -1;
let dateText = "";

/** The `Date` value of now (IMF-fixdate, RFC 9110 §5.6.7), made once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/**
 * The head of a response: `status` and `reason` (the standard reason when
 * empty), `fields` (names and values alternating) written as given, each
 * checked but the first `checked` entries (known to be plain), then what
 * this hop adds: the framing (`Content-Length: length` for `"length"`,
 * `Transfer-Encoding: chunked` for `"chunked"`), `Connection:
 * close` when the connection ends after it (`keepAlive` false, or a body
 * delimited by the close), `Connection: keep-alive` for an HTTP/1.0 client
 * that keeps it, and `Date` when missing.
 *
 * @throws {InvalidField} for a field or reason that cannot be written as is.
 */
export function responseHead(
  status: number,
  reason: string,
  fields: readonly string[],
  checked: number,
  framing: BodyFraming,
  length: number,
  keepAlive: boolean,
  versionMinor: number,
): string {
  if (reason === "") reason = REASONS[status] ?? "";
  else if (BREAKS_LINE.test(reason)) {
    throw new InvalidField(`status reason ${JSON.stringify(reason)}`);
  }
  let head = `HTTP/1.1 ${status} ${reason}\r\n`;
  let dated = false;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!, value = fields[i + 1]!;
    if (i >= checked && (!isToken(name) || BREAKS_LINE.test(value))) {
      throw new InvalidField(`field ${JSON.stringify(name.slice(0, 40))}`);
    }
    if (name.length === 4 && name.toLowerCase() === "date") dated = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!dated) head += `date: ${httpDate()}\r\n`;
  if (framing === "length") head += `content-length: ${length}\r\n`;
  else if (framing === "chunked") head += "transfer-encoding: chunked\r\n";
  if (!keepAlive || framing === "close") head += "connection: close\r\n";
  else if (versionMinor === 0) head += "connection: keep-alive\r\n";
  return head + "\r\n";
}
