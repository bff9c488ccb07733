import assert from "node:assert/strict";
import { serveCoordinator } from "../../src/deno/mod.ts";
import { loadConfiguration } from "../../src/config/load.ts";
import { MAX_FRAME_LENGTH } from "../../src/protocol/wire.ts";
import { sleep, waitFor } from "../_helpers/real_time.ts";

const TOKEN = "a-long-enough-secret";

function config(shares: number) {
  return loadConfiguration({
    manifests: [{
      name: "c.yaml",
      text: `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: small }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: ${shares}
    limitResponse: { type: Queue, queuing: { queues: 1, handSize: 1, queueLengthLimit: 5 } }
`,
    }],
  });
}

/** A raw protocol client: collects parsed messages. */
async function connect(url: string) {
  const socket = new WebSocket(url);
  const messages: Record<string, unknown>[] = [];
  let notify = () => {};
  socket.onmessage = (e) => {
    messages.push(JSON.parse(e.data));
    notify();
  };
  const closed = new Promise<CloseEvent>((resolve) => socket.onclose = resolve);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const next = async (n: number) => {
    while (messages.length < n) await new Promise<void>((resolve) => notify = resolve);
    return messages[n - 1]!;
  };
  return { socket, messages, next, closed };
}

Deno.test("the coordinator server speaks the protocol over WebSocket and refuses bad tokens", async () => {
  await using server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    token: TOKEN,
    configuration: config(10),
    mandatoryOnly: true,
    serverConcurrencyLimit: 3,
  });
  const url = `ws://127.0.0.1:${server.addr.port}/`;
  const plain = await fetch(`http://127.0.0.1:${server.addr.port}/`);
  assert.equal(plain.status, 426);
  await plain.body?.cancel();

  const bad = await connect(url);
  bad.socket.send(JSON.stringify({ t: "hello", v: [1], token: "nope", client: "x", resume: null }));
  assert.equal((await bad.next(1)).code, "unauthenticated");
  assert.equal((await bad.closed).code, 4401);
  assert.equal(server.sessions.sessions, 0);

  const c = await connect(url);
  c.socket.send(JSON.stringify({ t: "hello", v: [1], token: TOKEN, client: "t", resume: null }));
  const welcome = await c.next(1);
  assert.equal(welcome.t, "welcome");
  assert.equal((welcome.config as { serverConcurrencyLimit: number }).serverConcurrencyLimit, 3);
  const req = { priorityLevel: "small", flowSchema: "x" };
  c.socket.send(
    JSON.stringify({
      t: "ops",
      ops: [["acquire", 1, req], ["acquire", 2, req], ["acquire", 3, req]],
    }),
  );
  const decisions = await c.next(2);
  assert.equal(decisions.t, "decisions");
  const d = decisions.d as unknown[][];
  assert.ok(d.length >= 1 && d.every((x) => x[1] === "admitted"));

  await server.reload(config(20));
  const pushed = await c.next(3);
  assert.equal(pushed.t, "config");

  const metrics = server.metrics.expose();
  assert.match(metrics, /^apf_coordinator_refused_frames_total\{code="unauthenticated"\} 1$/m);
  assert.match(metrics, /^apf_coordinator_sessions 1$/m);

  c.socket.close();
  await c.closed;
});

Deno.test("the admin routes ask for the token; without one they listen on loopback only", async () => {
  await using server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    adminListen: { hostname: "127.0.0.1", port: 0 },
    token: TOKEN,
    configuration: config(10),
  });
  const base = `http://127.0.0.1:${server.adminAddr!.port}`;
  const denied = await fetch(`${base}/metrics`);
  assert.equal(denied.status, 403);
  await denied.body?.cancel();
  const reload = await fetch(`${base}/reload`, { method: "POST" });
  assert.equal(reload.status, 403);
  await reload.body?.cancel();
  const ok = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.match(await ok.text(), /apf_coordinator_sessions 0/);
  const deniedDump = await fetch(`${base}/debug/api_priority_and_fairness/dump_sessions`);
  assert.equal(deniedDump.status, 403);
  await deniedDump.body?.cancel();
  const c = await connect(`ws://127.0.0.1:${server.addr.port}/`);
  c.socket.send(JSON.stringify({ t: "hello", v: [1], token: TOKEN, client: "gw-1", resume: null }));
  await c.next(1);
  c.socket.send(JSON.stringify({
    t: "ops",
    ops: [["acquire", 1, { priorityLevel: "small", flowSchema: "x" }]],
  }));
  await c.next(2);
  const auth = { headers: { Authorization: `Bearer ${TOKEN}` } };
  const dump = await fetch(
    `${base}/debug/api_priority_and_fairness/dump_sessions?format=json`,
    auth,
  );
  const json = await dump.json();
  assert.equal(json.leaseMs, 30_000);
  assert.deepEqual(
    json.sessions.map((r: Record<string, unknown>) => [r.client, r.state, r.heldSeats]),
    [["gw-1", "connected", 1]],
  );
  const text = await fetch(`${base}/debug/api_priority_and_fairness/dump_sessions`, auth);
  assert.match(await text.text(), /^s-\S+,\s+gw-1,\s+connected,\s+1,/m);
  c.socket.close();
  await c.closed;
  const reloaded = await fetch(`${base}/reload`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(await reloaded.text(), "reloaded: no change\n");
  assert.throws(
    () =>
      serveCoordinator({
        listen: { hostname: "127.0.0.1", port: 0 },
        adminListen: { hostname: "0.0.0.0", port: 0 },
      }),
    /admin routes on 0.0.0.0: without a token they listen on loopback only/,
  );
});

Deno.test("without a token the coordinator listens on loopback only", () => {
  assert.throws(
    () => serveCoordinator({ listen: { hostname: "0.0.0.0", port: 0 } }),
    /without a token it listens on loopback only/,
  );
  assert.throws(
    () => serveCoordinator({ listen: { hostname: "127.0.0.1", port: 0 }, token: "short" }),
    /16 characters or more/,
  );
});

Deno.test("shutdown answers waiting requests unavailable before closing connections", async () => {
  const server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    configuration: config(10),
    mandatoryOnly: true,
    serverConcurrencyLimit: 2,
  });
  const c = await connect(`ws://127.0.0.1:${server.addr.port}/`);
  c.socket.send(JSON.stringify({ t: "hello", v: [1], token: null, client: "t", resume: null }));
  await c.next(1);
  const limit = server.coordinator.snapshot().levels.find((l) => l.name === "small")!.currentLimit;
  const ops = Array.from(
    { length: limit + 1 },
    (_, i) => ["acquire", i, { priorityLevel: "small", flowSchema: "x" }],
  );
  c.socket.send(JSON.stringify({ t: "ops", ops }));
  await c.next(2);
  await server.shutdown();
  await c.closed;
  const all = c.messages.filter((m) => m.t === "decisions").flatMap((m) => m.d as unknown[][]);
  assert.deepEqual(all.find((x) => x[0] === limit), [limit, "rejected", "unavailable", 1]);
});

/** A WebSocket client over a raw TCP connection that sends frames but never reads after the handshake. */
async function deafClient(port: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const encoder = new TextEncoder();
  await conn.write(encoder.encode(
    `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  ));
  const head = new Uint8Array(1024);
  await conn.read(head); // the 101 response, then never again
  const send = async (text: string) => {
    const payload = encoder.encode(text);
    const n = payload.length;
    const size = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const frame = new Uint8Array(size + 4 + n); // masked with a zero key
    frame[0] = 0x81;
    if (n < 126) frame[1] = 0x80 | n;
    else if (n < 65536) {
      frame[1] = 0x80 | 126;
      frame[2] = n >>> 8;
      frame[3] = n & 255;
    } else {
      frame[1] = 0x80 | 127;
      new DataView(frame.buffer).setBigUint64(2, BigInt(n));
    }
    frame.set(payload, size + 4);
    for (let off = 0; off < frame.length;) off += await conn.write(frame.subarray(off));
  };
  return { send, close: () => conn.close() };
}

Deno.test("a client that stops reading is cut off; its seats follow the grace period", async () => {
  await using server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    maxBufferedBytes: 64 * 1024,
    graceMs: 50,
  });
  const client = await deafClient(server.addr.port);
  await client.send(
    JSON.stringify({ t: "hello", v: [1], token: null, client: "deaf", resume: null }),
  );
  const exempt = { priorityLevel: "exempt", flowSchema: "exempt" };
  try {
    await waitFor(() => server.sessions.sessions !== 0, "the session");
    // Each round makes 4,000 decisions (about 90 KB) the client never reads; the kernel's socket
    // buffers fill first, then what waits in the server passes the limit.
    const cutOff = () => /^apf_coordinator_slow_clients_total 1$/m.test(server.metrics.expose());
    for (let round = 0; round < 300 && !cutOff(); round++) {
      const ops = [];
      for (let i = 0; i < 4000; i++) ops.push(["acquire", round * 4000 + i, exempt]);
      if (round > 0) {
        for (let i = 0; i < 4000; i++) ops.push(["release", (round - 1) * 4000 + i, null]);
      }
      await client.send(JSON.stringify({ t: "ops", ops }));
      await sleep(10);
    }
    await waitFor(
      () => server.sessions.sessions === 0,
      "the session ended after the grace period",
    );
    assert.match(server.metrics.expose(), /^apf_coordinator_slow_clients_total 1$/m);
    const exemptLevel = server.coordinator.snapshot().levels.find((l) => l.name === "exempt")!;
    assert.equal(exemptLevel.queueSet.seatsInUse, 0, "its seats went back");
    assert.ok(server.sessions.lost > 0);
  } finally {
    client.close();
  }
});

Deno.test("oversized and binary frames over a real socket get error replies; the session carries on", async () => {
  await using server = serveCoordinator({ listen: { hostname: "127.0.0.1", port: 0 } });
  const c = await connect(`ws://127.0.0.1:${server.addr.port}/`);
  c.socket.send(JSON.stringify({ t: "hello", v: [1], token: null, client: "big", resume: null }));
  assert.equal((await c.next(1)).t, "welcome");
  c.socket.send("x".repeat(MAX_FRAME_LENGTH + 1));
  const tooLarge = await c.next(2);
  assert.equal(tooLarge.t, "error");
  assert.equal(tooLarge.code, "too-large");
  c.socket.send(new Uint8Array([1, 2, 3]));
  const binary = await c.next(3);
  assert.equal(binary.code, "malformed");
  const exempt = { priorityLevel: "exempt", flowSchema: "exempt" };
  c.socket.send(JSON.stringify({ t: "ops", ops: [["acquire", 1, exempt]] }));
  const decisions = await c.next(4);
  assert.deepEqual(decisions.d, [[1, "admitted", 0]]);
  const metrics = server.metrics.expose();
  assert.match(metrics, /^apf_coordinator_refused_frames_total\{code="too-large"\} 1$/m);
  assert.match(metrics, /^apf_coordinator_refused_frames_total\{code="malformed"\} 1$/m);
  c.socket.close();
  await c.closed;
});
