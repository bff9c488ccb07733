import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import {
  FLOW_SCHEMA_UID_HEADER,
  PRIORITY_LEVEL_UID_HEADER,
  TOO_MANY_REQUESTS_BODY,
} from "../../src/hono/_response.ts";
import { smallConfig } from "./_helpers.ts";
import { sleep } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { closedPort, testUpstream } from "../_helpers/upstream.ts";

const LOOPBACK = { hostname: "127.0.0.1", port: 0 };

function base(addr: Deno.NetAddr): string {
  return `http://${addr.hostname}:${addr.port}`;
}

/** Sends a raw HTTP/1.1 request and returns the whole raw response. */
async function rawRequest(addr: Deno.NetAddr, text: string): Promise<string> {
  const conn = await Deno.connect({ hostname: addr.hostname, port: addr.port });
  await conn.write(new TextEncoder().encode(text));
  return await new Response(conn.readable).text();
}

Deno.test("the gateway forwards method, path, query, headers and body, minus hop-by-hop", async () => {
  let seen: { method: string; url: string; headers: Headers; body: string } | undefined;
  const upstream = testUpstream({
    handle: async (req) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body: await req.text() };
      return new Response("created", {
        status: 201,
        headers: { "X-Answer": "42", "Connection": "X-Secret-Hop", "X-Secret-Hop": "1" },
      });
    },
  });
  await using gateway = serveGateway({
    upstream: upstream.url + "/base/",
    listen: LOOPBACK,
  });
  try {
    const body = "hello upstream";
    const raw = await rawRequest(
      gateway.addr,
      "PUT /a/b%20c?x=1&y=%2F HTTP/1.1\r\nHost: gateway.example\r\n" +
        "Connection: close, X-Hop\r\nX-Hop: drop me\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n" +
        "Proxy-Authorization: Basic Zm9vOmJhcg==\r\nX-Forwarded-For: 10.0.0.1\r\n" +
        `X-End-To-End: keep me\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n` +
        body,
    );
    assert.ok(seen !== undefined);
    assert.equal(seen.method, "PUT");
    assert.equal(seen.url, `${upstream.url}/base/a/b%20c?x=1&y=%2F`);
    assert.equal(seen.body, body);
    assert.equal(seen.headers.get("x-end-to-end"), "keep me");
    assert.equal(seen.headers.get("content-type"), "text/plain");
    assert.equal(seen.headers.get("x-forwarded-for"), "10.0.0.1, 127.0.0.1");
    assert.equal(seen.headers.get("host"), new URL(upstream.url).host);
    for (const hop of ["x-hop", "keep-alive", "te", "proxy-authorization"]) {
      assert.equal(seen.headers.get(hop), null, hop);
    }
    const [head, responseBody] = raw.split("\r\n\r\n");
    assert.match(head!, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(head!, /\r\nx-answer: 42\r\n/i);
    assert.doesNotMatch(head!, /x-secret-hop/i);
    assert.match(head!, new RegExp(`\\r\\n${FLOW_SCHEMA_UID_HEADER}: \\S+`, "i"));
    assert.match(head!, new RegExp(`\\r\\n${PRIORITY_LEVEL_UID_HEADER}: \\S+`, "i"));
    assert.match(head!, /\r\nserver-timing: apf;dur=\d/i);
    assert.equal(responseBody, "created");
  } finally {
    await upstream.close();
  }
});

Deno.test("the gateway streams the response body as it comes", async () => {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const upstream = testUpstream({
    handle: () =>
      new Response(
        new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode("first;"));
            await finished;
            controller.enqueue(new TextEncoder().encode("rest"));
            controller.close();
          },
        }),
      ),
  });
  await using gateway = serveGateway({ upstream: upstream.url, listen: LOOPBACK });
  try {
    const res = await fetch(base(gateway.addr) + "/stream");
    const reader = res.body!.getReader();
    // Buffering would wait for the end of the body, which only comes after this first chunk.
    const first = await Promise.race([reader.read(), sleep(5_000).then(() => "timeout" as const)]);
    finish();
    assert.notEqual(first, "timeout", "the first chunk did not arrive before the body ended");
    let text = new TextDecoder().decode((first as ReadableStreamReadResult<Uint8Array>).value);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    assert.equal(text, "first;rest");
  } finally {
    finish();
    await upstream.close();
  }
});

Deno.test("the gateway streams a request body of unknown length upstream", async () => {
  const upstream = testUpstream({
    handle: async (req) => new Response(String((await req.arrayBuffer()).byteLength)),
  });
  await using gateway = serveGateway({ upstream: upstream.url, listen: LOOPBACK });
  try {
    const chunk = new Uint8Array(64 * 1024).fill(97);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 32) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(base(gateway.addr) + "/upload", {
      method: "POST",
      body,
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), String(32 * 64 * 1024));
  } finally {
    await upstream.close();
  }
});

Deno.test("an unreachable upstream gives 502, and the seat goes back", async () => {
  const errors: unknown[] = [];
  // One seat, no queue: a seat kept by a failed request would turn the next request into a 429.
  await using gateway = serveGateway({
    upstream: `http://127.0.0.1:${closedPort()}`,
    listen: LOOPBACK,
    config: smallConfig(tenantsManifest({ shares: 95, reject: true }), 1),
    onUpstreamError: (e) => errors.push(e),
  });
  for (let i = 0; i < 3; i++) {
    const res = await fetch(base(gateway.addr) + "/x");
    assert.equal(res.status, 502);
    assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER), "tenants-uid");
    assert.equal(await res.text(), "Bad Gateway\n");
  }
  assert.equal(errors.length, 3);
  const level = gateway.middleware.snapshot()!.levels.find((l) => l.name === "tenants")!;
  assert.equal(level.currentLimit, 1);
  assert.equal(level.queueSet.seatsInUse, 0);
  assert.equal(level.queueSet.dispatched, 3);
});

Deno.test("an upstream slower than the request timeout gives 504", async () => {
  const upstream = testUpstream({ sleepMs: 400 });
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: LOOPBACK,
    requestTimeoutMs: 100,
  });
  try {
    const res = await fetch(base(gateway.addr) + "/slow");
    assert.equal(res.status, 504);
    assert.equal(await res.text(), "Gateway Timeout\n");
  } finally {
    await upstream.close();
  }
});

Deno.test("a client that disconnects does not abort the upstream call: the upstream finishes", async () => {
  let upstreamAborted = false;
  let finish!: () => void;
  const finishing = new Promise<void>((resolve) => (finish = resolve));
  let arrived!: () => void;
  const arrival = new Promise<void>((resolve) => (arrived = resolve));
  const upstream = testUpstream({
    handle: async (req) => {
      req.signal.addEventListener("abort", () => (upstreamAborted = true));
      arrived();
      await finishing;
      return new Response("done");
    },
  });
  await using gateway = serveGateway({ upstream: upstream.url, listen: LOOPBACK });
  try {
    const client = new AbortController();
    const pending = fetch(base(gateway.addr) + "/work", { signal: client.signal }).catch((e) => e);
    await arrival;
    client.abort();
    assert.ok((await pending) instanceof DOMException);
    await sleep(50);
    assert.equal(upstreamAborted, false);
    finish();
    while (upstream.handled < 1) await sleep(5);
    assert.equal(upstreamAborted, false, "the upstream finished its answer");
  } finally {
    finish();
    await upstream.close();
  }
});

Deno.test("admin routes are served only on the admin listener", async () => {
  const upstream = testUpstream();
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: LOOPBACK,
    adminListen: LOOPBACK,
  });
  try {
    assert.ok(gateway.adminAddr !== null);
    assert.notEqual(gateway.adminAddr.port, gateway.addr.port);
    await (await fetch(base(gateway.addr) + "/ping")).text();
    const metrics = await fetch(base(gateway.adminAddr) + "/metrics");
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /apiserver_flowcontrol_dispatched_requests_total\{/);
    const dump = await fetch(
      base(gateway.adminAddr) + "/debug/api_priority_and_fairness/dump_priority_levels",
    );
    assert.match(await dump.text(), /^PriorityLevelName,/);
    // On the main listener, the same paths are the upstream's.
    const proxied = await fetch(base(gateway.addr) + "/metrics");
    assert.equal(await proxied.text(), "ok /metrics");
    const paths = upstream.received.map((r) => new URL(r.url).pathname);
    assert.deepEqual(paths, ["/ping", "/metrics"]);
    // And the admin listener proxies nothing.
    assert.equal((await fetch(base(gateway.adminAddr) + "/ping")).status, 404);
  } finally {
    await upstream.close();
  }
});

Deno.test("without adminListen there is no admin listener", async () => {
  await using gateway = serveGateway({ upstream: "http://127.0.0.1:1", listen: LOOPBACK });
  assert.equal(gateway.adminAddr, null);
});

const VIP_MANIFEST = `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: vip, uid: vip-level }
spec:
  type: Limited
  limited: { nominalConcurrencyShares: 10, limitResponse: { type: Reject } }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: vip, uid: vip-schema }
spec:
  priorityLevelConfiguration: { name: vip }
  matchingPrecedence: 500
  rules:
    - subjects: [{ kind: Group, group: { name: vips } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
`;

Deno.test("identity headers are honoured only with trustIdentityHeaders", async () => {
  const forwardedUsers: (string | null)[] = [];
  const upstream = testUpstream({
    handle: (req) => {
      forwardedUsers.push(req.headers.get("x-remote-user"));
      return new Response("ok");
    },
  });
  try {
    for (const trust of [true, false]) {
      await using gateway = serveGateway({
        upstream: upstream.url,
        listen: LOOPBACK,
        config: VIP_MANIFEST,
        trustIdentityHeaders: trust,
      });
      const res = await fetch(base(gateway.addr) + "/", {
        headers: { "X-Remote-User": "alice", "X-Remote-Group": "vips" },
      });
      await res.text();
      assert.equal(res.status, 200);
      assert.equal(
        res.headers.get(FLOW_SCHEMA_UID_HEADER) === "vip-schema",
        trust,
        `trust ${trust}`,
      );
      assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER) === "vip-level", trust);
      // Either way, the headers go upstream unchanged: the gateway is no authenticator.
      assert.equal(forwardedUsers.at(-1), "alice");
    }
  } finally {
    await upstream.close();
  }
});

Deno.test("shutdown lets in-flight and queued requests finish, then refuses connections", async () => {
  const upstream = testUpstream({ sleepMs: 150 });
  const gateway = serveGateway({
    upstream: upstream.url,
    listen: LOOPBACK,
    // Two seats and a queue: the third request waits for a seat while shutdown begins.
    config: smallConfig(tenantsManifest({ shares: 95 }), 2),
  });
  try {
    const url = base(gateway.addr) + "/work";
    const requests = [1, 2, 3].map(() => fetch(url).then(async (r) => [r.status, await r.text()]));
    while (upstream.active < 2) await sleep(5);
    const level = () => gateway.middleware.snapshot()!.levels.find((l) => l.name === "tenants")!;
    assert.equal(level().queueSet.waitingRequests, 1);
    const stopped = gateway.shutdown();
    assert.equal(gateway.shutdown(), stopped);
    assert.deepEqual(await Promise.all(requests), [[200, "ok /work"], [200, "ok /work"], [
      200,
      "ok /work",
    ]]);
    await stopped;
    await gateway.finished;
    await assert.rejects(fetch(url), TypeError);
  } finally {
    await gateway.shutdown();
    await upstream.close();
  }
});

Deno.test("serveGateway refuses a bad upstream or address at once", () => {
  for (const upstream of ["ftp://example.com", "not a url", "http://h/?q=1", "http://u:p@h/"]) {
    assert.throws(() => serveGateway({ upstream }), (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /^Cannot serve the gateway: upstream must be .*, got "/);
      return true;
    });
  }
  assert.throws(
    () => serveGateway({ upstream: "http://h", upstreamClient: "h2" as "http1" }),
    /upstreamClient must be "http1" or "fetch", got "h2"/,
  );
  assert.throws(
    () => serveGateway({ upstream: "http://h", listen: { hostname: "127.0.0.1", port: 70000 } }),
    /listen must be \{ hostname, port \} with a port in 0\.\.65535, got \{"hostname":"127\.0\.0\.1","port":70000\}/,
  );
});

Deno.test("a rejected request gets the 429 of the middleware through the gateway", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const upstream = testUpstream({ handle: () => held.then(() => new Response("done")) });
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: LOOPBACK,
    config: smallConfig(tenantsManifest({ shares: 95, reject: true }), 1),
  });
  try {
    const first = fetch(base(gateway.addr) + "/a");
    while (upstream.active < 1) await sleep(5);
    const second = await fetch(base(gateway.addr) + "/b");
    assert.equal(second.status, 429);
    assert.equal(second.headers.get("Retry-After"), "1");
    assert.equal(await second.text(), TOO_MANY_REQUESTS_BODY);
    release();
    assert.equal(await (await first).text(), "done");
  } finally {
    release();
    await upstream.close();
  }
});
