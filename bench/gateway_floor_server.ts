/**
 * Two floors under `apf serve` for `bench/gateway_nginx.sh` (variants
 * `deno-relay` and `http-only`): what Deno does in front of the same
 * upstream with less than the gateway does.
 *
 * - `relay`: a raw socket relay, one upstream connection per client
 *   connection, each request's bytes written upstream as read and the
 *   upstream's bytes written back: no parsing at all. It takes a request and
 *   its response to come in one read each, which holds for the bench's
 *   `GET /` and its `hello`, and for nothing else.
 * - `http`: the gateway's own HTTP/1.1 server (`src/deno/_gateway_server.ts`)
 *   and the pooled HTTP/1.1 client (`src/deno/upstream_client.ts`), as `apf
 *   serve` runs them, with no APF: no admission, no forwarded or APF header
 *   fields, no deadline. The request goes upstream with none of its fields.
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/gateway_floor_server.ts <relay|http> <port> <upstream port>`.
 *
 * @module
 */

import { gatewayDriver, type GatewayReply } from "../src/deno/_gateway_server.ts";
import { http1UpstreamClient } from "../src/deno/upstream_client.ts";

const [mode, port, upstreamPort] = Deno.args;
if ((mode !== "relay" && mode !== "http") || port === undefined || upstreamPort === undefined) {
  throw new TypeError("Cannot serve: give relay or http, a port and the upstream's port");
}
const upstream = { hostname: "127.0.0.1", port: Number(upstreamPort) };

/** One client connection relayed to a connection of its own upstream. */
async function relay(client: Deno.TcpConn): Promise<void> {
  let up: Deno.TcpConn | null = null;
  try {
    up = await Deno.connect(upstream);
    up.setNoDelay(true);
    const request = new Uint8Array(16 * 1024);
    const response = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await client.read(request);
      if (n === null) break;
      await up.write(request.subarray(0, n));
      const m = await up.read(response);
      if (m === null) break;
      await client.write(response.subarray(0, m));
    }
  } catch {
    // A connection reset ends the relay.
  } finally {
    for (const conn of [client, up]) {
      try {
        conn?.close();
      } catch {
        // Closed already.
      }
    }
  }
}

const client = http1UpstreamClient();
const base = client.base(`http://127.0.0.1:${upstreamPort}`);
const driver = gatewayDriver(async (req): Promise<GatewayReply> => {
  try {
    const reply = await client.sendTo(base, req.target, {
      method: req.method,
      headers: [],
      body: req.body,
    });
    return {
      status: reply.status,
      statusText: reply.statusText,
      fields: reply.fields,
      body: reply.body,
      lengthInFields: reply.length !== null,
    };
  } catch {
    return { status: 502, statusText: "", fields: [], body: null, lengthInFields: false };
  }
});
const hooks = { requestStarted() {}, requestEnded() {}, upgraded() {} };
const onError = () => new Response(null, { status: 500 });

// Ends at once on SIGINT (as `bench/gateway_instructions.sh` stops it, for valgrind to write its count).
Deno.addSignalListener("SIGINT", () => Deno.exit(0));
const listener = Deno.listen({ hostname: "127.0.0.1", port: Number(port) });
for await (const conn of listener) {
  if (mode === "relay") void relay(conn);
  else driver(conn, () => onError(), onError, hooks);
}
