/**
 * The answer to a connection over `serveGuarded()`'s cap: `503 Service
 * Unavailable` with `Connection: close` and `Retry-After`, written before
 * the request is even read, then a lingering close.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";
import { writeAll } from "./_write_all.ts";

const BODY = "Too many connections: try again later.\n";

/** The whole response, as sent (RFC 9110 §15.6.4; `Retry-After`: §10.2.3). */
export const REFUSAL: Uint8Array = new TextEncoder().encode(
  "HTTP/1.1 503 Service Unavailable\r\n" +
    "Connection: close\r\n" +
    "Retry-After: 1\r\n" +
    "Content-Type: text/plain; charset=utf-8\r\n" +
    `Content-Length: ${BODY.length}\r\n` +
    "\r\n" +
    BODY,
);

/** Most bytes read and dropped from a refused client before closing. */
const MAX_DISCARD_BYTES = 64 * 1024;

/**
 * Sends {@linkcode REFUSAL} on `conn` and closes it. With `lingerMs` > 0 it
 * closes in stages, as RFC 9112 §9.6 advises: half-close, then read and
 * drop what the client sends until it closes or `lingerMs` passed; closing
 * with its request still unread would reset the connection, and a reset can
 * discard the 503 before the client reads it. Never rejects.
 */
export async function refuse(conn: Deno.Conn, clock: Clock, lingerMs: number): Promise<void> {
  const timer = lingerMs > 0 ? clock.setTimer(lingerMs, () => closeQuietly(conn)) : null;
  try {
    await writeAll(conn, REFUSAL);
    if (timer === null) return;
    await conn.closeWrite();
    const buf = new Uint8Array(4096);
    for (let dropped = 0; dropped < MAX_DISCARD_BYTES;) {
      const n = await conn.read(buf);
      if (n === null) break;
      dropped += n;
    }
  } catch {
    // Reset by the client, or closed by the linger timer.
  } finally {
    timer?.cancel();
    closeQuietly(conn);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
