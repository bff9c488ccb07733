/**
 * The pooled HTTP/1.1 upstream client on its own, against a raw-socket
 * upstream: requests on the wire, the pool's bounds and timeouts (on a
 * fake clock), the retry rule, aborts, TLS. What any upstream client must
 * do through the gateway is the conformance suite's
 * (`proxy_conformance_test.ts`).
 */

import assert from "node:assert/strict";
import { FakeEventClock } from "../../mod.ts";
import {
  bodyInHand,
  http1UpstreamClient,
  type UpstreamRequestInit,
} from "../../src/deno/upstream_client.ts";
import { encodeHead } from "../../src/deno/_http1_request.ts";
import { headerOf, okResponse, rawUpstream } from "../_helpers/raw_upstream.ts";
import { sleep, waitFor } from "../_helpers/real_time.ts";

const get = (headers: [string, string][] = []): UpstreamRequestInit => ({
  method: "GET",
  headers,
  body: null,
});

Deno.test("requests go out as given: raw target, Host, framing by length, chunked or none", async () => {
  await using upstream = rawUpstream((req, conn) => conn.write(okResponse(`ok ${req.method}`)));
  const client = http1UpstreamClient();
  try {
    const url = upstream.url;
    await (await client.fetch(`${url}/a/b%20c?x=1&y=%2F`, get([["x-name", "caf\xe9"]]))).text();
    await (await client.fetch(`${url}/len`, {
      method: "PUT",
      headers: [["content-length", "5"]],
      body: new Blob(["hello"]).stream(),
    })).text();
    await (await client.fetch(`${url}/chunked`, {
      method: "POST",
      headers: [],
      body: new Blob(["streamed"]).stream(),
    })).text();
    await (await client.fetch(`${url}/empty`, { method: "POST", headers: [], body: null })).text();
    const [plain, byLength, chunked, empty] = upstream.requests;
    assert.equal(plain!.target, "/a/b%20c?x=1&y=%2F");
    assert.equal(headerOf(plain!, "host"), new URL(url).host);
    assert.equal(headerOf(plain!, "x-name"), "caf\xe9", "one byte per Latin-1 character");
    for (const name of ["content-length", "transfer-encoding", "connection"]) {
      assert.equal(headerOf(plain!, name), null, name);
    }
    assert.equal(headerOf(byLength!, "content-length"), "5");
    assert.equal(new TextDecoder().decode(byLength!.body), "hello");
    assert.equal(headerOf(chunked!, "transfer-encoding"), "chunked");
    assert.equal(new TextDecoder().decode(chunked!.body), "streamed");
    assert.equal(headerOf(empty!, "content-length"), "0");
    assert.equal(upstream.accepted, 1);
  } finally {
    await client.close();
  }
});

Deno.test("a base resolved once: each target goes after its path, on the pool of its origin", async () => {
  await using upstream = rawUpstream((_req, conn) => conn.write(okResponse("ok")));
  const client = http1UpstreamClient();
  try {
    const prefixed = client.base(`${upstream.url}/api/v1/`);
    const bare = client.base(upstream.url);
    assert.equal(prefixed.path, "/api/v1");
    assert.equal(bare.path, "");
    for (
      const [base, target] of [[prefixed, "/a?x=1"], [bare, "/b%20c"], [
        prefixed,
        "/c#frag",
      ]] as const
    ) {
      const reply = await client.sendTo(base, target, get());
      assert.equal(reply.status, 200);
    }
    await (await client.fetch(`${upstream.url}/d`, get())).text();
    assert.deepEqual(upstream.requests.map((r) => r.target), [
      "/api/v1/a?x=1",
      "/b%20c",
      "/api/v1/c",
      "/d",
    ]);
    assert.equal(upstream.accepted, 1, "one pool per origin, whichever way it is named");
    assert.throws(() => client.base("ftp://127.0.0.1/x"), /not an http: or https: origin/);
  } finally {
    await client.close();
  }
  assert.throws(() => client.base("http://127.0.0.1:1"), /the upstream client is closed/);
});

Deno.test("a request that cannot be written as given is refused before any connection", () => {
  const bad: [string, string, [string, string][], RegExp][] = [
    ["GET", "/x", [["x-a", "1\r\nx-b: 2"]], /header "x-a"/],
    ["GET", "/x", [["x-euro", "\u20ac"]], /header "x-euro"/],
    ["GET", "/x", [["bad name", "1"]], /header "bad name"/],
    ["G T", "/x", [], /method "G T"/],
    ["CONNECT", "/x", [], /method "CONNECT"/],
    ["GET", "/a b", [], /target "\/a b"/],
    ["GET", "x", [], /target "x"/],
    ["GET", "/x", [["content-length", "5"]], /Content-Length 5 without a body/],
  ];
  for (const [method, target, headers, message] of bad) {
    assert.throws(() => encodeHead(method, target, "h", headers, false), message);
  }
});

Deno.test("a small response that came whole is bytes in hand; a trickling one streams", async () => {
  const go = Promise.withResolvers<void>();
  await using upstream = rawUpstream(async (req, conn) => {
    if (req.target === "/whole") return conn.write(okResponse("whole"));
    await conn.write("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nfirst");
    await go.promise;
    await conn.write(";end");
  });
  const client = http1UpstreamClient();
  try {
    const whole = await client.fetch(`${upstream.url}/whole`, get());
    assert.equal(new TextDecoder().decode(bodyInHand(whole)!), "whole");
    assert.equal(await whole.text(), "whole");
    const trickle = await client.fetch(`${upstream.url}/trickle`, get());
    assert.equal(bodyInHand(trickle), null);
    go.resolve();
    assert.equal(await trickle.text(), "first;end");
  } finally {
    go.resolve();
    await client.close();
  }
});

Deno.test("HTTP/1.0: a body to the close is not reused; keep-alive with a length is", async () => {
  await using upstream = rawUpstream(async (req, conn) => {
    if (req.target === "/close") {
      await conn.write("HTTP/1.0 200 OK\r\n\r\nto the end");
      conn.close();
    } else {
      await conn.write(
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nkept",
      );
    }
  });
  const client = http1UpstreamClient();
  try {
    assert.equal(await (await client.fetch(`${upstream.url}/close`, get())).text(), "to the end");
    assert.equal(await (await client.fetch(`${upstream.url}/kept`, get())).text(), "kept");
    assert.equal(await (await client.fetch(`${upstream.url}/kept`, get())).text(), "kept");
    assert.equal(upstream.accepted, 2);
  } finally {
    await client.close();
  }
});

Deno.test("a connection the upstream closes on a request: a GET is sent again, a POST is not", async () => {
  // The upstream takes a second request on a kept-alive connection and closes it unanswered (its
  // keep-alive timeout struck as the request arrived): a request not known to be unsent is sent
  // again only if it is idempotent (RFC 9110 §9.2.2).
  const served = new Map<number, number>();
  await using upstream = rawUpstream(async (req, conn) => {
    const n = (served.get(conn.id) ?? 0) + 1;
    served.set(conn.id, n);
    if (n === 2) return conn.close();
    await conn.write(okResponse(`ok ${req.method} ${req.target}`));
  });
  const client = http1UpstreamClient();
  try {
    const url = upstream.url;
    await (await client.fetch(`${url}/first`, get())).text();
    assert.equal(await (await client.fetch(`${url}/again`, get())).text(), "ok GET /again");
    assert.equal(upstream.accepted, 2);
    const post = { method: "POST", headers: [], body: null };
    await assert.rejects(
      client.fetch(`${url}/post`, post),
      /closed the connection without a response/,
    );
    // The failed connection is gone: the next request has a new one.
    assert.equal(await (await client.fetch(`${url}/post`, post)).text(), "ok POST /post");
    assert.equal(upstream.accepted, 3);
  } finally {
    await client.close();
  }
});

Deno.test("an idle connection is watched from the start: the upstream's close is seen before use", async () => {
  await using upstream = rawUpstream(async (req, conn) => {
    await conn.write(okResponse(`ok ${req.target}`));
    if (req.target === "/then-close") conn.close();
  });
  const client = http1UpstreamClient();
  try {
    await (await client.fetch(`${upstream.url}/then-close`, get())).text();
    await sleep(20);
    // Not sent again (a POST), yet served: the watched connection was dropped when it closed.
    const post = await client.fetch(`${upstream.url}/post`, {
      method: "POST",
      headers: [],
      body: null,
    });
    assert.equal(await post.text(), "ok /post");
    assert.equal(upstream.accepted, 2);
  } finally {
    await client.close();
  }
});

Deno.test("bytes an idle connection receives are never the next request's response", async () => {
  // The upstream answers /a, then writes a second response nobody asked for (or the rest of a body
  // longer than its Content-Length). Taken as the answer to the next request, it would go to
  // another client; the idle connection's read sees it and the connection is dropped.
  for (const late of [okResponse("stale", "Set-Cookie: session=of-a\r\n"), " world"]) {
    await using upstream = rawUpstream(async (req, conn) => {
      await conn.write(okResponse(`fresh ${req.target}`));
      if (req.target === "/a") {
        await sleep(10);
        await conn.write(late);
      }
    });
    const client = http1UpstreamClient();
    try {
      assert.equal(await (await client.fetch(`${upstream.url}/a`, get())).text(), "fresh /a");
      await sleep(50);
      const b = await client.fetch(`${upstream.url}/b`, get());
      assert.equal(b.status, 200);
      assert.equal(b.headers.get("set-cookie"), null);
      assert.equal(await b.text(), "fresh /b");
      assert.equal(upstream.accepted, 2, "the connection that spoke out of turn was dropped");
    } finally {
      await client.close();
    }
  }
});

Deno.test("idle connections close after the idle timeout, or the upstream's keep-alive hint less a second", async () => {
  const clock = new FakeEventClock();
  await using upstream = rawUpstream((req, conn) =>
    conn.write(okResponse("ok", req.target === "/hint" ? "Keep-Alive: timeout=3\r\n" : ""))
  );
  const client = http1UpstreamClient({ clock, idleTimeoutMs: 10_000 });
  try {
    await (await client.fetch(`${upstream.url}/plain`, get())).text();
    clock.advance(9_999);
    await sleep(20);
    assert.equal(upstream.open, 1);
    clock.advance(1);
    await waitFor(() => upstream.open === 0, "the idle connection to close");
    await (await client.fetch(`${upstream.url}/hint`, get())).text();
    clock.advance(1_999);
    await sleep(20);
    assert.equal(upstream.open, 1);
    clock.advance(1);
    await waitFor(() => upstream.open === 0, "the hinted connection to close");
    assert.equal(upstream.accepted, 2);
  } finally {
    await client.close();
  }
});

Deno.test("at most maxIdlePerOrigin connections stay idle; close() closes the rest", async () => {
  const release = Promise.withResolvers<void>();
  await using upstream = rawUpstream(async (_req, conn) => {
    await release.promise;
    await conn.write(okResponse("ok"));
  });
  const client = http1UpstreamClient({ maxIdlePerOrigin: 1 });
  try {
    const both = [1, 2].map(async () => (await client.fetch(`${upstream.url}/`, get())).text());
    await waitFor(() => upstream.requests.length === 2, "both requests at the upstream");
    release.resolve();
    assert.deepEqual(await Promise.all(both), ["ok", "ok"]);
    await waitFor(() => upstream.open === 1, "one connection kept, the other closed");
    await client.close();
    await waitFor(() => upstream.open === 0, "close() to close the kept one");
    await assert.rejects(client.fetch(`${upstream.url}/`, get()), /closed/);
  } finally {
    release.resolve();
    await client.close();
  }
});

Deno.test("close() closes the connections in use too: their requests fail at once", async () => {
  // Answers only once released: until then both requests are in flight, on two connections.
  const release = Promise.withResolvers<void>();
  await using upstream = rawUpstream(async (_req, conn) => {
    await release.promise;
    await conn.write(okResponse("late")).catch(() => {});
  });
  const client = http1UpstreamClient();
  try {
    const outcomes: string[] = [];
    for (const i of [1, 2]) {
      client.fetch(`${upstream.url}/${i}`, get()).then(
        () => outcomes.push("answered"),
        () => outcomes.push("failed"),
      );
    }
    await waitFor(() => upstream.requests.length === 2, "both requests at the upstream");
    await client.close();
    // Settled by the close, not by the upstream, which has not answered.
    await waitFor(() => outcomes.length === 2, "both requests to fail when the client closes");
    assert.deepEqual(outcomes, ["failed", "failed"]);
  } finally {
    release.resolve();
    await client.close();
  }
});

Deno.test("an abort before the head rejects with its reason; during the body, the body fails", async () => {
  // Answers nothing to /head, half of /body; reads on, so that it sees the client close.
  await using upstream = rawUpstream(async (req, conn) => {
    if (req.target === "/body") {
      await conn.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf");
    }
  });
  const client = http1UpstreamClient();
  try {
    const early = new AbortController();
    const pending = client.fetch(`${upstream.url}/head`, { ...get(), signal: early.signal });
    await waitFor(() => upstream.requests.length === 1, "the request at the upstream");
    early.abort(new Error("deadline"));
    await assert.rejects(pending, /deadline/);
    const late = new AbortController();
    const res = await client.fetch(`${upstream.url}/body`, { ...get(), signal: late.signal });
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "half");
    late.abort(new Error("gone"));
    await assert.rejects(reader.read(), /gone/);
    // Neither connection is kept: an aborted exchange leaves its connection in an unknown state.
    await waitFor(() => upstream.open === 0, "both connections closed");
  } finally {
    await client.close();
  }
});

Deno.test("an upstream that answers before taking the whole body: the answer is passed, the connection dropped", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let bytes = 0;
  const serving = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(64 * 1024);
    const n = (await conn.read(buf))!;
    bytes += n;
    await conn.write(
      new TextEncoder().encode(okResponse("too large").replace("200 OK", "413 Too Large")),
    );
    // Go on reading, slowly, as a server draining what it refused would.
    try {
      for (let r = await conn.read(buf); r !== null; r = await conn.read(buf)) bytes += r;
    } catch {
      // reset: the client gave up sending
    }
    conn.close();
  })();
  const client = http1UpstreamClient();
  try {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === 256) return controller.close(); // 16 MiB
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const res = await client.fetch(`http://127.0.0.1:${port}/upload`, {
      method: "POST",
      headers: [["content-length", String(256 * 64 * 1024)]],
      body,
    });
    assert.equal(res.status, 413);
    assert.equal(await res.text(), "too large");
    await serving;
    assert.ok(bytes < 256 * 64 * 1024, `the whole body was sent (${bytes} bytes)`);
  } finally {
    listener.close();
    await client.close();
  }
});

const fixture = (name: string) =>
  Deno.readTextFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

Deno.test("https: TLS over the pooled connections, verified with the CA given", async () => {
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: fixture("test_only_127.0.0.1.pem"),
    key: fixture("test_only_127.0.0.1.key.pem"),
    onListen: () => {},
    onError: () => new Response(null, { status: 500 }),
  }, (req) => new Response(`tls ${new URL(req.url).pathname}`));
  const url = `https://127.0.0.1:${server.addr.port}`;
  const trusting = http1UpstreamClient({ caCerts: [fixture("test_only_ca.pem")] });
  const doubting = http1UpstreamClient();
  try {
    for (const path of ["/a", "/b"]) {
      assert.equal(await (await trusting.fetch(url + path, get())).text(), `tls ${path}`);
    }
    await assert.rejects(doubting.fetch(`${url}/c`, get()));
  } finally {
    await trusting.close();
    await doubting.close();
    await server.shutdown();
  }
});
