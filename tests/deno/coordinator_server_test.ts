import assert from "node:assert/strict";
import { serveCoordinator } from "../../src/deno/mod.ts";
import { loadConfiguration } from "../../src/config/load.ts";

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
  assert.equal(server.host.stats.sessions, 0);

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
  const reloaded = await fetch(`${base}/reload`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(await reloaded.text(), "reloaded\n");
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
