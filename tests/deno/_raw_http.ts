/** Helpers of the server tests: raw TCP clients on loopback that see when the server closes. */

import { systemClock } from "../../mod.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A TCP connection to 127.0.0.1:`port`. */
export function connect(port: number): Promise<Deno.TcpConn> {
  return Deno.connect({ hostname: "127.0.0.1", port });
}

/** Writes `text` whole. */
export async function send(conn: Deno.Conn, text: string): Promise<void> {
  const bytes = encoder.encode(text);
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/** What the server sent until it closed, and when it closed. */
export interface Closed {
  /** Everything received. */
  text: string;
  /** Milliseconds from the call to the end of the stream. */
  afterMs: number;
}

/**
 * Reads until the server closes the connection (end of stream or reset),
 * then closes it here too. Rejects, closing it, when that takes more than
 * `deadlineMs`: the server kept the connection.
 */
export async function readUntilClosed(conn: Deno.Conn, deadlineMs: number): Promise<Closed> {
  const start = performance.now();
  let timedOut = false;
  const timer = systemClock.setTimer(deadlineMs, () => {
    timedOut = true;
    conn.close();
  });
  let text = "";
  const buf = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += decoder.decode(buf.subarray(0, n));
    }
  } catch (e) {
    if (timedOut) {
      throw new Error(`Cannot see the connection closed: still open after ${deadlineMs} ms`);
    }
    if (!(e instanceof Deno.errors.ConnectionReset)) throw e;
  } finally {
    timer.cancel();
  }
  if (timedOut) {
    throw new Error(`Cannot see the connection closed: still open after ${deadlineMs} ms`);
  }
  conn.close();
  return { text, afterMs: performance.now() - start };
}

/**
 * Sends a GET on a kept-alive connection and reads its whole response
 * (`Content-Length` bodies only).
 */
export async function roundTrip(conn: Deno.Conn, path = "/"): Promise<string> {
  await send(conn, `GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`);
  let text = "";
  const buf = new Uint8Array(16 * 1024);
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length >= end + 4 + length) return text;
    }
    const n = await conn.read(buf);
    if (n === null) {
      throw new Error(`Cannot read the response: closed after ${JSON.stringify(text)}`);
    }
    text += decoder.decode(buf.subarray(0, n));
  }
}
