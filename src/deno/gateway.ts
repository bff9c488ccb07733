/**
 * `serveGateway()`: an APF gateway in front of any HTTP upstream, on Deno.
 * Each request is classified and waits for seats (`apf()` with an embedded
 * coordinator), then is proxied with its body streamed both ways. The
 * admin routes are served only on their own listener.
 *
 * @module
 */

import { Hono } from "hono";
import { frontProxyIdentity } from "../classify/identity_resolvers.ts";
import { systemClock } from "../fairqueuing/clock.ts";
import { Deadlines } from "../fairqueuing/deadlines.ts";
import { apf, type ApfOptions } from "../hono/mod.ts";
import { adminRouter } from "../observe/admin_router.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../coordinator/seat_request.ts";
import { reverseProxy } from "./_proxy.ts";
import { checkLimits } from "./_limits.ts";
import type { Gateway, GatewayEnv, GatewayOptions, ListenAddress } from "./gateway_types.ts";
import {
  type GuardedHandler,
  type GuardedServer,
  internalError,
  serveDriven,
  serveGuarded,
} from "./http_server.ts";
import { UpstreamBodyFailed } from "./_upstream_body.ts";
import { type ConnectionDriver, nativeDriver } from "./_deno_http.ts";
import { gatewayDriver } from "./_gateway_server.ts";
import { gatewayExchange } from "./_gateway_exchange.ts";
import { admissionOf } from "../hono/admission.ts";
import { exposeServerStats } from "./_server_metrics.ts";
import { valueError } from "../_shared/errors.ts";
import { adminListenerHandler } from "./_admin_listener.ts";
import {
  fetchUpstreamClient,
  http1UpstreamClient,
  type UpstreamClient,
} from "./upstream_client.ts";

/** Where the gateway listens when not told: `127.0.0.1:8080`. */
export const DEFAULT_GATEWAY_LISTEN: ListenAddress = { hostname: "127.0.0.1", port: 8080 };

/**
 * Starts the gateway: listening as soon as it returns. Needs `--allow-net`
 * for the listeners and the upstream. Requests reach the upstream through
 * the pooled HTTP/1.1 client, or Deno's `fetch` with `upstreamClient:
 * "fetch"`; shutting down closes the client's connections once the
 * requests in flight are done. Both listeners run on
 * {@linkcode serveGuarded}: idle and half-sent connections are closed after
 * the header and idle timeouts, connections past `maxConnections` are
 * answered 503, and running out of file descriptors slows accepting down
 * without stopping it.
 *
 * @throws {TypeError} when `upstream` is not an `http:` or `https:` URL without query and fragment.
 * @throws {ConfigurationError} for an invalid configuration; {TypeError} or {RangeError} for a bad option.
 * @example
 * ```ts ignore
 * import { serveGateway } from "@apf/edge/deno";
 * const gateway = serveGateway({
 *   upstream: "http://127.0.0.1:3000",
 *   listen: { hostname: "127.0.0.1", port: 8080 },
 *   adminListen: { hostname: "127.0.0.1", port: 9090 },
 *   trustIdentityHeaders: true,
 * });
 * Deno.addSignalListener("SIGTERM", () => gateway.shutdown());
 * await gateway.finished;
 * ```
 */
export function serveGateway(options: GatewayOptions): Gateway {
  const upstream = upstreamUrl(options.upstream);
  const listen = checkAddress("listen", options.listen ?? DEFAULT_GATEWAY_LISTEN);
  const adminListen = options.adminListen == null
    ? null
    : checkAddress("adminListen", options.adminListen);
  const clock = options.clock ?? systemClock;
  const limits = checkLimits("serve the gateway", options);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const clientKind = options.upstreamClient ?? "http1";
  if (clientKind !== "http1" && clientKind !== "fetch") {
    throw new TypeError(
      `Cannot serve the gateway: upstreamClient must be "http1" or "fetch", got ${
        JSON.stringify(clientKind)
      }`,
    );
  }
  const apfOptions: ApfOptions<GatewayEnv> = {
    requestTimeoutMs,
    clock,
    ...(options.config !== undefined && { config: options.config }),
    ...(options.serverConcurrencyLimit !== undefined &&
      { serverConcurrencyLimit: options.serverConcurrencyLimit }),
    ...(options.trustIdentityHeaders === true && { identify: frontProxyIdentity() }),
    ...(options.coordinator !== undefined && { coordinator: options.coordinator }),
  };
  const middleware = apf<GatewayEnv>(apfOptions);
  const onError = options.onUpstreamError;
  let client: UpstreamClient;
  let driver: ConnectionDriver | null;
  let handler: GuardedHandler;
  // Upstream deadlines come and go with every request: the set keeps its timer (closed below).
  const deadlines = new Deadlines(clock, { keepTimer: true });
  if (clientKind === "http1") {
    // The gateway's own HTTP/1.1 server: the request is admitted by the middleware's admission
    // and the upstream's reply passed on as read (no Request or Response per request).
    const http1 = http1UpstreamClient({ clock });
    client = http1;
    driver = gatewayDriver(gatewayExchange({
      upstream,
      admission: admissionOf(middleware),
      client: http1,
      clock,
      requestTimeoutMs,
      onError,
      deadlines,
    }));
    handler = () => new Response(null, { status: 500 }); // not called: the driver has its own
  } else {
    // On Deno.serve, through Hono: what `fetch` answers is a Response already.
    client = fetchUpstreamClient();
    driver = nativeDriver();
    const app = new Hono<GatewayEnv>();
    app.use(middleware);
    app.all("*", reverseProxy(upstream, { clock, requestTimeoutMs, onError, client, deadlines }));
    handler = (req, info) => app.fetch(req, info);
  }

  const onListen = options.onListen;
  const servers: GuardedServer[] = [];
  try {
    // Sockets time out on real time: `clock` is the queues' and the upstream deadline's.
    servers.push(serveDriven(driver, handler, {
      ...limits,
      name: "listen",
      hostname: listen.hostname,
      port: listen.port,
      onListen: (addr) => onListen?.(addr, "main"),
      onError: mainListenerError,
    }));
    if (adminListen !== null) {
      // The admin listener is the operators' own: who reaches it may read it.
      const admin = adminRouter(middleware, { authorize: () => true, clock });
      servers.push(serveGuarded(adminListenerHandler(admin), {
        ...limits,
        name: "adminListen",
        hostname: adminListen.hostname,
        port: adminListen.port,
        onListen: (addr) => onListen?.(addr, "admin"),
      }));
    }
  } catch (e) {
    // The main listener is up but the admin one failed (port taken): stop it too.
    for (const server of servers) void server.shutdown();
    middleware.close();
    deadlines.stopKeepingTimer();
    void client.close();
    throw e;
  }

  // With an embedded coordinator made here, its metrics are this gateway's own: show the
  // listeners' connections there too (a coordinator passed in may serve other gateways).
  const unexpose = options.coordinator === undefined && middleware.metrics !== null
    ? exposeServerStats(middleware.metrics.registry, [
      { listener: "main", server: servers[0]! },
      ...(servers[1] === undefined ? [] : [{ listener: "admin", server: servers[1] }]),
    ])
    : () => {};

  let stopping: Promise<void> | null = null;
  const shutdown = (): Promise<void> => {
    stopping ??= Promise.all(servers.map((s) => s.shutdown())).then(() => {
      unexpose();
      middleware.close();
      // A body still read to its end for a client that left keeps its deadline.
      deadlines.stopKeepingTimer();
      // In-flight requests are done: what the client holds now is idle.
      return client.close();
    });
    return stopping;
  };
  const finished = Promise.all(servers.map((s) => s.finished)).then(() => shutdown());
  return {
    addr: servers[0]!.addr,
    adminAddr: servers[1]?.addr ?? null,
    middleware,
    finished,
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}

function upstreamUrl(upstream: string | URL): URL {
  let url: URL | null = null;
  try {
    url = new URL(upstream);
  } catch {
    // reported below
  }
  if (
    url === null || (url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" ||
    url.hash !== "" || url.username !== "" || url.password !== ""
  ) {
    throw new TypeError(
      `Cannot serve the gateway: upstream must be an http: or https: URL without credentials, query or fragment, got ${
        JSON.stringify(String(upstream))
      }`,
    );
  }
  return url;
}

function checkAddress(name: string, addr: ListenAddress): ListenAddress {
  const shaped = typeof addr === "object" && addr !== null && typeof addr.hostname === "string" &&
    addr.hostname !== "";
  const port: unknown = shaped ? addr.port : undefined;
  if (!shaped || !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) {
    const message =
      `Cannot serve the gateway: ${name} must be { hostname, port } with a port in 0..65535, got ${
        JSON.stringify(addr)
      }`;
    throw shaped ? valueError(port, message) : new TypeError(message);
  }
  return addr;
}

/**
 * What the main listener answers when its handler or a response body
 * fails: a body the upstream cut short was reported already (to
 * `onUpstreamError`) and its head is out, so it is not a failure of ours
 * to log; anything else is.
 */
function mainListenerError(error: unknown): Response {
  return error instanceof UpstreamBodyFailed
    ? new Response(null, { status: 502 })
    : internalError(error);
}
