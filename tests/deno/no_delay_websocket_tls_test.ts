/**
 * `noDelayWebSocket()` over `wss:`: TCP with no delay, then TLS over it,
 * against `Deno.serve` with the committed TEST-ONLY certificate for
 * 127.0.0.1 (`tests/fixtures/tls/`). The certificate must be verified:
 * without the test CA in `caCerts` the connection fails.
 */

import assert from "node:assert/strict";
import { noDelayWebSocket } from "../../src/deno/no_delay_websocket.ts";

const fixture = (name: string) =>
  Deno.readTextFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

/** An echo WebSocket server over TLS on 127.0.0.1. */
function tlsEchoServer() {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: fixture("test_only_127.0.0.1.pem"),
    key: fixture("test_only_127.0.0.1.key.pem"),
    onListen: () => {},
    // A client that refuses the certificate makes the server's handshake fail: expected here.
    onError: () => new Response(null, { status: 500 }),
  }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => socket.send(`echo: ${e.data}`);
    return response;
  });
  return { url: `wss://127.0.0.1:${server.addr.port}/`, server };
}

Deno.test("noDelayWebSocket speaks wss: with a private CA given in caCerts", async () => {
  const { url, server } = tlsEchoServer();
  try {
    const socket = noDelayWebSocket({ caCerts: [fixture("test_only_ca.pem")] })(url);
    const opened = Promise.withResolvers<void>();
    const message = Promise.withResolvers<unknown>();
    const closed = Promise.withResolvers<CloseEvent>();
    socket.onopen = () => opened.resolve();
    socket.onmessage = (e) => message.resolve(e.data);
    socket.onclose = (e) => closed.resolve(e);
    await opened.promise;
    socket.send("x".repeat(70_000));
    assert.equal(await message.promise, `echo: ${"x".repeat(70_000)}`);
    socket.close(1000, "done");
    const e = await closed.promise;
    assert.deepEqual([e.code, e.wasClean], [1000, true]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("noDelayWebSocket refuses a wss: server whose certificate it cannot verify", async () => {
  const { url, server } = tlsEchoServer();
  try {
    const socket = noDelayWebSocket()(url);
    let opened = false;
    socket.onopen = () => opened = true;
    const closed = Promise.withResolvers<CloseEvent>();
    socket.onclose = (e) => closed.resolve(e);
    const e = await closed.promise;
    assert.equal(opened, false);
    assert.deepEqual([e.code, e.wasClean], [1006, false]);
  } finally {
    await server.shutdown();
  }
});
