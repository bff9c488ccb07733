import assert from "node:assert/strict";
import { serveCoordinator } from "../../src/deno/mod.ts";
import { sleep, within } from "../_helpers/real_time.ts";
import { connect, readUntilClosed, send } from "./_raw_http.ts";

const hostname = "127.0.0.1";

/** Opens a WebSocket; resolves once it opened, with its messages and its close event. */
async function open(url: string) {
  const socket = new WebSocket(url);
  const messages: Record<string, unknown>[] = [];
  socket.onmessage = (e) => messages.push(JSON.parse(e.data));
  const closed = new Promise<CloseEvent>((resolve) => socket.onclose = resolve);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  return { socket, messages, closed };
}

Deno.test("the coordinator closes a WebSocket that sends no hello within helloTimeoutMs", async () => {
  await using server = serveCoordinator({ listen: { hostname, port: 0 }, helloTimeoutMs: 300 });
  const url = `ws://${hostname}:${server.addr.port}/`;
  const silent = await open(url);
  const started = performance.now();
  const event = await within(silent.closed, 3_000, "the silent client closed");
  assert.ok(performance.now() - started >= 250, "closed before the hello timeout");
  assert.equal(event.code, 1002);
  assert.deepEqual(silent.messages, [{
    t: "error",
    code: "hello-expected",
    message: "no hello within 300 ms",
    id: null,
  }]);

  // A client that says hello in time stays.
  const polite = await open(url);
  polite.socket.send(
    JSON.stringify({ t: "hello", v: [1], token: null, client: "t", resume: null }),
  );
  await sleep(500);
  assert.equal(polite.socket.readyState, WebSocket.OPEN);
  assert.equal(polite.messages[0]?.t, "welcome");
  polite.socket.close();
  await polite.closed;
});

Deno.test("the coordinator's listeners close half-sent request heads after headerTimeoutMs", async () => {
  await using server = serveCoordinator({
    listen: { hostname, port: 0 },
    adminListen: { hostname, port: 0 },
    headerTimeoutMs: 200,
  });
  for (const addr of [server.addr, server.adminAddr!]) {
    const conn = await connect(addr.port);
    await send(conn, "GET / HTTP/1.1\r\nUpgrade: websocket\r\n");
    const closed = await readUntilClosed(conn, 3_000);
    assert.equal(closed.text, "");
    assert.ok(closed.afterMs >= 150, `closed after ${closed.afterMs} ms`);
  }
});

Deno.test("the coordinator answers 503 to a WebSocket past maxConnections", async () => {
  await using server = serveCoordinator({ listen: { hostname, port: 0 }, maxConnections: 1 });
  const url = `ws://${hostname}:${server.addr.port}/`;
  const first = await open(url);
  const conn = await connect(server.addr.port);
  await send(
    conn,
    "GET / HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
  );
  const refused = await readUntilClosed(conn, 3_000);
  assert.match(refused.text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
  first.socket.send(JSON.stringify({ t: "hello", v: [1], token: null, client: "t", resume: null }));
  for (let i = 0; first.messages.length === 0 && i < 100; i++) await sleep(10);
  assert.equal(first.messages[0]?.t, "welcome");
  first.socket.close();
  await first.closed;
});
