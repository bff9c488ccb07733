/**
 * The proxy conformance suite, continued (`proxy_conformance.ts`
 * registers it): heads, framing and connections, whatever the body.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { GatewayOptions } from "../../src/deno/mod.ts";
import { headerOf, okResponse, type RawUpstream, type Respond } from "./raw_upstream.ts";
import { sleep } from "./real_time.ts";

/** Registers a test of the suite (its name gets the client's). */
export type Register = (name: string, fn: () => Promise<void>) => void;

/** Runs a case through a gateway in front of a raw upstream answering with `respond`. */
export type Through = (
  respond: Respond,
  run: (base: string, upstream: RawUpstream) => Promise<void>,
  options?: Partial<GatewayOptions>,
) => Promise<void>;

/** Registers the cases of heads, framing and connections. */
export function connectionConformance(test: Register, through: Through): void {
  test("HEAD, 204 and 304 have no body, and their connection serves the next request", async () => {
    await through(async (req, conn) => {
      if (req.target === "/head") {
        await conn.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
      } else if (req.target === "/204") {
        await conn.write("HTTP/1.1 204 No Content\r\nX-Seen: 204\r\n\r\n");
      } else if (req.target === "/304") {
        // The length of the representation it stands for (RFC 9110 §8.6): no body follows.
        await conn.write(
          'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 1000\r\n\r\n',
        );
      } else {
        await conn.write(okResponse(`after ${req.method}`));
      }
    }, async (base, upstream) => {
      const head = await fetch(`${base}/head`, { method: "HEAD" });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), "");
      assert.equal((await fetch(`${base}/after`)).status, 200);
      const noContent = await fetch(`${base}/204`);
      assert.equal(noContent.status, 204);
      assert.equal(noContent.headers.get("x-seen"), "204");
      assert.equal(await noContent.text(), "");
      assert.equal(await (await fetch(`${base}/after`)).text(), "after GET");
      const notModified = await fetch(`${base}/304`, { headers: { "If-None-Match": '"v1"' } });
      assert.equal(notModified.status, 304);
      assert.equal(notModified.headers.get("etag"), '"v1"');
      assert.equal(await notModified.text(), "");
      assert.equal(await (await fetch(`${base}/after`)).text(), "after GET");
      assert.equal(upstream.requests.length, 6);
      assert.equal(upstream.accepted, 1, "every request on the first upstream connection");
    });
  });

  test("several Set-Cookie headers stay apart", async () => {
    const cookies = ["a=1; Path=/", "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "c=3; HttpOnly"];
    await through(async (_req, conn) => {
      await conn.write(okResponse("ok", cookies.map((c) => `Set-Cookie: ${c}\r\n`).join("")));
    }, async (base) => {
      const res = await fetch(`${base}/login`);
      assert.equal(await res.text(), "ok");
      assert.deepEqual(res.headers.getSetCookie(), cookies);
    });
  });

  const garbage: [string, string][] = [
    ["not HTTP", "this is not http\r\n\r\n"],
    ["a bad status code", "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n"],
    ["a bad Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello"],
    [
      "Content-Lengths that differ",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    ],
    ["binary", "\x00\x01\x02\xff\xfe\r\n\r\n"],
  ];
  for (const [what, bytes] of garbage) {
    test(`garbage from the upstream is a 502: ${what}`, async () => {
      await through(async (_req, conn) => {
        await conn.write(bytes);
        conn.close();
      }, async (base) => {
        const res = await fetch(`${base}/x`);
        assert.equal(res.status, 502);
        assert.equal(await res.text(), "Bad Gateway\n");
      });
    });
  }

  test("Content-Length with Transfer-Encoding: chunked is a 502, never a part of the body", async () => {
    await through(async (_req, conn) => {
      await conn.write(
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" +
          "b\r\nhello world\r\n0\r\n\r\n",
      );
    }, async (base) => {
      const res = await fetch(`${base}/smuggle`);
      assert.equal(res.status, 502);
      assert.doesNotMatch(await res.text(), /hello/);
    });
  });

  test("hop-by-hop headers stay on their hop, both ways, those Connection names too", async () => {
    await through(async (_req, conn) => {
      await conn.write(okResponse(
        "ok",
        [
          "Connection: X-Secret-Hop, keep-alive",
          "X-Secret-Hop: 1",
          "Keep-Alive: timeout=30",
          "Proxy-Authenticate: Basic",
          "Upgrade: h2c",
          "X-End-To-End: kept",
        ].map((h) => `${h}\r\n`).join(""),
      ));
    }, async (base, upstream) => {
      const res = await fetch(`${base}/hop`, {
        headers: {
          "Connection": "X-Hop",
          "X-Hop": "drop me",
          "Keep-Alive": "timeout=5",
          "TE": "trailers",
          "Proxy-Authorization": "Basic Zm9vOmJhcg==",
          "X-Forwarded-For": "10.0.0.1",
          "X-Client": "kept",
        },
      });
      assert.equal(await res.text(), "ok");
      for (const name of ["x-secret-hop", "keep-alive", "proxy-authenticate", "upgrade"]) {
        assert.equal(res.headers.get(name), null, name);
      }
      assert.equal(res.headers.get("x-end-to-end"), "kept");
      const req = upstream.requests[0]!;
      for (const name of ["x-hop", "keep-alive", "te", "proxy-authorization", "upgrade"]) {
        assert.equal(headerOf(req, name), null, name);
      }
      // Whatever the client says of its own connection: only persistence options, if anything.
      assert.match(headerOf(req, "connection") ?? "keep-alive", /^(keep-alive|close)$/i);
      assert.equal(headerOf(req, "x-client"), "kept");
      assert.equal(headerOf(req, "x-forwarded-for"), "10.0.0.1, 127.0.0.1");
      assert.equal(headerOf(req, "host"), new URL(upstream.url).host);
    });
  });

  test("connections are reused: 200 sequential requests, at most 10 upstream connections", async () => {
    await through(async (req, conn) => {
      await conn.write(okResponse(`ok ${req.target}`));
    }, async (base, upstream) => {
      for (let i = 0; i < 200; i++) {
        const res = await fetch(`${base}/n/${i}`);
        assert.equal(await res.text(), `ok /n/${i}`);
      }
      assert.ok(upstream.accepted <= 10, `${upstream.accepted} upstream connections`);
    });
  });

  test("interim responses (100, 103) are skipped: the client gets the final one", async () => {
    await through(async (_req, conn) => {
      await conn.write(
        "HTTP/1.1 100 Continue\r\n\r\n" +
          "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" +
          okResponse("final"),
      );
    }, async (base) => {
      const res = await fetch(`${base}/hints`, { method: "POST", body: "x" });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), "final");
    });
  });

  test("an upstream slower than the request timeout gives 504; the next request is served", async () => {
    await through(async (req, conn) => {
      if (req.target === "/slow") await sleep(600);
      if (!conn.closed) await conn.write(okResponse("late or not"));
    }, async (base) => {
      const slow = await fetch(`${base}/slow`);
      assert.equal(slow.status, 504);
      assert.equal(await slow.text(), "Gateway Timeout\n");
      const next = await fetch(`${base}/fast`);
      assert.equal(next.status, 200);
      assert.equal(await next.text(), "late or not");
    }, { requestTimeoutMs: 200 });
  });

  test("a kept-alive connection the upstream closed after answering: the next GET is served", async () => {
    await through(async (req, conn) => {
      await conn.write(okResponse(`ok ${req.target}`));
      // No `Connection: close` said: the upstream just goes (its keep-alive timeout, a restart).
      if (req.target === "/first") conn.close();
    }, async (base, upstream) => {
      assert.equal(await (await fetch(`${base}/first`)).text(), "ok /first");
      await sleep(20);
      assert.equal(await (await fetch(`${base}/second`)).text(), "ok /second");
      assert.equal(upstream.accepted, 2);
    });
  });
}
