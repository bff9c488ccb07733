/**
 * `src/deno/_socket.ts`: a connection's reads and writes, by Deno's core
 * operations and by the connection's own methods, behave alike: bytes both
 * ways, 0 at the end of the stream, a rejection for a read pending when the
 * connection is closed and for a write after it.
 */

import assert from "node:assert/strict";
import { isDirect, type Socket, socketOf, useDirectOps } from "../../src/deno/_socket.ts";

/** A connected pair on loopback: [accepted, dialled]; both closed by `close`. */
async function pair(): Promise<{ a: Deno.TcpConn; b: Deno.TcpConn; close: () => void }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const b = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const a = await accepted;
  listener.close();
  const close = () => {
    for (const c of [a, b]) {
      try {
        c.close();
      } catch {
        // closed by the test
      }
    }
  };
  return { a, b, close };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function readText(socket: Socket, length: number): Promise<string> {
  const buf = new Uint8Array(64);
  let got = "";
  while (got.length < length) {
    const n = await socket.read(buf);
    if (n === 0) break;
    got += text(buf.subarray(0, n));
  }
  return got;
}

for (const direct of [true, false]) {
  const name = direct ? "Deno's operations" : "the connection's methods";

  Deno.test(`socket on ${name}: bytes both ways, then 0 at the end`, async () => {
    useDirectOps(direct);
    const { a, b, close } = await pair();
    try {
      const sa = socketOf(a), sb = socketOf(b);
      // Direct where this Deno exposes its operations (the module falls back where it does not).
      if (!direct) assert(!isDirect(sa) && !isDirect(sb));
      assert.equal(await sa.write(bytes("ping")), 4);
      assert.equal(await readText(sb, 4), "ping");
      assert.equal(await sb.write(bytes("pong!")), 5);
      assert.equal(await readText(sa, 5), "pong!");
      b.closeWrite();
      assert.equal(await sa.read(new Uint8Array(8)), 0);
    } finally {
      close();
      useDirectOps(true);
    }
  });

  Deno.test(`socket on ${name}: a pending read and a later write fail once it is closed`, async () => {
    useDirectOps(direct);
    const { a, b, close } = await pair();
    try {
      const sa = socketOf(a);
      const pending = sa.read(new Uint8Array(8));
      a.close();
      // Closed under it: the read rejects (Deno: "operation canceled"), never resolves with bytes.
      const outcome = await pending.then((n) => n, (e: unknown) => e);
      assert(outcome === 0 || outcome instanceof Error, `read gave ${String(outcome)}`);
      await assert.rejects(() => sa.write(bytes("late")));
    } finally {
      close();
      void b;
      useDirectOps(true);
    }
  });
}

Deno.test("socket: a connection that is not a TcpConn uses its own methods", async () => {
  const written: string[] = [];
  const fake = {
    read: (buf: Uint8Array) => {
      buf.set(bytes("hi"));
      return Promise.resolve(2);
    },
    write: (b: Uint8Array) => {
      written.push(text(b));
      return Promise.resolve(b.length);
    },
  } as unknown as Deno.Conn;
  const socket = socketOf(fake);
  assert(!isDirect(socket));
  const buf = new Uint8Array(4);
  assert.equal(await socket.read(buf), 2);
  assert.equal(text(buf.subarray(0, 2)), "hi");
  assert.equal(await socket.write(bytes("yo")), 2);
  assert.deepEqual(written, ["yo"]);
});

Deno.test("socket: the end of a connection's own stream (null) reads as 0", async () => {
  const fake = { read: () => Promise.resolve(null) } as unknown as Deno.Conn;
  assert.equal(await socketOf(fake).read(new Uint8Array(4)), 0);
});

Deno.test("socket: on Deno 2 a TcpConn is read and written by Deno's operations", async () => {
  // If a Deno release moves them, the gateway still works (the fallback) but loses this path's
  // speed (`bench/RESULTS.md`): this test says so.
  const { a, b, close } = await pair();
  try {
    assert(isDirect(socketOf(a)) && isDirect(socketOf(b)));
  } finally {
    close();
  }
});
