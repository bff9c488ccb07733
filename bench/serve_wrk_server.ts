/**
 * The servers of bench/serve_wrk.sh: one app on one HTTP server per
 * process, to compare the servers `apf serve` and `apf coordinator` could
 * run on.
 *
 * - `upstream <port>`: `Deno.serve`, every request → `hello`;
 * - `<server> <app> <port> [upstream]`, with `<server>` one of
 *   - `deno`: `Deno.serve` (no timeouts, no cap; dies on EMFILE),
 *   - `guarded`: `serveGuarded()` (on `Deno.serve`'s per-connection server),
 *   - `guarded-ws`: `serveGuarded({ webSocket: true })` (on `Deno.serveHttp`),
 *   - `node`: `node:http` with its timeouts, through the minimal adapter
 *     below (Web `Request` with a streamed body and an abort signal, Web
 *     `Response` streamed back with backpressure);
 *
 *   and `<app>` one of `hello` (Hono, `GET *` → `hello`), `proxy` (Hono, the
 *   only handler `fetch`es the upstream: the gateway's performance
 *   baseline), `raw-proxy` (no Hono: the pooled HTTP/1.1 client's response
 *   passed on as it comes, the floor of a proxy here), `gateway` (what `serveGateway()` builds: `apf()` with the
 *   front-proxy identity, then the reverse proxy) or `gateway-base` (the
 *   same from another checkout, `APF_BASELINE=<dir>`, e.g. from `git
 *   archive`, to compare a change with what it replaces in one run).
 *
 * Run: `deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/serve_wrk_server.ts <args>`.
 *
 * @module
 */

import * as http from "node:http";
import { Readable } from "node:stream";
import { Hono } from "hono";
import { frontProxyIdentity } from "../src/classify/identity_resolvers.ts";
import { systemClock } from "../src/fairqueuing/clock.ts";
import { apf } from "../src/hono/mod.ts";
import { reverseProxy } from "../src/deno/_proxy.ts";
import { http1UpstreamClient } from "../src/deno/upstream_client.ts";
import type { GatewayEnv } from "../src/deno/gateway_types.ts";
import { type GuardedHandler, serveGuarded } from "../src/deno/http_server.ts";

const [server, app, portText, upstream] = Deno.args;
const hostname = "127.0.0.1";

if (server === "upstream") {
  Deno.serve({ hostname, port: Number(app), onListen() {} }, () => new Response("hello"));
} else {
  const port = Number(portText);
  const handler = await appOf(app!, upstream);
  switch (server) {
    case "deno":
      Deno.serve({ hostname, port, onListen() {} }, handler);
      break;
    case "guarded":
    case "guarded-ws":
      serveGuarded(handler, { hostname, port, webSocket: server === "guarded-ws" });
      break;
    case "node":
      serveNode(handler, port);
      break;
    default:
      throw new TypeError(`Cannot start: unknown server ${server}`);
  }
}

async function appOf(name: string, upstream: string | undefined): Promise<GuardedHandler> {
  if (name === "hello") {
    const hono = new Hono().get("*", (c) => c.text("hello"));
    return (req, info) => hono.fetch(req, info);
  }
  if (upstream === undefined) throw new TypeError(`Cannot start ${name}: give the upstream`);
  const origin = new URL(upstream).origin;
  if (name === "proxy") {
    const hono = new Hono().all("*", (c) => {
      const url = c.req.url;
      return fetch(origin + url.slice(url.indexOf("/", url.indexOf("//") + 2)), {
        method: c.req.method,
        body: c.req.raw.body,
      });
    });
    return (req, info) => hono.fetch(req, info);
  }
  if (name === "raw-proxy") {
    // No Hono, no APF: the pooled client's request passed on as it comes (the floor of a proxy
    // on this server and client).
    const client = http1UpstreamClient();
    return (req) => {
      const url = req.url;
      return client.fetch(origin + url.slice(url.indexOf("/", url.indexOf("//") + 2)), {
        method: req.method,
        headers: [],
        body: req.body,
      });
    };
  }
  if (name === "gateway" || name === "gateway-base") {
    const clock = systemClock;
    const base = name === "gateway-base" ? Deno.env.get("APF_BASELINE") : undefined;
    const m = base === undefined ? { apf, reverseProxy, frontProxyIdentity } : {
      apf: (await import(`${base}/src/hono/mod.ts`)).apf as typeof apf,
      reverseProxy: (await import(`${base}/src/deno/_proxy.ts`))
        .reverseProxy as typeof reverseProxy,
      frontProxyIdentity: (await import(`${base}/src/classify/identity_resolvers.ts`))
        .frontProxyIdentity as typeof frontProxyIdentity,
    };
    const hono = new Hono<GatewayEnv>()
      .use(m.apf<GatewayEnv>({ requestTimeoutMs: 60_000, clock, identify: m.frontProxyIdentity() }))
      .all(
        "*",
        m.reverseProxy(new URL(upstream), {
          clock,
          requestTimeoutMs: 60_000,
          // The gateway's default client (a baseline checkout without one ignores it).
          client: http1UpstreamClient({ clock }),
        }),
      );
    return (req, info) => hono.fetch(req, info);
  }
  throw new TypeError(`Cannot start: unknown app ${name}`);
}

/** `handler` on `node:http`, with the limits `serveGuarded` has by default. */
function serveNode(handler: GuardedHandler, port: number): void {
  const server = http.createServer({
    headersTimeout: 10_000,
    requestTimeout: 0,
    keepAliveTimeout: 75_000,
  }, (req, res) => {
    const abort = new AbortController();
    const headers = new Headers();
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    const body = req.method === "GET" || req.method === "HEAD"
      ? null
      : Readable.toWeb(req) as ReadableStream<Uint8Array>;
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const request = new Request(`http://${req.headers.host ?? hostname}${req.url}`, {
      method: req.method!,
      headers,
      signal: abort.signal,
      ...(body !== null && { body, duplex: "half" }),
    } as RequestInit);
    const remoteAddr: Deno.NetAddr = {
      transport: "tcp",
      hostname: req.socket.remoteAddress!,
      port: req.socket.remotePort!,
    };
    Promise.resolve(handler(request, { remoteAddr })).then(
      (response) => writeResponse(res, response),
      () => res.writeHead(500).end(),
    );
  });
  server.maxConnections = 10_000;
  server.listen(port, hostname);
}

async function writeResponse(res: http.ServerResponse, response: Response): Promise<void> {
  const flat: string[] = [];
  for (const [name, value] of response.headers) flat.push(name, value);
  res.writeHead(response.status, flat);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((resolve) => res.once("drain", resolve));
    }
    res.end();
  } catch (e) {
    res.destroy(e as Error);
  }
}
