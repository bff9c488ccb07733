/**
 * Writing bytes whole to a connection: a write may take only part of them.
 * The usual write takes every byte at once, so the common case makes no
 * async function (on Deno each one awaited costs about 1,500 instructions,
 * a `.then` a fraction of it: `bench/RESULTS.md`, "fewer async functions").
 *
 * @module
 */

/** Writes all of `bytes` to `conn`; rejects with the connection's error. */
export function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  return conn.write(bytes).then((n) => {
    if (n !== bytes.length) return writeRest(conn, bytes, n);
  });
}

async function writeRest(conn: Deno.Conn, bytes: Uint8Array, at: number): Promise<void> {
  for (;;) {
    if (!(at > 0)) throw new Error(`write returned ${at}`);
    if (at >= bytes.length) return;
    const n = await conn.write(bytes.subarray(at));
    if (!(n > 0)) throw new Error(`write returned ${n}`);
    at += n;
  }
}
