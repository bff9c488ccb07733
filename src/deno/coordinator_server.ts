/**
 * `serveCoordinator()`: the remote coordinator on Deno. One
 * process holds every priority level's queue set (an `EmbeddedCoordinator`)
 * and serves the wire protocol of `src/protocol/PROTOCOL.md` over
 * WebSocket to any number of `apf()` middlewares and `apf serve` gateways.
 *
 * @module
 */

import { adaptiveOptionsOf } from "../coordinator/adaptive_limit.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import { levelsInMatchingOrder } from "../config/effective.ts";
import {
  DEFAULT_SERVER_CONCURRENCY_LIMIT,
  type EffectiveConfiguration,
  type FlowControlConfiguration,
  resolveConfiguration,
} from "../config/mod.ts";
import {
  type ConfigurationDiff,
  diffConfigurations,
  formatConfigurationDiff,
} from "../config/diff.ts";
import type { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import { type ClientConnection, SeatServer } from "../server/seat_server.ts";
import type { SessionStats } from "../server/sessions.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { adminRouter } from "../observe/admin_router.ts";
import { bearerTokenCheck } from "../observe/bearer_token.ts";
import { budgetStoreHandler } from "../budgets/http_store_handler.ts";
import { MemoryBudgetStore } from "../budgets/memory_store.ts";
import type { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import type { ListenAddress } from "./gateway_types.ts";
import { checkLimits, type ConnectionLimits } from "./_limits.ts";
import { type GuardedServer, serveGuarded } from "./http_server.ts";
import { exposeServerStats } from "./_server_metrics.ts";
import { checkNumber } from "../_shared/errors.ts";
import { adminListenerHandler } from "./_admin_listener.ts";

/** Where the coordinator listens when not told: `127.0.0.1:7070`. */
export const DEFAULT_COORDINATOR_LISTEN: ListenAddress = { hostname: "127.0.0.1", port: 7070 };

/**
 * Options of {@linkcode serveCoordinator}. The connection limits apply to
 * each listener: `headerTimeoutMs` until the WebSocket upgrade request is
 * in, `idleTimeoutMs` between admin requests, `maxConnections` to the HTTP
 * connections of each listener and, apart, to the clients' WebSockets
 * (an upgrade past it is answered 503).
 */
export interface CoordinatorServerOptions extends ConnectionLimits {
  /** The user objects (already validated, e.g. by `loadConfiguration`); default none. */
  configuration?: FlowControlConfiguration;
  /** Merge with the mandatory built-in objects only (default false). */
  mandatoryOnly?: boolean;
  /**
   * The server concurrency limit shared by every client (default 600), or
   * `"auto"` (or the adaptive controller's options): learned from how long
   * clients hold their seats (`docs/adaptive.md`).
   */
  serverConcurrencyLimit?: number | "auto" | GradientControllerOptions;
  /** Where clients connect (default `127.0.0.1:7070`). */
  listen?: ListenAddress;
  /**
   * Where the metrics, the dumps (Kubernetes' three plus `dump_sessions`:
   * client sessions and the seats taken back from them) and `POST /reload`
   * are served (default:
   * nowhere). With a token they require `Authorization: Bearer <token>`;
   * without one they listen on loopback only.
   */
  adminListen?: ListenAddress | null;
  /**
   * The shared secret clients present in `hello`. Without one the server
   * refuses to listen anywhere but loopback.
   */
  token?: string | null;
  /** Lease term of a granted seat in ms (default 30,000). */
  leaseMs?: number;
  /** How long a closed connection's seats wait for the client to resume, in ms (default 5,000). */
  graceMs?: number;
  /**
   * A client that stops reading is disconnected once this many bytes wait
   * to be sent to it (default 8 MiB): its session then keeps its seats for
   * the grace period, as after any disconnect.
   */
  maxBufferedBytes?: number;
  /**
   * A client that has not sent `hello` this many ms after its WebSocket
   * opened gets `error` `hello-expected` and is disconnected (default
   * 10,000).
   */
  helloTimeoutMs?: number;
  /** Reads the configuration again, for `reload()` without arguments (SIGHUP, `POST /reload`). */
  load?: () => Promise<FlowControlConfiguration>;
  /**
   * Told of every client refused at its `hello` for a wrong or missing
   * token (for the log): the name it gave, never what it presented.
   */
  onRefusedHandshake?: (client: string) => void;
  /** Told of every reload, from any source: what it changed, or why it was refused (for the log). */
  onReload?: (result: ReloadResult) => void;
  /** Told where each listener listens. */
  onListen?: (addr: Deno.NetAddr, which: "main" | "admin") => void;
  /** The clock (default: the system clock). */
  clock?: Clock;
}

/** What a reload did: applied with its changes, or refused (nothing changed). */
export type ReloadResult =
  | { applied: true; diff: ConfigurationDiff }
  | { applied: false; error: unknown };

/** A running coordinator server. */
export interface CoordinatorServer {
  /** Where clients connect. */
  readonly addr: Deno.NetAddr;
  /** Where the admin routes are, or `null`. */
  readonly adminAddr: Deno.NetAddr | null;
  /** The coordinator holding every level. */
  readonly coordinator: EmbeddedCoordinator;
  /**
   * The client sessions (connected or in their grace period) and the seats
   * taken back from them, counted since the server started.
   */
  readonly sessions: SessionStats;
  /** The metrics (flow control, plus the server's own). */
  readonly metrics: FlowcontrolMetrics;
  /**
   * Applies a new configuration (or what `load` reads), refused whole when
   * invalid, and sends it to every client. A configuration without any
   * user object, replacing one with some, is refused unless `allowEmpty`:
   * an empty file is more often a file cut short than a wish to drop every
   * FlowSchema. Resolves with what changed; `onReload` hears of it, and of a refusal.
   *
   * @throws {ConfigurationError} when it is invalid, {TypeError} when it is empty (without
   * `allowEmpty`); nothing changes then.
   */
  reload(
    configuration?: FlowControlConfiguration,
    options?: { allowEmpty?: boolean },
  ): Promise<ConfigurationDiff>;
  /** Resolves once the server stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting, answers waiters `unavailable`, closes every connection. Idempotent. */
  shutdown(): Promise<void>;
  /** Same as {@linkcode CoordinatorServer.shutdown}. */
  [Symbol.asyncDispose](): Promise<void>;
}

function objectCount(c: FlowControlConfiguration): number {
  return c.flowSchemas.length + c.priorityLevels.length;
}

/** Default of {@linkcode CoordinatorServerOptions.helloTimeoutMs}. */
const DEFAULT_HELLO_TIMEOUT_MS = 10_000;

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

function isLoopback(hostname: string): boolean {
  return LOOPBACK.has(hostname) || hostname.startsWith("127.");
}

/**
 * Starts a coordinator server, listening as soon as it returns.
 *
 * @throws {TypeError} when there is no token and `listen` is not a loopback address.
 * @example
 * ```ts ignore
 * import { serveCoordinator } from "@apf/edge/deno";
 * const server = serveCoordinator({ listen: { hostname: "127.0.0.1", port: 7070 } });
 * Deno.addSignalListener("SIGTERM", () => server.shutdown());
 * await server.finished;
 * ```
 */
export function serveCoordinator(options: CoordinatorServerOptions = {}): CoordinatorServer {
  const listen = options.listen ?? DEFAULT_COORDINATOR_LISTEN;
  const token = options.token ?? null;
  if (token === null && !isLoopback(listen.hostname)) {
    throw new TypeError(
      `Cannot serve the coordinator on ${listen.hostname}: without a token it listens on loopback only`,
    );
  }
  if (token !== null && (typeof token !== "string" || token.length < 16)) {
    throw new TypeError(
      "Cannot serve the coordinator: the token must be a string of 16 characters or more",
    );
  }
  const adminListen = options.adminListen ?? null;
  if (token === null && adminListen !== null && !isLoopback(adminListen.hostname)) {
    throw new TypeError(
      `Cannot serve the coordinator's admin routes on ${adminListen.hostname}: without a token they listen on loopback only`,
    );
  }
  // With a token, the admin routes ask for it too (Authorization: Bearer <token>).
  const authorize = token === null ? () => true : bearerTokenCheck(token);
  const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
  const limits = checkLimits("serve the coordinator", options);
  const helloTimeoutMs = options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
  checkNumber(
    helloTimeoutMs,
    (ms) => ms > 0,
    () =>
      `Cannot serve the coordinator: helloTimeoutMs must be a number > 0, got ${
        String(helloTimeoutMs)
      }`,
  );
  const clock = options.clock ?? systemClock;
  const mandatoryOnly = options.mandatoryOnly === true;
  const adaptive = adaptiveOptionsOf(options.serverConcurrencyLimit);
  // A learned limit starts from the default configuration; the server moves it.
  const serverConcurrencyLimit = typeof options.serverConcurrencyLimit === "number"
    ? options.serverConcurrencyLimit
    : DEFAULT_SERVER_CONCURRENCY_LIMIT;
  let user: FlowControlConfiguration = options.configuration ??
    { flowSchemas: [], priorityLevels: [] };
  const effectiveOf = (u: FlowControlConfiguration): EffectiveConfiguration =>
    resolveConfiguration(u, { mandatoryOnly, serverConcurrencyLimit });
  const wire = (): WireConfiguration => ({
    serverConcurrencyLimit,
    mandatoryOnly,
    objects: [...user.flowSchemas, ...user.priorityLevels],
  });

  const server = new SeatServer(effectiveOf(user), wire(), {
    clock,
    token,
    helloTimeoutMs,
    ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    ...(options.graceMs !== undefined && { graceMs: options.graceMs }),
    ...(options.onRefusedHandshake !== undefined &&
      { onRefusedHandshake: options.onRefusedHandshake }),
    ...(adaptive !== null && { adaptive }),
  });
  const { coordinator, sessions: host, metrics } = server;
  const slow = metrics.registry.counter({
    name: "apf_coordinator_slow_clients_total",
    help: "Connections closed because their client stopped reading",
  });
  const refusedSockets = metrics.registry.counter({
    name: "apf_coordinator_refused_connections_total",
    help: "WebSocket upgrades answered 503 because maxConnections clients were connected",
  });

  const sockets = new Set<WebSocket>();
  // Seat budgets: holders read and write their ledgers here over HTTP (`src/budgets/http_store.ts`).
  // Restarted, this store is empty: the holders then recover (`src/budgets/ledger.ts`).
  const budgets = budgetStoreHandler(new MemoryBudgetStore(), { authorize });
  const handler = (req: Request): Response | Promise<Response> => {
    const budget = budgets(req);
    if (budget !== null) return budget;
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response(
        "This is an APF coordinator: connect with a WebSocket, or use /budgets/.\n",
        {
          status: 426,
          headers: { Upgrade: "websocket" },
        },
      );
    }
    // An upgraded connection leaves the HTTP server's count: the cap on sockets is here.
    if (sockets.size >= limits.maxConnections) {
      refusedSockets.labels().inc();
      return new Response("Too many connections: try again later.\n", {
        status: 503,
        headers: { "Retry-After": "1", Connection: "close" },
      });
    }
    const { socket, response } = Deno.upgradeWebSocket(req);
    let open = true;
    const detach = (): void => {
      if (!open) return;
      open = false;
      sockets.delete(socket);
      connection.closed();
    };
    const connection: ClientConnection = server.connect({
      send: (text) => {
        socket.send(text);
        // Backpressure: what a client does not read piles up here; cut it off.
        if (socket.bufferedAmount > maxBuffered && socket.readyState === WebSocket.OPEN) {
          slow.labels().inc();
          // A client that does not read will not answer the closing handshake either:
          // its session is detached now, not when the socket finally closes.
          detach();
          socket.close(1008, "slow consumer");
        }
      },
      close: (code, reason) => socket.close(code, reason),
    });
    sockets.add(socket);
    socket.onmessage = (e) => connection.receive(e.data);
    socket.onclose = detach;
    socket.onerror = () => {};
    // Deno forgets a close() made before the upgrade completes: close again once open.
    socket.onopen = () => {
      if (stopping !== null) socket.close(1001, "shutting down");
    };
    return response;
  };

  const reload = async (
    next?: FlowControlConfiguration,
    reloadOptions: { allowEmpty?: boolean } = {},
  ): Promise<ConfigurationDiff> => {
    try {
      const diff = await apply(next, reloadOptions.allowEmpty === true);
      options.onReload?.({ applied: true, diff });
      return diff;
    } catch (error) {
      options.onReload?.({ applied: false, error });
      throw error;
    }
  };
  const apply = async (
    next: FlowControlConfiguration | undefined,
    allowEmpty: boolean,
  ): Promise<ConfigurationDiff> => {
    const candidate = next ?? (options.load === undefined ? user : await options.load());
    if (
      !allowEmpty && objectCount(candidate) === 0 && objectCount(user) > 0
    ) {
      throw new TypeError(
        `Cannot reload the configuration: it has no FlowSchema and no PriorityLevelConfiguration, and would drop all ${
          objectCount(user)
        } of the current one (reload with allowEmpty to mean it)`,
      );
    }
    // Validated whole by resolveConfiguration and configure(); nothing changes on error.
    const effective = effectiveOf(candidate);
    const diff = diffConfigurations(user, candidate);
    const previous = user;
    user = candidate;
    try {
      server.configure(effective, wire());
    } catch (e) {
      user = previous;
      throw e;
    }
    return diff;
  };

  const servers: GuardedServer[] = [];
  try {
    // Sockets time out on real time; `clock` is the protocol's (leases, grace, hello).
    servers.push(serveGuarded(handler, {
      ...limits,
      name: "listen",
      hostname: listen.hostname,
      port: listen.port,
      webSocket: true,
      onListen: (addr) => options.onListen?.(addr, "main"),
    }));
    if (adminListen !== null) {
      const admin = adminRouter({
        snapshot: (o) => coordinator.snapshot(o),
        adaptiveSnapshot: () => server.adaptive?.snapshot() ?? null,
        metrics,
        levelOrder: () => levelsInMatchingOrder(coordinator.configuration),
        sessions: () => host.snapshot(),
        reload: async ({ allowEmpty }) => {
          try {
            return {
              applied: true,
              summary: formatConfigurationDiff(await reload(undefined, { allowEmpty })),
            };
          } catch (e) {
            return { applied: false, reason: e instanceof Error ? e.message : String(e) };
          }
        },
      }, { authorize, clock });
      servers.push(serveGuarded(adminListenerHandler(admin), {
        ...limits,
        name: "adminListen",
        hostname: adminListen.hostname,
        port: adminListen.port,
        onListen: (addr) => options.onListen?.(addr, "admin"),
      }));
    }
  } catch (e) {
    for (const listener of servers) void listener.shutdown();
    server.close();
    throw e;
  }

  exposeServerStats(metrics.registry, [
    { listener: "main", server: servers[0]! },
    ...(servers[1] === undefined ? [] : [{ listener: "admin", server: servers[1] }]),
  ]);

  let stopping: Promise<void> | null = null;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      // Waiters hear "unavailable" (flushed with the tick's decisions) before sockets close.
      coordinator.close();
      for (let i = 0; i < 10; i++) await Promise.resolve(); // decisions are sent per microtask tick
      server.close();
      for (const socket of sockets) socket.close(1001, "shutting down");
      await Promise.all(servers.map((s) => s.shutdown()));
    })();
    return stopping;
  };
  const finished = Promise.all(servers.map((s) => s.finished)).then(() => shutdown());
  return {
    addr: servers[0]!.addr,
    adminAddr: servers[1]?.addr ?? null,
    coordinator,
    sessions: host.stats,
    metrics,
    reload,
    finished,
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}
