/**
 * The buffers of the gateway's own server (`src/deno/_gateway_server.ts`):
 * responses are written from buffers lent per write by a pool
 * (`src/deno/_buffer_pool.ts`), and a connection reads into a small buffer
 * until a read fills it. A lent buffer must never be written again while
 * the write that reads it is in flight, whatever the other connections do;
 * a request larger than the small buffer must arrive whole.
 */

import assert from "node:assert/strict";
import { BufferPool } from "../../src/deno/_buffer_pool.ts";
import { gatewayDriver, type GatewayReply } from "../../src/deno/_gateway_server.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

Deno.test("buffer pool: lends buffers of its size, takes them back, keeps at most its bound free", () => {
  const pool = new BufferPool(64, 2);
  const [a, b, c] = [pool.take(), pool.take(), pool.take()];
  assert.equal(a.length, 64);
  assert.notEqual(a, b);
  assert.notEqual(b, c);
  pool.give(a);
  pool.give(b);
  pool.give(c); // beyond the bound: left to the collector
  assert.equal(pool.free, 2);
  const again = [pool.take(), pool.take()];
  assert.deepEqual(new Set(again), new Set([a, b]));
  assert.equal(pool.free, 0);
  assert.notEqual(pool.take(), c);
});

/**
 * A client connection as the driver reads it: `requests` come in order, one
 * per read, then the read waits until `close()`. A write takes its bytes at
 * once; with `hold`, it stays in flight until `release()`, reading the bytes
 * where they are (as Deno's write does) until then.
 */
class FakeConn {
  readonly remoteAddr = { transport: "tcp" as const, hostname: "127.0.0.1", port: 40000 };
  readonly localAddr = { transport: "tcp" as const, hostname: "127.0.0.1", port: 8080 };
  readonly written: Uint8Array[] = [];
  hold = false;
  #requests: Uint8Array[];
  #held: (() => void)[] = [];
  #waiting: ((n: number | null) => void) | null = null;

  constructor(...requests: string[]) {
    this.#requests = requests.map((r) => encoder.encode(r));
  }

  read(buffer: Uint8Array): Promise<number | null> {
    const next = this.#requests.shift();
    if (next === undefined) return new Promise((resolve) => this.#waiting = resolve);
    // A request longer than the buffer comes in parts, as a socket gives it.
    const part = next.subarray(0, buffer.length);
    if (part.length < next.length) this.#requests.unshift(next.subarray(part.length));
    buffer.set(part);
    return Promise.resolve(part.length);
  }

  write(bytes: Uint8Array): Promise<number> {
    // Sent at once: copied now, as the socket takes them. Held: read where they are until sent.
    if (!this.hold) {
      this.written.push(bytes.slice());
      return Promise.resolve(bytes.length);
    }
    const at = this.written.push(bytes) - 1;
    return new Promise((resolve) =>
      this.#held.push(() => {
        this.written[at] = bytes.slice();
        resolve(bytes.length);
      })
    );
  }

  release(): void {
    for (const release of this.#held.splice(0)) release();
  }

  close(): void {
    this.#waiting?.(null);
    this.#waiting = null;
  }

  /** What was written, as text (what the bytes hold now). */
  text(): string {
    return this.written.map((b) => decoder.decode(b)).join("");
  }
}

const hooks = { requestStarted() {}, requestEnded() {}, upgraded() {} };

/** A driver whose handler answers each request with its target, received whole. */
function echoDriver(seen: string[]) {
  return gatewayDriver((req): Promise<GatewayReply> => {
    seen.push(req.target);
    return Promise.resolve({
      status: 200,
      statusText: "",
      fields: ["content-type", "text/plain", "x-fields", String(req.fields.length / 2)],
      body: encoder.encode(`answer to ${req.target}`),
      lengthInFields: false,
    });
  });
}

/** Lets the connections' promise chains run. */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("gateway buffers: a response whose write is in flight keeps its bytes while other connections answer", async () => {
  const seen: string[] = [];
  const drive = echoDriver(seen);
  const slow = new FakeConn("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
  slow.hold = true;
  const servers = [drive(slow as unknown as Deno.TcpConn, null!, null!, hooks)];
  await settle();
  assert.equal(slow.written.length, 1, "the slow connection's response is in flight");
  // Many more connections answered while it is: each response is written (and its buffer
  // given back) before the next.
  const fast = Array.from(
    { length: 80 },
    (_, i) => new FakeConn(`GET /fast-${i} HTTP/1.1\r\nHost: a\r\n\r\n`),
  );
  for (const conn of fast) {
    servers.push(drive(conn as unknown as Deno.TcpConn, null!, null!, hooks));
  }
  await settle();
  fast.forEach((conn, i) => assert.match(conn.text(), new RegExp(`\r\n\r\nanswer to /fast-${i}$`)));
  // The bytes the slow write still reads are its own response's.
  assert.match(slow.text(), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nanswer to \/slow$/);
  slow.release();
  for (const conn of [slow, ...fast]) conn.close();
  await Promise.all(servers.map((s) => s.finished));
  assert.equal(seen.length, 81);
});

Deno.test("gateway buffers: a request head larger than the first read's buffer arrives whole, and the next small one after it", async () => {
  const seen: string[] = [];
  const drive = echoDriver(seen);
  // About 10 KB of fields: more than the 4 KiB the first read of a request gets.
  const fields = Array.from({ length: 100 }, (_, i) => `X-Field-${i}: ${"v".repeat(90)}\r\n`)
    .join("");
  const conn = new FakeConn(
    `GET /large HTTP/1.1\r\nHost: a\r\n${fields}\r\n`,
    "GET /small HTTP/1.1\r\nHost: a\r\n\r\n",
  );
  const server = drive(conn as unknown as Deno.TcpConn, null!, null!, hooks);
  await settle();
  conn.close();
  await server.finished;
  assert.deepEqual(seen, ["/large", "/small"]);
  const text = conn.text();
  assert.match(text, /x-fields: 101\r\n[^]*answer to \/large/);
  assert.match(text, /x-fields: 1\r\n[^]*answer to \/small$/);
});
