import assert from "node:assert/strict";
import { serveGuarded } from "../../src/deno/mod.ts";
import { captureConsole } from "../_helpers/console.ts";
import { sleep } from "../_helpers/real_time.ts";
import { connect, readUntilClosed, roundTrip, send } from "./_raw_http.ts";

const hostname = "127.0.0.1";
const hello = (_req: Request, info: { remoteAddr: Deno.NetAddr }) =>
  new Response(`hello ${info.remoteAddr.hostname}`);

Deno.test("serveGuarded closes a connection that does not complete its request head in time", async () => {
  await using server = serveGuarded(hello, { hostname, port: 0, headerTimeoutMs: 200 });
  const [silent, partial] = await Promise.all([
    connect(server.addr.port),
    connect(server.addr.port),
  ]);
  // Slowloris: a head that never ends.
  await send(partial, "GET / HTTP/1.1\r\nHost: test\r\nX-Slow: 1\r\n");
  const closed = await Promise.all([
    readUntilClosed(silent, 3_000),
    readUntilClosed(partial, 3_000),
  ]);
  for (const { text, afterMs } of closed) {
    assert.equal(text, "");
    assert.ok(afterMs >= 150, `closed after ${afterMs} ms, before the header timeout`);
  }
  assert.equal(server.stats.headerTimeouts, 2);
  assert.equal(server.stats.open, 0);
  assert.equal(server.guarded, true);
});

Deno.test("serveGuarded closes a keep-alive connection idle for the idle timeout, not one in use", async () => {
  await using server = serveGuarded(hello, {
    hostname,
    port: 0,
    headerTimeoutMs: 2_000,
    idleTimeoutMs: 300,
  });
  const idle = await connect(server.addr.port);
  const busy = await connect(server.addr.port);
  assert.match(await roundTrip(idle), /^HTTP\/1\.1 200 OK\r\n[^]*hello 127\.0\.0\.1$/);
  // Requests every 100 ms keep a connection open well past the idle timeout.
  for (let i = 0; i < 6; i++) {
    assert.match(await roundTrip(busy), /^HTTP\/1\.1 200 OK/);
    await sleep(100);
  }
  const closed = await readUntilClosed(idle, 3_000);
  assert.equal(closed.text, "");
  assert.match(await roundTrip(busy), /^HTTP\/1\.1 200 OK/);
  busy.close();
  assert.equal(server.stats.idleTimeouts, 1);
  assert.equal(server.stats.headerTimeouts, 0);
});

Deno.test("serveGuarded answers 503 past maxConnections and keeps serving the open ones", async () => {
  await using server = serveGuarded(hello, { hostname, port: 0, maxConnections: 2 });
  const first = await connect(server.addr.port);
  const second = await connect(server.addr.port);
  assert.match(await roundTrip(first), /^HTTP\/1\.1 200 OK/);
  assert.match(await roundTrip(second), /^HTTP\/1\.1 200 OK/);

  const third = await connect(server.addr.port);
  await send(third, "GET / HTTP/1.1\r\nHost: test\r\n\r\n");
  const refused = await readUntilClosed(third, 3_000);
  assert.match(refused.text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
  assert.match(refused.text, /\r\nConnection: close\r\n/);
  assert.match(refused.text, /\r\n\r\nToo many connections: try again later\.\n$/);
  assert.equal(server.stats.refused, 1);

  assert.match(await roundTrip(first), /^HTTP\/1\.1 200 OK/);
  assert.match(await roundTrip(second), /^HTTP\/1\.1 200 OK/);
  first.close();
  second.close();
  // A closed connection frees its place.
  for (let i = 0; server.stats.open > 0 && i < 100; i++) await sleep(10);
  const fourth = await connect(server.addr.port);
  assert.match(await roundTrip(fourth), /^HTTP\/1\.1 200 OK/);
  fourth.close();
  assert.equal(server.stats.accepted, 3);
});

Deno.test("serveGuarded shutdown closes idle connections at once and lets in-flight requests finish", async () => {
  let release = () => {};
  const slow = new Promise<void>((resolve) => release = resolve);
  const server = serveGuarded(async (req) => {
    if (new URL(req.url).pathname === "/slow") await slow;
    return new Response("done");
  }, { hostname, port: 0 });
  const idle = await connect(server.addr.port);
  const busy = await connect(server.addr.port);
  assert.match(await roundTrip(idle), /^HTTP\/1\.1 200 OK/);
  await send(busy, "GET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
  for (let i = 0; server.stats.open < 2 && i < 100; i++) await sleep(10);
  await sleep(50); // the slow request reaches its handler
  let stopped = false;
  const stopping = server.shutdown().then(() => stopped = true);
  assert.equal((await readUntilClosed(idle, 3_000)).text, "");
  assert.equal(stopped, false);
  release();
  const answer = await readUntilClosed(busy, 3_000);
  assert.match(answer.text, /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\ndone$/);
  await stopping;
  await server.finished;
  await assert.rejects(connect(server.addr.port), Deno.errors.ConnectionRefused);
});

Deno.test("serveGuarded with webSocket: upgrades stay open past the idle timeout, and heads still time out", async () => {
  await using server = serveGuarded((req) => {
    if (req.headers.get("upgrade") !== "websocket") return new Response("plain");
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => socket.send(`echo ${e.data}`);
    return response;
  }, { hostname, port: 0, headerTimeoutMs: 300, idleTimeoutMs: 150, webSocket: true });
  const socket = new WebSocket(`ws://127.0.0.1:${server.addr.port}/`);
  const messages: string[] = [];
  let received = () => {};
  socket.onmessage = (e) => {
    messages.push(e.data);
    received();
  };
  const closed = new Promise((resolve) => socket.onclose = resolve);
  await new Promise((resolve) => socket.onopen = resolve);
  const echoed = (n: number) =>
    new Promise<void>((resolve) => {
      received = () => messages.length >= n && resolve();
      received();
    });
  socket.send("a");
  await echoed(1);
  await sleep(500); // past both timeouts
  socket.send("b");
  await echoed(2);
  assert.deepEqual(messages, ["echo a", "echo b"]);
  socket.close();
  await closed;

  const partial = await connect(server.addr.port);
  await send(partial, "GET / HTTP/1.1\r\n");
  assert.equal((await readUntilClosed(partial, 3_000)).text, "");
  assert.equal(server.stats.headerTimeouts, 1);
});

Deno.test("serveGuarded refuses bad limits", () => {
  for (const bad of [{ headerTimeoutMs: 0 }, { idleTimeoutMs: -1 }, { idleTimeoutMs: NaN }]) {
    assert.throws(
      () => serveGuarded(hello, { hostname, port: 0, ...bad }),
      (e: Error) => e instanceof RangeError && /must be a number > 0/.test(e.message),
    );
  }
  for (const maxConnections of [0, 1.5, Infinity]) {
    assert.throws(
      () => serveGuarded(hello, { hostname, port: 0, maxConnections }),
      /Cannot serve: maxConnections must be an integer >= 1, got/,
    );
  }
});

Deno.test("serveGuarded falls back to plain Deno.serve on a Deno without its per-connection server", async () => {
  const deno = Deno as unknown as Record<PropertyKey, Record<string, unknown>>;
  const internals = deno[(Deno as unknown as { internal: symbol }).internal]!;
  const original = internals.serveHttpOnConnection;
  internals.serveHttpOnConnection = undefined;
  using warnings = captureConsole("warn");
  try {
    await using server = serveGuarded(hello, { hostname, port: 0 });
    assert.equal(server.guarded, false);
    assert.equal(warnings.calls.length <= 1, true, "warned once at most (once per process)");
    for (const line of warnings.lines()) {
      assert.match(line, /^serveGuarded: this Deno has no per-connection HTTP server/);
    }
    const conn = await connect(server.addr.port);
    assert.match(await roundTrip(conn), /^HTTP\/1\.1 200 OK\r\n[^]*hello 127\.0\.0\.1$/);
    conn.close();
  } finally {
    internals.serveHttpOnConnection = original;
  }
});
