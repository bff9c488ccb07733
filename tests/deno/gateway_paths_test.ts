import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import { SMUGGLING_PATHS } from "../_helpers/paths.ts";
import { testUpstream } from "../_helpers/upstream.ts";

/** Sends one raw HTTP/1.1 request line (the path exactly as written) and returns the response. */
async function rawGet(addr: Deno.NetAddr, path: string): Promise<string> {
  const conn = await Deno.connect({ hostname: addr.hostname, port: addr.port });
  await conn.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`),
  );
  return await new Response(conn.readable).text();
}

Deno.test("the gateway refuses a path it would forward differently from how it classifies it", async () => {
  const upstream = testUpstream();
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
  });
  try {
    for (const path of SMUGGLING_PATHS) {
      const raw = await rawGet(gateway.addr, path);
      assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/, path);
      assert.match(raw, /\r\n\r\nBad Request: /, path);
    }
    assert.equal(upstream.handled, 0, "nothing reached the upstream");
    // A normal path with dots in its names is served.
    const raw = await rawGet(gateway.addr, "/apis/apps.k8s.io/v1/x.json");
    assert.match(raw, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(upstream.received.at(-1)?.url, `${upstream.url}/apis/apps.k8s.io/v1/x.json`);
  } finally {
    await upstream.close();
  }
});
