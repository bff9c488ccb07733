/**
 * Writing bytes whole to a connection: a write may take only part of them.
 * The usual write takes every byte at once, so the common case makes no
 * async function (on Deno each one awaited costs about 1,500 instructions,
 * a `.then` a fraction of it: `bench/RESULTS.md`, "fewer async functions").
 *
 * @module
 */

/** What can be written to: a connection, or its {@linkcode Socket}. */
export interface Writer {
  /** Writes some of `bytes`: resolves with how many were written. */
  write(bytes: Uint8Array): Promise<number>;
}

/** Writes all of `bytes` to `conn`; rejects with the connection's error. */
export function writeAll(conn: Writer, bytes: Uint8Array): Promise<void> {
  return conn.write(bytes).then((n) => {
    if (n !== bytes.length) return writeRest(conn, bytes, n);
  });
}

async function writeRest(conn: Writer, bytes: Uint8Array, at: number): Promise<void> {
  for (;;) {
    if (!(at > 0)) throw new Error(`write returned ${at}`);
    if (at >= bytes.length) return;
    const n = await conn.write(bytes.subarray(at));
    if (!(n > 0)) throw new Error(`write returned ${n}`);
    at += n;
  }
}
