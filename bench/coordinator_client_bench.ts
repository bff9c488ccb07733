/**
 * One client of the remote coordinator benchmark: a raw
 * WebSocket speaking protocol v1 (`src/coordinator/PROTOCOL.md`) in a
 * closed loop. It keeps `inflight` acquires outstanding; each `admitted`
 * decision is answered with a `release` for it and a new `acquire`.
 *
 * - `batched`: the releases and acquires a received `decisions` frame
 *   triggers leave as one `ops` message (as a real client coalesces a tick).
 * - `unbatched`: one operation per `ops` message.
 *
 * Counts admitted decisions received during `durationMs` after `warmupMs`
 * (or from `APF_BENCH_START_AT`: `_bench_window.ts`),
 * and the time from sending each acquire to receiving its decision; prints
 * one JSON line and exits.
 *
 * Run: `deno run --allow-net=127.0.0.1 --allow-env bench/coordinator_client_bench.ts
 * <port> <batched|unbatched> <inflight> <warmupMs> <durationMs> [name]`;
 * driven by `bench/coordinator_remote_bench.ts`.
 *
 * @module
 */

import { BENCH_REQUESTS } from "./_bench_requests.ts";
import { selfCpuSeconds, windowOpens } from "./_bench_window.ts";

const [portArg, modeArg, inflightArg, warmupArg, durationArg, name = "bench-client"] = Deno.args;
const mode = modeArg === "unbatched" ? "unbatched" : "batched";
if (modeArg !== mode) throw new TypeError(`Cannot bench: mode must be batched or unbatched`);
const inflight = Number(inflightArg ?? 64);
const warmupMs = Number(warmupArg ?? 2000);
const durationMs = Number(durationArg ?? 10_000);
/** `raw` (default): a minimal client on `Deno.connect` with TCP_NODELAY; `deno`: Deno's `WebSocket`. */
const transport = Deno.env.get("APF_BENCH_WS") === "deno" ? "deno" : "raw";

const requests = BENCH_REQUESTS;

/** The part of a WebSocket this bench uses. */
interface Socket {
  send(text: string): void;
  onmessage: (e: { data: string }) => void;
  close(): void;
}

const socket: Socket = transport === "deno"
  ? await denoSocket(Number(portArg))
  : await rawSocket(Number(portArg));
const welcome = new Promise<void>((resolve, reject) => {
  socket.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.t === "welcome") resolve();
    else reject(new Error(`Cannot bench: expected welcome, got ${e.data}`));
  };
});
socket.send(JSON.stringify({ t: "hello", v: [1], token: null, client: name, resume: null }));
await welcome;

let nextId = 0;
/** Send time of each outstanding acquire, by id (ids are never reused). */
const sentAt = new Map<number, number>();
let measuring = false, stopped = false;
let admitted = 0, rejected = 0, framesSent = 0, opsSent = 0, framesReceived = 0;
const latencies: number[] = [];

function acquireOp(): unknown[] {
  const id = nextId++;
  sentAt.set(id, performance.now());
  return ["acquire", id, requests[id & 1023]];
}
function send(ops: unknown[][]): void {
  socket.send(JSON.stringify({ t: "ops", ops }));
  framesSent++;
  opsSent += ops.length;
}

socket.onmessage = (e) => {
  const now = performance.now();
  const m = JSON.parse(e.data);
  if (m.t !== "decisions") throw new Error(`Cannot bench: unexpected ${e.data}`);
  framesReceived++;
  const ops: unknown[][] = [];
  for (const d of m.d as [number, string, unknown][]) {
    const t0 = sentAt.get(d[0]);
    sentAt.delete(d[0]);
    if (d[1] === "admitted") {
      if (measuring) {
        admitted++;
        if (t0 !== undefined) latencies.push(now - t0);
      }
      if (stopped) continue;
      ops.push(["release", d[0], null]);
      ops.push(acquireOp());
    } else {
      rejected++;
      if (!stopped) ops.push(acquireOp());
    }
  }
  if (ops.length === 0) return;
  if (mode === "batched") send(ops);
  else for (const op of ops) send([op]);
};

// Start the loop: `inflight` acquires.
const first = Array.from({ length: inflight }, acquireOp);
if (mode === "batched") send(first);
else for (const op of first) send([op]);

await windowOpens(warmupMs);
measuring = true;
const start = performance.now();
const cpu0 = selfCpuSeconds();
const counted0 = { framesSent, opsSent, framesReceived };
await new Promise((r) => setTimeout(r, durationMs));
measuring = false;
const cpuSeconds = selfCpuSeconds() - cpu0;
stopped = true;
const seconds = (performance.now() - start) / 1000;

latencies.sort((a, b) => a - b);
const q = (p: number) =>
  latencies.length === 0 ? null : latencies[Math.floor(p * (latencies.length - 1))]!;
console.log(JSON.stringify({
  name,
  mode,
  inflight,
  seconds,
  admitted,
  rejected,
  perSecond: admitted / seconds,
  // The process's CPU over the window, in cores.
  cpu: cpuSeconds / seconds,
  framesSentPerSecond: (framesSent - counted0.framesSent) / seconds,
  opsPerFrameSent: (opsSent - counted0.opsSent) / Math.max(1, framesSent - counted0.framesSent),
  framesReceivedPerSecond: (framesReceived - counted0.framesReceived) / seconds,
  p50Ms: q(0.5),
  p99Ms: q(0.99),
}));
socket.close();
await new Promise((r) => setTimeout(r, 50));
Deno.exit(0);

/** Deno's own `WebSocket` client. */
async function denoSocket(port: number): Promise<Socket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  const s: Socket = {
    send: (text) => ws.send(text),
    onmessage: () => {},
    close: () => ws.close(),
  };
  ws.onmessage = (e) => s.onmessage(e);
  return s;
}

/**
 * A minimal RFC 6455 client over `Deno.connect` with TCP_NODELAY: text
 * frames only, unfragmented; masked with a zero key (legal, and it spares
 * the client the XOR so that more of the two cores go to the server).
 */
async function rawSocket(port: number): Promise<Socket> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  conn.setNoDelay(true);
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const encoder = new TextEncoder(), decoder = new TextDecoder();
  await conn.write(encoder.encode(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  ));
  let buf = new Uint8Array(0);
  const chunk = new Uint8Array(1 << 20);
  const more = async (): Promise<boolean> => {
    const n = await conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(buf.length + n);
    next.set(buf);
    next.set(chunk.subarray(0, n), buf.length);
    buf = next;
    return true;
  };
  for (;;) {
    const end = decoder.decode(buf).indexOf("\r\n\r\n");
    if (end >= 0) {
      const head = decoder.decode(buf.subarray(0, end));
      if (!head.startsWith("HTTP/1.1 101")) throw new Error(`Cannot bench: ${head}`);
      buf = buf.slice(end + 4);
      break;
    }
    if (!(await more())) throw new Error("Cannot bench: closed during the handshake");
  }
  let writing = Promise.resolve();
  const write = (bytes: Uint8Array) => {
    writing = writing.then(async () => {
      for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
    });
  };
  const frame = (opcode: number, payload: Uint8Array): Uint8Array => {
    const n = payload.length;
    const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const out = new Uint8Array(head + 4 + n); // + the (zero) mask key
    out[0] = 0x80 | opcode;
    if (n < 126) out[1] = 0x80 | n;
    else if (n < 65536) {
      out[1] = 0x80 | 126;
      out[2] = n >>> 8;
      out[3] = n & 255;
    } else {
      out[1] = 0x80 | 127;
      new DataView(out.buffer).setBigUint64(2, BigInt(n));
    }
    out.set(payload, head + 4);
    return out;
  };
  let closed = false;
  const s: Socket = {
    send: (text) => write(frame(1, encoder.encode(text))),
    onmessage: () => {},
    close: () => {
      if (closed) return;
      closed = true;
      write(frame(8, new Uint8Array([0x03, 0xe8])));
      writing.finally(() => conn.close()).catch(() => {});
    },
  };
  (async () => {
    for (;;) {
      // Parse every complete frame in buf.
      let off = 0;
      for (;;) {
        if (buf.length - off < 2) break;
        const b0 = buf[off]!, b1 = buf[off + 1]!;
        let len = b1 & 127, p = off + 2;
        if (len === 126) {
          if (buf.length - off < 4) break;
          len = (buf[off + 2]! << 8) | buf[off + 3]!;
          p = off + 4;
        } else if (len === 127) {
          if (buf.length - off < 10) break;
          len = Number(new DataView(buf.buffer, buf.byteOffset + off + 2, 8).getBigUint64(0));
          p = off + 10;
        }
        if (buf.length < p + len) break;
        const payload = buf.subarray(p, p + len);
        off = p + len;
        const opcode = b0 & 15;
        if (opcode === 1) s.onmessage({ data: decoder.decode(payload) });
        else if (opcode === 9) write(frame(10, payload.slice()));
        else if (opcode === 8) return;
        else throw new Error(`Cannot bench: unexpected opcode ${opcode}`);
      }
      buf = buf.slice(off);
      if (closed || !(await more())) return;
    }
  })().catch(() => {});
  return s;
}
