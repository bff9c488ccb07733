/**
 * `noDelayWebSocket()` at the frame level, against a server the test
 * scripts byte by byte (`_raw_ws_server.ts`): the opening handshake and its
 * failures, masking, lengths, fragmentation, ping, both closing handshakes,
 * protocol errors, the write queue, and `onclose` exactly once in every path.
 */

import assert from "node:assert/strict";
import type { CoordinatorSocket } from "../../src/remote/client_types.ts";
import { systemClock } from "../../src/fairqueuing/clock.ts";
import { type Dial, dialNoDelay, WebSocketClient } from "../../src/deno/_websocket_client.ts";
import { noDelayWebSocket } from "../../src/deno/no_delay_websocket.ts";
import { closeBody, closeCode, frame, RawServer, type ServerConn } from "./_raw_ws_server.ts";
import { sleep } from "../_helpers/real_time.ts";

const OP_CONT = 0x0, OP_TEXT = 0x1, OP_BINARY = 0x2, OP_CLOSE = 0x8, OP_PING = 0x9, OP_PONG = 0xa;
const decoder = new TextDecoder();
const text = (bytes: Uint8Array) => decoder.decode(bytes);

/** What a socket's handlers saw. */
interface Seen {
  opened: number;
  messages: unknown[];
  closes: CloseEvent[];
  /** Resolves at the first `open`. */
  open: Promise<void>;
  /** Resolves at the first `close`. */
  closed: Promise<CloseEvent>;
  /** Resolves when `n` messages arrived. */
  received(n: number): Promise<void>;
}

function watch(socket: CoordinatorSocket): Seen {
  const open = Promise.withResolvers<void>();
  const closed = Promise.withResolvers<CloseEvent>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const seen: Seen = {
    opened: 0,
    messages: [],
    closes: [],
    open: open.promise,
    closed: closed.promise,
    received: (n) => {
      if (seen.messages.length >= n) return Promise.resolve();
      const { promise, resolve } = Promise.withResolvers<void>();
      waiters.push({ n, resolve });
      return promise;
    },
  };
  socket.onopen = () => {
    seen.opened++;
    open.resolve();
  };
  socket.onmessage = (e) => {
    seen.messages.push(e.data);
    for (const w of waiters) if (seen.messages.length >= w.n) w.resolve();
  };
  socket.onclose = (e) => {
    seen.closes.push(e);
    closed.resolve(e);
  };
  return seen;
}

/** Waits for the close, then a while more, and checks it came exactly once. */
async function closedOnce(seen: Seen, socket: CoordinatorSocket): Promise<CloseEvent> {
  const e = await seen.closed;
  await sleep(20);
  assert.equal(seen.closes.length, 1, "onclose fires exactly once");
  assert.equal(socket.readyState, 3);
  return e;
}

const open = noDelayWebSocket({ closeTimeoutMs: 200 });

/** A client and its accepted, upgraded server side. */
async function connected(server: RawServer, factory = open) {
  const socket = factory(server.url());
  const seen = watch(socket);
  const peer = await server.accept();
  await peer.handshake();
  await seen.open;
  return { socket, seen, peer };
}

/** Reads frames until one of `opcode`, failing on anything else but pongs. */
async function expectFrame(peer: ServerConn, opcode: number) {
  const f = await peer.readFrame();
  assert.ok(f !== null, `a frame of opcode ${opcode}, got the end of the stream`);
  assert.equal(f.opcode, opcode);
  return f;
}

Deno.test("noDelayWebSocket sends a correct upgrade request and opens on a correct 101", async () => {
  using server = new RawServer();
  const socket = open(server.url("/path?q=1"));
  const seen = watch(socket);
  assert.equal(socket.readyState, 0);
  assert.throws(() => socket.send("early"), { name: "InvalidStateError" });
  const peer = await server.accept();
  const request = await peer.handshake();
  const lines = request.split("\r\n");
  assert.equal(lines[0], "GET /path?q=1 HTTP/1.1");
  const headers = new Map(
    lines.slice(1).map((l) => {
      const i = l.indexOf(":");
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
    }),
  );
  assert.equal(headers.get("host"), `127.0.0.1:${server.listener.addr.port}`);
  assert.equal(headers.get("upgrade"), "websocket");
  assert.equal(headers.get("connection"), "Upgrade");
  assert.equal(headers.get("sec-websocket-version"), "13");
  const key = headers.get("sec-websocket-key")!;
  assert.equal(atob(key).length, 16, "the key is 16 bytes in base64");
  await seen.open;
  assert.equal(socket.readyState, 1);
  assert.equal(seen.opened, 1);

  // A second connection gets another key.
  const other = open(server.url());
  const otherSeen = watch(other);
  const otherPeer = await server.accept();
  const otherKey = /sec-websocket-key: (.*)/i.exec(await otherPeer.handshake())![1];
  assert.notEqual(otherKey, key, "a random key per connection");
  await otherSeen.open;
  other.close();
  socket.close();
  await Promise.all([otherSeen.closed, seen.closed]);
});

for (
  const [title, response] of [
    ["a status other than 101", () => "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"],
    [
      "a wrong Sec-WebSocket-Accept",
      () =>
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Accept: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    ],
    [
      "a missing Upgrade header",
      (accept: string) =>
        `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    ],
    [
      "an extension it did not offer",
      (accept: string) =>
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n`,
    ],
  ] as const
) {
  Deno.test(`noDelayWebSocket fails the handshake on ${title}: no open, close once`, async () => {
    using server = new RawServer();
    const socket = open(server.url());
    const seen = watch(socket);
    const peer = await server.accept();
    await peer.handshake(response);
    const e = await closedOnce(seen, socket);
    assert.equal(seen.opened, 0);
    assert.equal(e.code, 1006);
    assert.equal(e.wasClean, false);
    assert.equal(await peer.readFrame(), null, "the client cut the connection");
  });
}

Deno.test("noDelayWebSocket closes once, without open, when the connection is refused", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const socket = open(`ws://127.0.0.1:${port}/`);
  const seen = watch(socket);
  const e = await closedOnce(seen, socket);
  assert.equal(seen.opened, 0);
  assert.equal(e.code, 1006);
});

Deno.test("noDelayWebSocket: close() while connecting cancels it, during the dial", async () => {
  using server = new RawServer();
  const socket = open(server.url());
  const seen = watch(socket);
  socket.close();
  assert.equal(socket.readyState, 2);
  const e = await closedOnce(seen, socket);
  assert.equal(seen.opened, 0);
  assert.deepEqual([e.code, e.wasClean], [1006, false]);
});

Deno.test("noDelayWebSocket: close() while connecting cancels it, during the handshake", async () => {
  using server = new RawServer();
  const socket = open(server.url());
  const seen = watch(socket);
  const peer = await server.accept();
  await peer.readRequest(); // and no answer
  socket.close();
  const e = await closedOnce(seen, socket);
  assert.equal(seen.opened, 0);
  assert.deepEqual([e.code, e.wasClean], [1006, false]);
  assert.equal(await peer.readFrame(), null, "the connection is cut");
});

Deno.test("noDelayWebSocket masks every frame with a fresh random key", async () => {
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server);
  for (let i = 0; i < 8; i++) socket.send(`message ${i}`);
  const keys = new Set<string>();
  for (let i = 0; i < 8; i++) {
    const f = await expectFrame(peer, OP_TEXT);
    assert.equal(f.masked, true, "client frames are masked");
    assert.equal(f.fin, true);
    assert.equal(text(f.payload), `message ${i}`);
    keys.add(f.mask!.join());
  }
  // Eight random 32-bit keys: a repeat has a chance of about 1 in 600 million.
  assert.equal(keys.size, 8, "no key repeats");
  assert.ok(!keys.has("0,0,0,0"));
  socket.close();
  await peer.writeFrame(OP_CLOSE, closeBody(1000));
  await seen.closed;
});

Deno.test("noDelayWebSocket encodes and decodes 7-, 16- and 64-bit payload lengths", async () => {
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server);
  const sizes = [125, 126, 65_535, 65_536, 200_000];
  for (const n of sizes) socket.send("x".repeat(n - 1) + "y");
  for (const n of sizes) {
    const f = await expectFrame(peer, OP_TEXT);
    assert.equal(f.lengthBits, n < 126 ? 7 : n < 65_536 ? 16 : 64, `length ${n}`);
    assert.equal(f.payload.length, n);
    assert.equal(text(f.payload), "x".repeat(n - 1) + "y");
  }
  for (const n of sizes) await peer.writeFrame(OP_TEXT, "a".repeat(n - 1) + "b");
  await seen.received(sizes.length);
  assert.deepEqual(seen.messages, sizes.map((n) => "a".repeat(n - 1) + "b"));
  socket.close();
  await peer.writeFrame(OP_CLOSE, closeBody(1000));
  await seen.closed;
});

Deno.test("noDelayWebSocket reassembles a fragmented message, answering a ping between fragments", async () => {
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server);
  // "héllo wörld" split inside the two-byte characters: only the whole message is decoded.
  const bytes = new TextEncoder().encode("héllo wörld");
  await peer.writeRaw(frame(OP_TEXT, bytes.subarray(0, 2), { fin: false }));
  await peer.writeFrame(OP_PING, "are you there");
  await peer.writeRaw(frame(OP_CONT, bytes.subarray(2, 9), { fin: false }));
  await peer.writeRaw(frame(OP_CONT, bytes.subarray(9)));
  await peer.writeFrame(OP_BINARY, new Uint8Array([1, 2, 3]));
  await seen.received(2);
  assert.equal(seen.messages[0], "héllo wörld");
  assert.deepEqual([...new Uint8Array(seen.messages[1] as ArrayBuffer)], [1, 2, 3]);
  const pong = await expectFrame(peer, OP_PONG);
  assert.equal(pong.masked, true);
  assert.equal(text(pong.payload), "are you there", "the pong carries the ping's payload");
  socket.close();
  await peer.writeFrame(OP_CLOSE, closeBody(1000));
  await seen.closed;
});

Deno.test("noDelayWebSocket echoes a server's close, cuts the connection and reports it", async () => {
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server);
  await peer.writeFrame(OP_CLOSE, closeBody(4001, "bye now"));
  const echo = await expectFrame(peer, OP_CLOSE);
  assert.equal(echo.masked, true);
  assert.equal(closeCode(echo.payload), 4001, "the echo carries the server's code");
  assert.equal(await peer.readFrame(), null, "then the client closes the TCP connection");
  const e = await closedOnce(seen, socket);
  assert.deepEqual([e.code, e.reason, e.wasClean], [4001, "bye now", true]);
  socket.send("after close"); // dropped, no throw
});

Deno.test("noDelayWebSocket close(): the close frame, then the server's answer, or the timeout", async () => {
  using server = new RawServer();
  // The server answers.
  const a = await connected(server);
  a.socket.close(1000, "done");
  assert.equal(a.socket.readyState, 2);
  const f = await expectFrame(a.peer, OP_CLOSE);
  assert.equal(closeCode(f.payload), 1000);
  assert.equal(text(f.payload.subarray(2)), "done");
  await a.peer.writeFrame(OP_TEXT, "late message"); // no message event once closing
  await a.peer.writeFrame(OP_CLOSE, closeBody(1000, "ok"));
  const e = await closedOnce(a.seen, a.socket);
  assert.deepEqual([e.code, e.reason, e.wasClean], [1000, "ok", true]);
  assert.deepEqual(a.seen.messages, []);
  assert.equal(await a.peer.readFrame(), null);

  // The server never answers: cut after closeTimeoutMs (200 ms here).
  const b = await connected(server);
  const started = performance.now();
  b.socket.close();
  const g = await expectFrame(b.peer, OP_CLOSE);
  assert.equal(g.payload.length, 0, "close() without a code sends no code");
  const e2 = await closedOnce(b.seen, b.socket);
  assert.deepEqual([e2.code, e2.wasClean], [1006, false]);
  assert.ok(performance.now() - started >= 190, "waited for the close timeout");
  assert.throws(() => b.socket.close(1001), { name: "InvalidAccessError" });
});

/** A connected client that receives `bytes`: it must send a close frame with `code` and report it. */
async function failsWith(bytes: Uint8Array, code: number, factory = open): Promise<void> {
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server, factory);
  await peer.writeRaw(bytes);
  const f = await expectFrame(peer, OP_CLOSE);
  assert.equal(closeCode(f.payload), code);
  assert.equal(await peer.readFrame(), null, "then the TCP connection is cut");
  const e = await closedOnce(seen, socket);
  assert.equal(e.code, code);
  assert.equal(e.wasClean, false);
  assert.deepEqual(seen.messages, []);
}

Deno.test("noDelayWebSocket fails with 1002 on a masked server frame", async () => {
  await failsWith(frame(OP_TEXT, "hidden", { mask: true }), 1002);
});

Deno.test("noDelayWebSocket fails with 1002 on reserved bits, unknown opcodes, stray continuations, bad control frames", async () => {
  await failsWith(frame(OP_TEXT, "compressed?", { rsv: 0x40 }), 1002);
  await failsWith(frame(0x3, "reserved opcode"), 1002);
  await failsWith(frame(0xb, "reserved control opcode"), 1002);
  await failsWith(frame(OP_CONT, "no message started"), 1002);
  await failsWith(frame(OP_PING, "fragmented ping", { fin: false }), 1002);
  await failsWith(frame(OP_PING, "p".repeat(126)), 1002);
  await failsWith(frame(OP_CLOSE, closeBody(1005)), 1002);
  await failsWith(frame(OP_CLOSE, new Uint8Array([3])), 1002);
  const twoStarts = new Uint8Array([
    ...frame(OP_TEXT, "a", { fin: false }),
    ...frame(OP_TEXT, "b"),
  ]);
  await failsWith(twoStarts, 1002);
});

Deno.test("noDelayWebSocket fails with 1007 on invalid UTF-8", async () => {
  await failsWith(frame(OP_TEXT, new Uint8Array([0x68, 0xc3, 0x28])), 1007);
  await failsWith(frame(OP_CLOSE, new Uint8Array([0x03, 0xe8, 0xff])), 1007);
});

Deno.test("noDelayWebSocket fails with 1009 on a message over maxMessageBytes, whole or fragmented", async () => {
  const small = noDelayWebSocket({ maxMessageBytes: 100, closeTimeoutMs: 200 });
  // Refused at the header: the 64-bit length announces more than the limit, no payload follows.
  const header = frame(OP_TEXT, "x".repeat(70_000)).subarray(0, 10);
  await failsWith(header, 1009, small);
  await failsWith(frame(OP_TEXT, "x".repeat(101)), 1009, small);
  const fragments = new Uint8Array([
    ...frame(OP_TEXT, "x".repeat(60), { fin: false }),
    ...frame(OP_CONT, "x".repeat(41)),
  ]);
  await failsWith(fragments, 1009, small);

  // Control frames are not messages: a ping longer than the limit is still answered.
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server, small);
  await peer.writeFrame(OP_PING, "p".repeat(120));
  assert.equal((await expectFrame(peer, OP_PONG)).payload.length, 120);
  socket.close();
  await peer.writeFrame(OP_CLOSE, closeBody(1000));
  assert.equal((await closedOnce(seen, socket)).code, 1000);
});

Deno.test("noDelayWebSocket reports 1006 once when the server cuts the connection", async () => {
  using server = new RawServer();
  const { socket, seen, peer } = await connected(server);
  peer.close();
  const e = await closedOnce(seen, socket);
  assert.deepEqual([e.code, e.wasClean], [1006, false]);
});

/** A client on `dial` wrapped to record (and maybe shorten) each write. */
function recordingClient(url: string, options: { maxWrite?: number } = {}) {
  const writes: number[] = [];
  const dial: Dial = async (u, signal) => {
    const conn = await dialNoDelay(u, signal);
    const write = conn.write.bind(conn);
    conn.write = (p: Uint8Array) => {
      const part = p.subarray(0, Math.min(p.length, options.maxWrite ?? Infinity));
      writes.push(part.length);
      return write(part);
    };
    return conn;
  };
  const socket = new WebSocketClient(new URL(url), {
    dial,
    maxMessageBytes: 1 << 20,
    closeTimeoutMs: 200,
    clock: systemClock,
  });
  return { socket, writes };
}

Deno.test("noDelayWebSocket coalesces the frames of one run into one write, in order", async () => {
  using server = new RawServer();
  const { socket, writes } = recordingClient(server.url());
  const seen = watch(socket);
  const peer = await server.accept();
  await peer.handshake();
  await seen.open;
  const before = writes.length;
  for (let i = 0; i < 5; i++) socket.send(`op ${i}`);
  assert.equal(writes.length, before, "nothing written synchronously");
  for (let i = 0; i < 5; i++) {
    assert.equal(text((await expectFrame(peer, OP_TEXT)).payload), `op ${i}`);
  }
  assert.equal(writes.length, before + 1, "five frames, one write");
  socket.close();
  await peer.writeFrame(OP_CLOSE, closeBody(1000));
  await closedOnce(seen, socket);
});

Deno.test("noDelayWebSocket completes partial writes, never interleaving frames", async () => {
  using server = new RawServer();
  const { socket, writes } = recordingClient(server.url(), { maxWrite: 7 });
  const seen = watch(socket);
  const peer = await server.accept();
  await peer.handshake();
  await seen.open;
  const sent: string[] = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 4; i++) {
      const m = `round ${round} message ${i} ${"z".repeat(i * 40)}`;
      sent.push(m);
      socket.send(m);
    }
    await sleep(0); // the next round is queued while writes are in flight
  }
  for (const m of sent) assert.equal(text((await expectFrame(peer, OP_TEXT)).payload), m);
  assert.ok(writes.every((n) => n <= 7), "every write was cut short");
  socket.close();
  await peer.writeFrame(OP_CLOSE, closeBody(1000));
  await closedOnce(seen, socket);
});

Deno.test("noDelayWebSocket refuses bad options and URLs", () => {
  assert.throws(() => noDelayWebSocket({ maxMessageBytes: 0 }), RangeError);
  assert.throws(() => noDelayWebSocket({ closeTimeoutMs: -1 }), RangeError);
  assert.throws(() => noDelayWebSocket({ caCerts: "pem" as unknown as string[] }), TypeError);
  assert.throws(() => open("http://127.0.0.1:1/"), SyntaxError);
  assert.throws(() => open("ws://127.0.0.1:1/#frag"), SyntaxError);
  assert.throws(() => open("not a url"), SyntaxError);
});
