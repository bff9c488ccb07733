/**
 * Requests of the HTTP/1.1 upstream client on the wire: the head in one
 * write, then the body, by its length or chunked (RFC 9112 §6.2, §7.1),
 * with backpressure (each write is awaited before the next chunk is read).
 *
 * @module
 */

import { BREAKS_LINE, isToken, onlyOf, VCHAR } from "./_field_syntax.ts";
import type { Http1Connection } from "./_http1_connection.ts";
import { requestFraming } from "./_http1_framing.ts";

/** A character no byte string holds (field values are Latin-1, RFC 9110 §5.5). */
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** Fields the client writes itself: framing and the connection are this hop's. */
const OURS = new Set(["host", "transfer-encoding", "connection", "keep-alive"]);

const encoder = new TextEncoder();

/** A request head, and how its body goes. */
export interface RequestHead {
  /** The head as a byte string (one character per byte: Latin-1). */
  text: string;
  /** `length` (then `contentLength`), `chunked`, or `null` for no body. */
  body: "length" | "chunked" | null;
  contentLength: number;
}

/**
 * Header fields the gateway's own server read, to be sent as they are:
 * names and values alternating, each name a token and each value Latin-1
 * without CR, LF or NUL (what `_http1_request_parser.ts` lets through),
 * with `Host`, `Content-Length` and the hop-by-hop fields already left out;
 * `contentLength` is the body's length by the request's framing, or `null`.
 * Sending them skips the checks a field from elsewhere needs.
 */
export class CheckedFields {
  readonly fields: readonly string[];
  readonly contentLength: number | null;
  constructor(fields: readonly string[], contentLength: number | null) {
    this.fields = fields;
    this.contentLength = contentLength;
  }
}

/**
 * The head of a request for `target` (the raw path and query) on `host`,
 * with `headers` as given but `Host`, `Transfer-Encoding`, `Connection` and
 * `Keep-Alive`, which are ours, plus the framing of the body.
 *
 * @throws {TypeError} for a method, target, field or `Content-Length` that cannot be sent as is.
 */
export function encodeHead(
  method: string,
  target: string,
  host: string,
  headers: readonly (readonly [string, string])[] | CheckedFields,
  hasBody: boolean,
): RequestHead {
  if (!isToken(method) || method === "CONNECT") {
    throw new TypeError(`Cannot send the request: method ${JSON.stringify(method)}`);
  }
  // An origin-form target (RFC 9112 §3.2.1), as sent: visible ASCII only.
  if (target.charCodeAt(0) !== 0x2f || !onlyOf(VCHAR, target, 1)) {
    throw new TypeError(`Cannot send the request: target ${JSON.stringify(target)}`);
  }
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${host}\r\n`;
  let contentLength: string | null = null;
  if (headers instanceof CheckedFields) {
    const f = headers.fields;
    for (let i = 0; i < f.length; i += 2) head += `${f[i]}: ${f[i + 1]}\r\n`;
    if (headers.contentLength !== null) {
      contentLength = String(headers.contentLength);
      head += `content-length: ${contentLength}\r\n`;
    }
  } else {
    for (const [name, value] of headers) {
      if (!isToken(name) || BREAKS_LINE.test(value) || BEYOND_LATIN1.test(value)) {
        throw new TypeError(`Cannot send the request: header ${JSON.stringify(name)}`);
      }
      const lower = name.toLowerCase();
      if (OURS.has(lower)) continue;
      if (lower === "content-length") {
        if (contentLength !== null || !/^[0-9]{1,15}$/.test(value)) {
          throw new TypeError(`Cannot send the request: Content-Length ${JSON.stringify(value)}`);
        }
        contentLength = value;
      }
      head += `${name}: ${value}\r\n`;
    }
  }
  if (!hasBody && contentLength !== null && Number(contentLength) !== 0) {
    throw new TypeError(`Cannot send the request: Content-Length ${contentLength} without a body`);
  }
  const framing = requestFraming(method, hasBody, contentLength);
  if (framing === "chunked") head += "transfer-encoding: chunked\r\n";
  else if (framing === "empty") head += "content-length: 0\r\n";
  head += "\r\n";
  return {
    text: head,
    body: !hasBody ? null : framing === "chunked" ? "chunked" : "length",
    contentLength: contentLength === null ? 0 : Number(contentLength),
  };
}

/** The request body's source failed (the client went away): the request cannot be completed. */
export class BodySourceError extends Error {
  override name = "BodySourceError";
}

const LAST_CHUNK = encoder.encode("0\r\n\r\n");

/**
 * Writes `body` on `conn` as `head` framed it; `sent()` is called once
 * every byte of it is on the wire (the end included). Reads a chunk only
 * once the last is written. Rejects with a {@linkcode BodySourceError} when
 * the body stream fails or does not match its `Content-Length`, with the
 * connection's error when a write fails; the stream is cancelled then.
 */
export async function writeBody(
  conn: Http1Connection,
  body: ReadableStream<Uint8Array>,
  head: RequestHead,
  sent: () => void,
): Promise<void> {
  const reader = body.getReader();
  const chunked = head.body === "chunked";
  let left = head.contentLength;
  try {
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch (e) {
        throw new BodySourceError("the request body failed", { cause: e });
      }
      if (result.done) break;
      const chunk = result.value;
      if (chunk.byteLength === 0) continue;
      if (chunked) {
        await conn.write(chunkFrame(chunk));
      } else {
        if (chunk.byteLength > left) {
          throw new BodySourceError("the request body is longer than its Content-Length");
        }
        left -= chunk.byteLength;
        await conn.write(chunk);
        if (left === 0) sent();
      }
    }
    if (chunked) {
      await conn.write(LAST_CHUNK);
      sent();
    } else if (left > 0) {
      throw new BodySourceError("the request body is shorter than its Content-Length");
    } else if (head.contentLength === 0) {
      sent();
    }
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw e;
  } finally {
    reader.releaseLock();
  }
}

/** One chunk (RFC 9112 §7.1): its size in hex, CRLF, the data, CRLF; in one buffer, one write. */
function chunkFrame(data: Uint8Array): Uint8Array {
  const size = encoder.encode(`${data.byteLength.toString(16)}\r\n`);
  const frame = new Uint8Array(size.length + data.byteLength + 2);
  frame.set(size);
  frame.set(data, size.length);
  frame[frame.length - 2] = 0x0d;
  frame[frame.length - 1] = 0x0a;
  return frame;
}
