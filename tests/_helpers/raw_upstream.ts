/**
 * An HTTP/1.1 upstream on `Deno.listen` at 127.0.0.1 whose responses the
 * test writes byte by byte, for the proxy conformance suite: it parses each
 * request (with `http-parser-js` in `REQUEST` mode: length or chunked
 * bodies, kept-alive connections), records it as received (raw header names,
 * which connection), and hands it to the test's `respond`, which writes
 * whatever a case needs, well-formed or not, and may close the connection.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { HTTPParser } from "http-parser-js";

/** A request as the upstream received it. */
export interface UpstreamRequest {
  method: string;
  /** The request target as written. */
  target: string;
  /** The header lines as received: names as written, repeated ones apart. */
  headers: [string, string][];
  body: Uint8Array;
  /** 1 for the first connection accepted, 2 for the next... */
  connection: number;
}

/** One accepted connection, for `respond` to write to. */
export interface UpstreamConn {
  readonly id: number;
  /** Writes `data` whole (text as Latin-1: one byte per character). */
  write(data: string | Uint8Array): Promise<void>;
  /** Closes the connection (idempotent). */
  close(): void;
  readonly closed: boolean;
}

/** Answers one request; the next request on the connection waits for it. */
export type Respond = (req: UpstreamRequest, conn: UpstreamConn) => void | Promise<void>;

/** A running raw upstream. */
export interface RawUpstream extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now (not yet closed by either side). */
  readonly open: number;
  readonly requests: UpstreamRequest[];
  /** Closes the listener and every connection; settles once their loops ended. */
  close(): Promise<void>;
}

// The parser's default decoding, `ascii`, clears the high bit of field bytes: read them as sent.
HTTPParser.encoding = "latin1";

/** Latin-1 bytes of `text`. */
export function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/** Bytes whose every position is told apart from its neighbours (a shifted chunk shows). */
export function pattern(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 7 + (i >>> 11)) & 0xff;
  return out;
}

/** SHA-256 of `bytes`, in hex. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A complete response with `body`, `Content-Length` framed. */
export function okResponse(body: string, head = ""): string {
  return `HTTP/1.1 200 OK\r\n${head}Content-Length: ${body.length}\r\n\r\n${body}`;
}

/** The value of header `name` (case-insensitive) in `req`, the lines joined with ", ", or `null`. */
export function headerOf(req: UpstreamRequest, name: string): string | null {
  const values = req.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  return values.length === 0 ? null : values.join(", ");
}

/** Starts the upstream. */
export function rawUpstream(respond: Respond): RawUpstream {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const requests: UpstreamRequest[] = [];
  const conns = new Set<Deno.Conn>();
  const loops: Promise<void>[] = [];
  let accepted = 0;
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return; // closed
      }
      conns.add(conn);
      const id = ++accepted;
      loops.push(serve(conn, id, respond, requests).finally(() => conns.delete(conn)));
    }
  })();
  const close = async () => {
    listener.close();
    await accepting;
    for (const conn of conns) closeQuietly(conn);
    await Promise.all(loops);
  };
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return conns.size;
    },
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** Reads requests off `conn` and answers each in turn, until either side closes. */
async function serve(
  conn: Deno.Conn,
  id: number,
  respond: Respond,
  requests: UpstreamRequest[],
): Promise<void> {
  let closed = false;
  const out: UpstreamConn = {
    id,
    async write(data) {
      const bytes = typeof data === "string" ? bytesOf(data) : data;
      for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
    },
    close() {
      closed = true;
      closeQuietly(conn);
    },
    get closed() {
      return closed;
    },
  };
  const ready: UpstreamRequest[] = [];
  let current: UpstreamRequest | null = null;
  let chunks: Uint8Array[] = [];
  const parser = new HTTPParser(HTTPParser.REQUEST) as unknown as Record<number, unknown> & {
    execute(b: Buffer): number | Error;
  };
  parser[HTTPParser.kOnHeadersComplete] = (
    info: { method: number; url: string; headers: string[] },
  ) => {
    const headers: [string, string][] = [];
    for (let i = 0; i < info.headers.length; i += 2) {
      headers.push([info.headers[i]!, info.headers[i + 1]!]);
    }
    current = {
      method: HTTPParser.methods[info.method]!,
      target: info.url,
      headers,
      body: new Uint8Array(0),
      connection: id,
    };
    chunks = [];
  };
  parser[HTTPParser.kOnBody] = (chunk: Buffer) => chunks.push(new Uint8Array(chunk));
  parser[HTTPParser.kOnMessageComplete] = () => {
    current!.body = concat(chunks);
    requests.push(current!);
    ready.push(current!);
  };
  const buf = new Uint8Array(64 * 1024);
  try {
    while (!closed) {
      const n = await conn.read(buf);
      if (n === null) break;
      const result = parser.execute(Buffer.from(buf.buffer, 0, n));
      if (result instanceof Error) throw result;
      while (ready.length > 0 && !closed) await respond(ready.shift()!, out);
    }
  } catch {
    // Reset by the peer, or closed here while reading: the connection is over either way.
  } finally {
    out.close();
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
