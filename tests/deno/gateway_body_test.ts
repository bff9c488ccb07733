/**
 * Response bodies of known length through the gateway: one whose bytes are
 * all there is passed on whole, one that trickles is streamed as it comes,
 * and either way the seat follows the upstream.
 */

import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import { smallConfig } from "./_helpers.ts";
import { sleep } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { testUpstream } from "../_helpers/upstream.ts";

const TWO_SEATS = smallConfig(tenantsManifest({ shares: 95, reject: true }), 2);

function seatsInUse(gateway: ReturnType<typeof serveGateway>): number {
  return gateway.middleware.snapshot()!.levels.find((l) => l.name === "tenants")!.queueSet
    .seatsInUse;
}

/** A body of `Content-Length: 12` whose second half comes only once `release()` is called. */
function trickling() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let ended = false;
  const response = () =>
    new Response(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode("first;"));
          await released;
          controller.enqueue(new TextEncoder().encode("second"));
          controller.close();
          ended = true;
        },
      }),
      { headers: { "content-length": "12" } },
    );
  return {
    response,
    release,
    get ended() {
      return ended;
    },
  };
}

Deno.test("a body of known length streams as it comes and keeps its seat until it has ended", async () => {
  const body = trickling();
  const upstream = testUpstream({
    handle: (req) =>
      new URL(req.url).pathname === "/whole" ? new Response("hello whole") : body.response(),
  });
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    config: TWO_SEATS,
  });
  try {
    const base = `http://127.0.0.1:${gateway.addr.port}`;
    const whole = await fetch(`${base}/whole`);
    assert.equal(whole.headers.get("content-length"), "11");
    assert.equal(await whole.text(), "hello whole");
    assert.equal(seatsInUse(gateway), 0);

    const res = await fetch(`${base}/trickle`);
    assert.equal(res.headers.get("content-length"), "12");
    const reader = res.body!.getReader();
    // Buffering would wait for the whole body, which only comes after this first part.
    const first = await Promise.race([reader.read(), sleep(5_000).then(() => "timeout" as const)]);
    assert.notEqual(first, "timeout", "the first part did not arrive before the body ended");
    let text = new TextDecoder().decode((first as ReadableStreamReadResult<Uint8Array>).value);
    assert.equal(seatsInUse(gateway), 1, "held while the body is still coming");
    body.release();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    assert.equal(text, "first;second");
    while (seatsInUse(gateway) > 0) await sleep(5);
  } finally {
    body.release();
    await upstream.close();
  }
});

Deno.test("a client gone while a body of known length trickles: the seat waits for the upstream's end", async () => {
  const body = trickling();
  const upstream = testUpstream({ handle: () => body.response() });
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    config: TWO_SEATS,
  });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gateway.addr.port });
    await conn.write(new TextEncoder().encode("GET /work HTTP/1.1\r\nHost: gw\r\n\r\n"));
    const buf = new Uint8Array(4096);
    assert.ok((await conn.read(buf))! > 0, "the response began");
    conn.close();
    await sleep(50);
    assert.equal(seatsInUse(gateway), 1, "held while the upstream is still sending");
    body.release();
    while (!body.ended) await sleep(5);
    while (seatsInUse(gateway) > 0) await sleep(5);
  } finally {
    body.release();
    await upstream.close();
  }
});
