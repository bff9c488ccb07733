/**
 * The gateway's own HTTP/1.1 server (`serveGateway()` with the default
 * `http1` upstream client: `src/deno/_gateway_server.ts`) as seen on the
 * wire: raw-socket clients (`_gateway_wire.ts`) write requests byte by byte
 * and the tests assert on the bytes that come back, against RFC 9112 and
 * RFC 9110: persistence and pipelining, refusals before the upstream,
 * `100 Continue`, request and response bodies by each framing, HEAD,
 * timeouts, a client leaving its queue, and `Date`.
 */

import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import type { GatewayOptions } from "../../src/deno/mod.ts";
import { FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER } from "../../src/hono/_response.ts";
import { smallConfig } from "./_helpers.ts";
import { fieldOf, fieldValues, WireClient, type WireHead } from "./_gateway_wire.ts";
import { readUntilClosed } from "./_raw_http.ts";
import { sleep, waitFor, within } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { testUpstream } from "../_helpers/upstream.ts";
import { okResponse, rawUpstream } from "../_helpers/raw_upstream.ts";

const LOOPBACK = { hostname: "127.0.0.1", port: 0 };
const encoder = new TextEncoder();

/** Two seats on level `tenants`, which rejects what does not fit. */
const TWO_SEATS = smallConfig(tenantsManifest({ shares: 95, reject: true }), 2);
/** One seat on level `tenants`, with queues: a second request waits for the first. */
const ONE_SEAT_QUEUED = smallConfig(tenantsManifest({ shares: 95 }), 1);

/** A gateway (HTTP/1.1 upstream client, the default) on loopback in front of `upstream`. */
function gatewayFor(upstream: string, options: Partial<GatewayOptions> = {}) {
  return serveGateway({ upstream, listen: LOOPBACK, ...options });
}

type Gateway = ReturnType<typeof serveGateway>;

/** The queue set of level `tenants`. */
function tenants(gateway: Gateway) {
  return gateway.middleware.snapshot()!.levels.find((l) => l.name === "tenants")!.queueSet;
}

/** The paths the test upstream received, in order. */
function pathsOf(upstream: { received: Request[] }): string[] {
  return upstream.received.map((r) => new URL(r.url).pathname);
}

/** An IMF-fixdate (RFC 9110 §5.6.7). */
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Asserts `head` has exactly one `Date`, an IMF-fixdate. */
function assertDated(head: WireHead): void {
  const dates = fieldValues(head, "date");
  assert.equal(dates.length, 1, `one Date in ${JSON.stringify(head.raw)}`);
  assert.match(dates[0]!, IMF_FIXDATE);
}

/** Asserts `head` carries the APF headers of an admitted request. */
function assertAdmitted(head: WireHead): void {
  assert.ok((fieldOf(head, FLOW_SCHEMA_UID_HEADER) ?? "") !== "", `FlowSchema UID in ${head.raw}`);
  assert.ok((fieldOf(head, PRIORITY_LEVEL_UID_HEADER) ?? "") !== "", `PL UID in ${head.raw}`);
  assert.match(fieldOf(head, "server-timing") ?? "", /^apf;dur=\d+(\.\d+)?$/);
}

// 1. Pipelining (RFC 9112 §9.3.2).

Deno.test("gateway wire: two pipelined GETs in one write get two responses, in order, on one connection", async () => {
  await using upstream = testUpstream({
    handle: async (req) => {
      const path = new URL(req.url).pathname;
      // The first is the slower: its response must still come first.
      if (path === "/first") await sleep(30);
      return new Response(`ok ${path}`);
    },
  });
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  await client.send(
    "GET /first HTTP/1.1\r\nHost: gw\r\n\r\nGET /second HTTP/1.1\r\nHost: gw\r\n\r\n",
  );
  const first = await client.readResponse();
  const second = await client.readResponse();
  for (const [res, path] of [[first, "/first"], [second, "/second"]] as const) {
    assert.equal(res.head.status, 200, path);
    assert.equal(res.body, `ok ${path}`);
    assertAdmitted(res.head);
    assert.equal(fieldOf(res.head, "connection"), null, "HTTP/1.1 persists without saying so");
  }
  // The connection still serves requests.
  await client.send("GET /third HTTP/1.1\r\nHost: gw\r\n\r\n");
  assert.equal((await client.readResponse()).body, "ok /third");
  assert.deepEqual(pathsOf(upstream), ["/first", "/second", "/third"]);
});

// 2, 3. Persistence (RFC 9112 §9.3).

Deno.test("gateway wire: an HTTP/1.0 request without keep-alive gets its response, then the close", async () => {
  await using upstream = testUpstream();
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  await client.send("GET /old HTTP/1.0\r\n\r\n");
  const res = await client.readResponse();
  assert.equal(res.head.status, 200);
  assert.equal(res.framing, "length");
  assert.equal(res.body, "ok /old");
  assert.notEqual(fieldOf(res.head, "connection")?.toLowerCase(), "keep-alive");
  await client.expectClosed(2_000);
});

Deno.test("gateway wire: an HTTP/1.0 request with Connection: keep-alive keeps its connection", async () => {
  await using upstream = testUpstream();
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  for (const path of ["/one", "/two"]) {
    await client.send(`GET ${path} HTTP/1.0\r\nConnection: keep-alive\r\n\r\n`);
    const res = await client.readResponse();
    assert.equal(res.head.status, 200);
    assert.equal(res.body, `ok ${path}`);
    // RFC 9112 §9.3 (and its Appendix C.2.2): an HTTP/1.0 connection persists only when told.
    assert.equal(fieldOf(res.head, "connection")?.toLowerCase(), "keep-alive");
    // A body an HTTP/1.0 client can delimit on a kept connection: by its length.
    assert.equal(res.framing, "length");
  }
  // Without keep-alive, the third is the last.
  await client.send("GET /three HTTP/1.0\r\n\r\n");
  assert.equal((await client.readResponse()).body, "ok /three");
  await client.expectClosed(2_000);
  assert.deepEqual(pathsOf(upstream), ["/one", "/two", "/three"]);
});

Deno.test("gateway wire: HTTP/1.1 with Connection: close gets connection: close, then the close", async () => {
  await using upstream = testUpstream();
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  await client.send("GET /bye HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n");
  const res = await client.readResponse();
  assert.equal(res.head.status, 200);
  assert.equal(res.body, "ok /bye");
  assert.equal(fieldOf(res.head, "connection")?.toLowerCase(), "close");
  await client.expectClosed(2_000);
});

Deno.test("gateway wire: a client that half-closes its side after sending still gets its answer", async () => {
  // RFC 9112 §9.6: a client may close its sending side once the request is out; the end of
  // its stream is not a client gone (Deno.serve, the fetch upstream client's server, closes).
  await using upstream = testUpstream();
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  await client.send("GET /half HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n");
  await client.conn.closeWrite();
  const res = await client.readResponse();
  assert.equal(res.head.status, 200);
  assert.equal(res.body, "ok /half");
  assertAdmitted(res.head);
  await client.expectClosed(2_000);
  await waitFor(
    () => gateway.middleware.snapshot()!.levels.every((l) => l.queueSet.seatsInUse === 0),
    "the seat back",
  );
});

// 4. Requests refused before the upstream.

const PAD_LINE = `X-Pad: ${"a".repeat(1_000)}\r\n`;

const REFUSED: { what: string; request: string; status: number }[] = [
  // RFC 9112 §3: one SP between the parts.
  { what: "a malformed request line", request: "GET  / HTTP/1.1\r\nHost: gw\r\n\r\n", status: 400 },
  {
    what: "a header section over 64 KiB",
    request: `GET / HTTP/1.1\r\nHost: gw\r\n${PAD_LINE.repeat(70)}\r\n`,
    status: 431,
  },
  {
    what: "a request line over 8 KiB",
    request: `GET /${"a".repeat(9_000)} HTTP/1.1\r\nHost: gw\r\n\r\n`,
    status: 414,
  },
  // RFC 9112 §6.1: the shape of request smuggling.
  {
    what: "Transfer-Encoding with Content-Length",
    request:
      "POST /up HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
    status: 400,
  },
  // RFC 9112 §6.3 item 4: chunked is not the final coding.
  {
    what: "Transfer-Encoding: gzip",
    request: "POST /up HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: gzip\r\n\r\nabcd",
    status: 400,
  },
  // RFC 9112 §6.1: a transfer coding the server does not understand.
  {
    what: "an unknown transfer coding (x, chunked)",
    request: "POST /up HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: x, chunked\r\n\r\n0\r\n\r\n",
    status: 501,
  },
  // RFC 9112 §3.2.
  { what: "no Host on HTTP/1.1", request: "GET / HTTP/1.1\r\nX-A: b\r\n\r\n", status: 400 },
  // RFC 9112 §5.2.
  {
    what: "an obs-fold line",
    request: "GET / HTTP/1.1\r\nHost: gw\r\nX-Folded: a\r\n b\r\n\r\n",
    status: 400,
  },
];

for (const { what, request, status } of REFUSED) {
  Deno.test(`gateway wire: ${what} is refused with ${status}, the connection closed, the upstream not called`, async () => {
    await using upstream = testUpstream();
    await using gateway = gatewayFor(upstream.url);
    using client = await WireClient.open(gateway.addr.port);
    // The server may refuse before it has read all of it.
    await client.trySend(request);
    const res = await client.readResponse();
    assert.equal(res.head.status, status, res.head.raw);
    assert.equal(fieldOf(res.head, "connection")?.toLowerCase(), "close");
    assertDated(res.head);
    await client.expectClosed(2_000);
    assert.equal(upstream.received.length, 0, "the upstream saw the request");
  });
}

// 5. Expect: 100-continue (RFC 9110 §10.1.1).

Deno.test("gateway wire: Expect: 100-continue gets 100 Continue, then the body goes up and its echo comes back", async () => {
  await using upstream = testUpstream({
    handle: async (req) => new Response(`echo ${await req.text()}`),
  });
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  const body = "hello world";
  await client.send(
    "POST /echo HTTP/1.1\r\nHost: gw\r\nContent-Type: text/plain\r\n" +
      `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  // The client waits for the 100 before it sends the body (a read with no body sent).
  const interim = await client.readHead(3_000);
  assert.equal(interim.raw.split("\r\n")[0], "HTTP/1.1 100 Continue");
  assert.equal(interim.status, 100);
  assert.equal(client.pending, "", "nothing but the 100 before the body is sent");
  await client.send(body);
  const res = await client.readResponse({ method: "POST" });
  assert.equal(res.head.status, 200);
  assert.equal(res.body, `echo ${body}`);
  assertAdmitted(res.head);
  assert.equal(upstream.received.length, 1);
});

// 6. Request bodies.

Deno.test("gateway wire: a chunked request body written in parts with pauses reaches the upstream whole", async () => {
  const bodies: string[] = [];
  await using upstream = testUpstream({
    handle: async (req) => {
      const text = await req.text();
      bodies.push(text);
      return new Response(`${text.length}:${text}`);
    },
  });
  await using gateway = gatewayFor(upstream.url, { config: TWO_SEATS });
  using client = await WireClient.open(gateway.addr.port);
  await client.send("POST /upload HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n");
  const parts = ["hello", ", chunked", " request body", "!"];
  for (const part of parts) {
    await client.send(`${part.length.toString(16)}\r\n${part}\r\n`);
    await sleep(20);
  }
  await client.send("0\r\n\r\n");
  const whole = parts.join("");
  const res = await client.readResponse({ method: "POST" });
  assert.equal(res.head.status, 200);
  assert.equal(res.body, `${whole.length}:${whole}`);
  assert.deepEqual(bodies, [whole]);
  await waitFor(() => tenants(gateway).seatsInUse === 0, "the seat to go back");
  // The connection serves the next request.
  await client.send("GET /next HTTP/1.1\r\nHost: gw\r\n\r\n");
  assert.equal((await client.readResponse()).head.status, 200);
});

for (const framing of ["length", "chunked"] as const) {
  Deno.test(`gateway wire: a request body (${framing}) cut short by the client never reaches the upstream whole, and the seat goes back`, async () => {
    const outcome = Promise.withResolvers<string>();
    await using upstream = testUpstream({
      handle: async (req) => {
        try {
          const text = await req.text();
          outcome.resolve(`complete: ${text.length} bytes`);
        } catch {
          outcome.resolve("failed");
        }
        return new Response("read");
      },
    });
    await using gateway = gatewayFor(upstream.url, { config: TWO_SEATS });
    const client = await WireClient.open(gateway.addr.port);
    try {
      await client.send(
        framing === "length"
          ? `POST /cut HTTP/1.1\r\nHost: gw\r\nContent-Length: 100\r\n\r\n${"x".repeat(40)}`
          : `POST /cut HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n28\r\n${
            "x".repeat(40)
          }\r\n`,
      );
      // The body streams: the upstream has the request before its body is whole.
      await waitFor(() => upstream.received.length === 1, "the upstream to get the request");
    } finally {
      client.close();
    }
    const result = await within(outcome.promise, 3_000, "the upstream to see the body end");
    assert.equal(result, "failed", "the upstream read a complete body");
    await waitFor(() => tenants(gateway).seatsInUse === 0, "the seat to go back");
    assert.equal(tenants(gateway).executingRequests, 0);
  });
}

// 7. Response bodies of unknown length.

/**
 * An upstream (Deno.serve) whose `/stream` is `first;` then, once `gate()`
 * resolves and 20 ms later, `second;`, and 20 ms later `last`, without a
 * length; other paths answer `ok <path>`.
 */
function streamingUpstream(gate: () => Promise<void>) {
  const state = { sentLast: false };
  const upstream = testUpstream({
    handle: (req) => {
      if (new URL(req.url).pathname !== "/stream") {
        return new Response(`ok ${new URL(req.url).pathname}`);
      }
      return new Response(
        new ReadableStream<Uint8Array>({
          async start(controller) {
            controller.enqueue(encoder.encode("first;"));
            await gate();
            await sleep(20);
            controller.enqueue(encoder.encode("second;"));
            await sleep(20);
            state.sentLast = true;
            controller.enqueue(encoder.encode("last"));
            controller.close();
          },
        }),
        { headers: { "content-type": "text/plain" } },
      );
    },
  });
  return { upstream, state };
}

Deno.test("gateway wire: a streamed response of unknown length goes to an HTTP/1.1 client chunked, as it comes", async () => {
  const firstSeen = Promise.withResolvers<void>();
  const { upstream, state } = streamingUpstream(() =>
    // Past this, the client cannot have the first chunk unless it was forwarded alone.
    within(firstSeen.promise, 3_000, "the client to see the first chunk").catch(() => {})
  );
  await using _upstream = upstream;
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  await client.send("GET /stream HTTP/1.1\r\nHost: gw\r\n\r\n");
  let lastSentAtFirstChunk: boolean | null = null;
  const res = await client.readResponse({
    onChunk: () => {
      if (lastSentAtFirstChunk !== null) return;
      lastSentAtFirstChunk = state.sentLast;
      firstSeen.resolve();
    },
  });
  assert.equal(res.head.status, 200);
  assert.equal(res.framing, "chunked");
  assert.equal(fieldOf(res.head, "transfer-encoding")?.toLowerCase(), "chunked");
  assert.equal(fieldOf(res.head, "content-length"), null);
  assert.equal(res.body, "first;second;last");
  assert.equal(lastSentAtFirstChunk, false, "the first chunk came after the upstream's last");
  assert.ok(res.chunkSizes.slice(0, -1).every((n) => n > 0), "no empty chunk before the last");
  assert.ok(res.rawBody.endsWith("\r\n0\r\n\r\n"), JSON.stringify(res.rawBody));
  assertAdmitted(res.head);
  // Nothing after the last chunk, and the connection serves the next request.
  assert.equal(client.pending, "");
  await client.send("GET /after HTTP/1.1\r\nHost: gw\r\n\r\n");
  assert.equal((await client.readResponse()).body, "ok /after");
});

Deno.test("gateway wire: a streamed response of unknown length goes to an HTTP/1.0 client delimited by the close", async () => {
  const { upstream } = streamingUpstream(() => Promise.resolve());
  await using _upstream = upstream;
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  // Even asked to keep the connection: the close is the only delimiter an HTTP/1.0 client has.
  await client.send("GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  const res = await client.readResponse();
  assert.equal(res.head.status, 200);
  assert.equal(res.framing, "close");
  assert.equal(fieldOf(res.head, "transfer-encoding"), null);
  assert.equal(fieldOf(res.head, "content-length"), null);
  assert.equal(fieldOf(res.head, "connection")?.toLowerCase(), "close");
  assert.equal(res.body, "first;second;last");
  assert.ok(client.eof, "the server closed the connection");
});

// 8. HEAD.

Deno.test("gateway wire: HEAD gets the upstream's head, Content-Length included, no body, and the connection stays", async () => {
  await using upstream = rawUpstream(async (req, conn) => {
    if (req.method === "HEAD") {
      await conn.write(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1234\r\n\r\n",
      );
    } else {
      await conn.write(okResponse(`after ${req.method}`));
    }
  });
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  await client.send("HEAD /doc HTTP/1.1\r\nHost: gw\r\n\r\n");
  const head = await client.readResponse({ method: "HEAD" });
  assert.equal(head.head.status, 200);
  assert.equal(fieldOf(head.head, "content-length"), "1234");
  assert.equal(fieldOf(head.head, "transfer-encoding"), null);
  assertAdmitted(head.head);
  // Any body byte would come before the next response's status line.
  await client.send("GET /doc HTTP/1.1\r\nHost: gw\r\n\r\n");
  const next = await client.readResponse();
  assert.equal(next.head.status, 200);
  assert.equal(next.body, "after GET");
  assert.deepEqual(upstream.requests.map((r) => r.method), ["HEAD", "GET"]);
});

for (const upstreamClient of ["http1", "fetch"] as const) {
  Deno.test(`gateway wire (${upstreamClient}): the client's response carries its length once, whatever the upstream's Connection names or repeats`, async () => {
    // An upstream `Connection: Content-Length` takes the field out of the end-to-end ones; two equal
    // `Content-Length` lines (5 and 05) are one length that some clients refuse repeated. Either
    // way the gateway writes the length the framing read, once, and the next response on the
    // connection is its own.
    await using upstream = rawUpstream(async (req, conn) => {
      if (req.target === "/named") {
        await conn.write(
          "HTTP/1.1 200 OK\r\nConnection: Content-Length\r\nContent-Length: 5\r\n\r\nhello",
        );
      } else if (req.target === "/twice") {
        await conn.write(
          "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 05\r\n\r\nhello",
        );
      } else await conn.write(okResponse(`after ${req.target}`));
    });
    await using gateway = gatewayFor(upstream.url, { upstreamClient });
    using client = await WireClient.open(gateway.addr.port);
    for (const path of ["/named", "/twice"]) {
      await client.send(`GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`);
      const res = await client.readResponse({ deadlineMs: 2_000 });
      assert.equal(res.head.status, 200, path);
      // The HTTP/1.1 client keeps the length; fetch may hand the body on chunked (as well framed).
      if (upstreamClient === "http1" || res.framing === "length") {
        assert.equal(res.framing, "length", path);
        assert.deepEqual(fieldValues(res.head, "content-length"), ["5"], path);
      } else {
        assert.equal(res.framing, "chunked", path);
        assert.deepEqual(fieldValues(res.head, "content-length"), [], path);
      }
      assert.equal(res.body, "hello", path);
      await client.send(`GET /next HTTP/1.1\r\nHost: gw\r\n\r\n`);
      const next = await client.readResponse({ deadlineMs: 2_000 });
      assert.equal(next.body, "after /next", path);
    }
  });
}

// 9. An upstream response that cannot be passed on.

Deno.test("gateway wire: an upstream response with an invalid field name is a 502", async () => {
  await using upstream = rawUpstream(async (_req, conn) => {
    await conn.write("HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 2\r\n\r\nok");
  });
  await using gateway = gatewayFor(upstream.url, { config: TWO_SEATS, onUpstreamError: () => {} });
  using client = await WireClient.open(gateway.addr.port);
  await client.send("GET /bad HTTP/1.1\r\nHost: gw\r\n\r\n");
  const res = await client.readResponse();
  assert.equal(res.head.status, 502);
  assert.doesNotMatch(res.head.raw, /bad name/i);
  assert.notEqual(res.body, "ok");
  assertDated(res.head);
  await waitFor(() => tenants(gateway).seatsInUse === 0, "the seat to go back");
});

Deno.test("gateway wire: upstream fields the client's fast path does not read are checked: a NUL is a 502, obs-text passes as its bytes", async () => {
  await using upstream = rawUpstream(async (req, conn) => {
    const value = req.target === "/nul" ? "a\x00b" : req.target === "/latin1" ? "caf\xe9" : "plain";
    await conn.write(`HTTP/1.1 200 OK\r\nX-Value: ${value}\r\nContent-Length: 2\r\n\r\nok`);
  });
  await using gateway = gatewayFor(upstream.url, { config: TWO_SEATS, onUpstreamError: () => {} });
  for (
    const [path, status, value] of [
      ["/plain", 200, "plain"],
      ["/latin1", 200, "caf\xe9"],
      ["/nul", 502, null],
      ["/plain", 200, "plain"],
    ] as const
  ) {
    using client = await WireClient.open(gateway.addr.port);
    await client.send(`GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`);
    const res = await client.readResponse();
    assert.equal(res.head.status, status, path);
    assert.equal(fieldOf(res.head, "x-value"), value, path);
    if (status === 200) assertAdmitted(res.head);
  }
  await waitFor(() => tenants(gateway).seatsInUse === 0, "the seats to go back");
});

// 10. The guard's timeouts on the gateway's listener.

Deno.test("gateway wire: the header timeout closes a connection with half a request head", async () => {
  await using upstream = testUpstream();
  await using gateway = gatewayFor(upstream.url, { headerTimeoutMs: 200 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: gateway.addr.port });
  await conn.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: gw\r\n"));
  const closed = await readUntilClosed(conn, 1_000);
  assert.ok(closed.afterMs >= 100, `closed after ${closed.afterMs} ms, before the timeout`);
  assert.doesNotMatch(closed.text, /^HTTP\/1\.1 2/);
  assert.equal(upstream.received.length, 0);
});

Deno.test("gateway wire: the idle timeout closes an idle kept-alive connection", async () => {
  // The upstream takes longer than the idle timeout: a request in flight is not idle.
  await using upstream = testUpstream({ sleepMs: 300 });
  await using gateway = gatewayFor(upstream.url, { idleTimeoutMs: 200 });
  using client = await WireClient.open(gateway.addr.port);
  await client.send("GET /work HTTP/1.1\r\nHost: gw\r\n\r\n");
  const res = await client.readResponse();
  assert.equal(res.head.status, 200);
  assert.equal(res.body, "ok /work");
  assert.equal(fieldOf(res.head, "connection"), null, "kept alive");
  const afterMs = await client.expectClosed(1_000);
  assert.ok(afterMs >= 100, `closed after ${afterMs} ms, before the idle timeout`);
});

// 11. A client that leaves while its request waits in a queue.

Deno.test("gateway wire: a client gone while its request waits in a queue leaves the queue; the upstream never sees it", async () => {
  const release = Promise.withResolvers<void>();
  await using upstream = testUpstream({
    handle: async (req) => {
      if (new URL(req.url).pathname === "/hold") await release.promise;
      return new Response(`ok ${new URL(req.url).pathname}`);
    },
  });
  await using gateway = gatewayFor(upstream.url, { config: ONE_SEAT_QUEUED });
  using holder = await WireClient.open(gateway.addr.port);
  try {
    await holder.send("GET /hold HTTP/1.1\r\nHost: gw\r\n\r\n");
    await waitFor(() => upstream.active === 1, "the first request to hold the seat");
    assert.equal(tenants(gateway).seatsInUse, 1);

    const leaver = await WireClient.open(gateway.addr.port);
    try {
      await leaver.send("GET /queued HTTP/1.1\r\nHost: gw\r\n\r\n");
      await waitFor(() => tenants(gateway).waitingRequests === 1, "the second request to queue");
    } finally {
      leaver.close();
    }
    // Out of the queue while the seat is still held: it did not wait for the seat to find out.
    await waitFor(() => tenants(gateway).waitingRequests === 0, "the queue to drop the request");
    const level = tenants(gateway);
    assert.equal(level.seatsInUse, 1);
    assert.equal(level.rejected.cancelled, 1);
  } finally {
    release.resolve();
  }
  const held = await holder.readResponse();
  assert.equal(held.body, "ok /hold");
  await waitFor(() => tenants(gateway).seatsInUse === 0, "the seat to go back");
  // One more on the same connection: had the gone request been dispatched, it came before this.
  await holder.send("GET /after HTTP/1.1\r\nHost: gw\r\n\r\n");
  assert.equal((await holder.readResponse()).body, "ok /after");
  const level = tenants(gateway);
  assert.equal(level.waitingRequests, 0);
  assert.equal(level.seatsInUse, 0);
  assert.equal(level.dispatched, 2, "only /hold and /after were dispatched");
  assert.deepEqual(pathsOf(upstream), ["/hold", "/after"]);
});

// 12. Date (RFC 9110 §6.6.1).

Deno.test("gateway wire: Date is added when the upstream gives none, and the upstream's own is kept alone", async () => {
  const upstreamDate = "Sat, 01 Jan 2000 00:00:00 GMT";
  await using upstream = rawUpstream(async (req, conn) => {
    if (req.target === "/dated") await conn.write(okResponse("dated", `Date: ${upstreamDate}\r\n`));
    else if (req.target === "/lower") {
      await conn.write(okResponse("lower", `date: ${upstreamDate}\r\n`));
    } else if (req.target === "/stream") {
      await conn.write(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n",
      );
    } else if (req.target === "/none") {
      await conn.write("HTTP/1.1 204 No Content\r\n\r\n");
    } else {
      await conn.write(okResponse("undated"));
    }
  });
  await using gateway = gatewayFor(upstream.url);
  using client = await WireClient.open(gateway.addr.port);
  const get = async (path: string, method = "GET") => {
    await client.send(`${method} ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`);
    return await client.readResponse({ method });
  };
  for (const path of ["/dated", "/lower"]) {
    const res = await get(path);
    assert.equal(res.head.status, 200);
    assert.deepEqual(fieldValues(res.head, "date"), [upstreamDate], path);
  }
  for (
    const [path, method] of [["/undated", "GET"], ["/stream", "GET"], ["/none", "GET"], [
      "/undated",
      "HEAD",
    ]]
  ) {
    const res = await get(path!, method);
    assert.ok(res.head.status < 300, `${method} ${path}: ${res.head.status}`);
    assertDated(res.head);
    const date = Date.parse(fieldOf(res.head, "date")!);
    assert.ok(Math.abs(date - Date.now()) < 5_000, `a Date of now: ${fieldOf(res.head, "date")}`);
  }
});

Deno.test("gateway wire: the gateway's own answers (400, 429, 504) carry a Date", async () => {
  const release = Promise.withResolvers<void>();
  await using upstream = testUpstream({
    handle: async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/hold") await release.promise;
      if (path === "/slow") await sleep(300);
      return new Response(`ok ${path}`);
    },
  });
  const statuses: number[] = [];
  {
    // One seat, no queue: a second request while /hold runs is a 429.
    await using gateway = gatewayFor(upstream.url, {
      config: smallConfig(tenantsManifest({ shares: 95, reject: true }), 1),
    });
    {
      using client = await WireClient.open(gateway.addr.port);
      await client.send("GET / HTTP/1.1\r\n\r\n");
      const res = await client.readResponse();
      statuses.push(res.head.status);
      assertDated(res.head);
    }
    using holder = await WireClient.open(gateway.addr.port);
    try {
      await holder.send("GET /hold HTTP/1.1\r\nHost: gw\r\n\r\n");
      await waitFor(() => upstream.active === 1, "the first request to hold the seat");
      using client = await WireClient.open(gateway.addr.port);
      await client.send("GET /rejected HTTP/1.1\r\nHost: gw\r\n\r\n");
      const res = await client.readResponse();
      statuses.push(res.head.status);
      assertDated(res.head);
    } finally {
      release.resolve();
    }
    assert.equal((await holder.readResponse()).body, "ok /hold");
  }
  {
    await using gateway = gatewayFor(upstream.url, { requestTimeoutMs: 150 });
    using client = await WireClient.open(gateway.addr.port);
    await client.send("GET /slow HTTP/1.1\r\nHost: gw\r\n\r\n");
    const res = await client.readResponse();
    statuses.push(res.head.status);
    assertDated(res.head);
  }
  assert.deepEqual(statuses, [400, 429, 504]);
});

// Beyond the brief: what the probes of these tests found.

for (
  const [what, lengthFields] of [
    ["a Content-Length list of one value (5, 5)", "Content-Length: 5, 5\r\n"],
    ["two Content-Length fields of one value", "Content-Length: 5\r\nContent-Length: 5\r\n"],
  ]
) {
  // RFC 9110 §8.6: the recipient "MUST either reject the message as invalid or replace the
  // duplicated field values with a single valid Content-Length field containing that decimal
  // value prior to determining the message body length or forwarding the message".
  Deno.test(`gateway wire: ${what} is refused with 400, or forwarded as one Content-Length`, async () => {
    const errors: unknown[] = [];
    await using upstream = rawUpstream(async (req, conn) => {
      await conn.write(okResponse(`got ${new TextDecoder().decode(req.body)}`));
    });
    await using gateway = gatewayFor(upstream.url, { onUpstreamError: (e) => errors.push(e) });
    using client = await WireClient.open(gateway.addr.port);
    await client.send(`POST /len HTTP/1.1\r\nHost: gw\r\n${lengthFields}\r\nhello`);
    const res = await client.readResponse({ method: "POST" });
    assert.ok(
      res.head.status === 400 || res.head.status === 200,
      `${res.head.status}; told onUpstreamError: ${errors.map(String).join("; ")}`,
    );
    assert.deepEqual(errors.map(String), [], "the upstream is not to blame");
    if (res.head.status === 400) {
      assert.equal(upstream.requests.length, 0);
      await client.expectClosed(2_000);
    } else {
      assert.equal(res.head.status, 200, res.head.raw);
      assert.equal(res.body, "got hello");
      const lengths = upstream.requests[0]!.headers.filter(([n]) =>
        n.toLowerCase() === "content-length"
      );
      assert.deepEqual(lengths.map(([, v]) => v), ["5"]);
    }
  });
}

Deno.test("gateway wire: OPTIONS * (asterisk-form) is refused with 400, as nginx does, not answered as an upstream failure", async () => {
  const errors: unknown[] = [];
  await using upstream = rawUpstream(async (_req, conn) => {
    await conn.write(okResponse("", "Allow: GET, HEAD, OPTIONS\r\n"));
  });
  await using gateway = gatewayFor(upstream.url, { onUpstreamError: (e) => errors.push(e) });
  using client = await WireClient.open(gateway.addr.port);
  await client.send("OPTIONS * HTTP/1.1\r\nHost: gw\r\n\r\n");
  const res = await client.readResponse({ method: "OPTIONS" });
  // A reverse proxy forwards to its upstream's resources; `*` names none of them.
  assert.equal(res.head.status, 400, `told onUpstreamError: ${errors.map(String).join("; ")}`);
  assert.deepEqual(errors.map(String), []);
  assert.equal(upstream.requests.length, 0);
});

/**
 * A gateway with `upstreamClient` in front of an upstream that notes how each request body
 * ended (`complete: …` or `failed`), and what the gateway reported as the upstream's errors.
 */
function bodyWatch(upstreamClient: "http1" | "fetch") {
  const errors: unknown[] = [];
  const bodies: string[] = [];
  const upstream = testUpstream({
    handle: async (req) => {
      try {
        bodies.push(`complete: ${await req.text()}`);
      } catch {
        bodies.push("failed");
      }
      return new Response("read");
    },
  });
  const gateway = gatewayFor(upstream.url, {
    upstreamClient,
    onUpstreamError: (e) => errors.push(e),
  });
  return { errors, bodies, upstream, gateway };
}

for (const upstreamClient of ["http1", "fetch"] as const) {
  // With `fetch`, the gateway listens on Deno.serve, whose own server reads the client's body.
  Deno.test(`gateway wire (${upstreamClient}): a malformed chunk that comes after the request went upstream is a 400, not a 502`, async () => {
    const { errors, bodies, upstream, gateway } = bodyWatch(upstreamClient);
    await using _upstream = upstream;
    await using _gateway = gateway;
    using client = await WireClient.open(gateway.addr.port);
    await client.send("POST /bad-chunk HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n");
    await waitFor(() => upstream.received.length === 1, "the request to go upstream");
    // Not a chunk-size line: the body's framing is invalid (RFC 9112 §7.1).
    await client.trySend("zz\r\nabc\r\n0\r\n\r\n");
    const res = await client.readResponse({ method: "POST" });
    // RFC 9110 §15.5.1: invalid request message framing is the client's error, a 400; a 502 says
    // the upstream sent an invalid response, and tells onUpstreamError so.
    assert.equal(res.head.status, 400, res.head.raw);
    assert.equal(fieldOf(res.head, "connection")?.toLowerCase(), "close");
    await client.expectClosed(2_000);
    assert.deepEqual(errors.map(String), [], "the upstream is not to blame");
    await waitFor(() => bodies.length === 1, "the upstream to see the body end");
    assert.deepEqual(bodies, ["failed"]);
  });

  Deno.test(`gateway wire (${upstreamClient}): a chunked body the client breaks off after the request went upstream is not the upstream's error`, async () => {
    const { errors, bodies, upstream, gateway } = bodyWatch(upstreamClient);
    await using _upstream = upstream;
    await using _gateway = gateway;
    const client = await WireClient.open(gateway.addr.port);
    await client.send(
      "POST /cut HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    );
    await waitFor(() => upstream.received.length === 1, "the request to go upstream");
    client.close();
    await waitFor(() => bodies.length === 1, "the upstream to see the body end");
    assert.deepEqual(bodies, ["failed"]);
    // The exchange has failed by now; give a report a moment to arrive.
    await sleep(50);
    assert.deepEqual(errors.map(String), [], "the upstream is not to blame");
  });
}
