/**
 * `serveGuarded()`: an HTTP server for Deno whose idle connections cannot
 * use up the process's file descriptors. `Deno.serve` keeps every
 * connection, even one that never sends a byte, until the client closes it,
 * accepts without limit, and ends its accept loop (rejecting `finished`) on
 * the first accept error, `EMFILE` included. This server accepts in its own
 * loop and adds:
 *
 * - a header timeout: a connection that has not completed its first request
 *   head in time is closed (slowloris, or nothing sent at all);
 * - an idle timeout: a keep-alive connection with no request in flight is
 *   closed once it waited that long for the next one;
 * - a connection cap: past it a new connection is answered `503` with
 *   `Connection: close` and closed, counted in `stats.refused`;
 * - an accept loop that survives `EMFILE` and `ENFILE`: it backs off (5 ms,
 *   doubling up to 1 s, as Go's `http.Server.Serve` does) and retries,
 *   counted in `stats.acceptErrors`, while the timeouts free descriptors.
 *
 * Each accepted connection is handed to Deno's own per-connection HTTP
 * server (`_deno_http.ts`), so requests take `Deno.serve`'s path: requests
 * and responses stream both ways, `req.signal` aborts when the client goes
 * away, and throughput is `Deno.serve`'s (`bench/RESULTS.md`). Deno does
 * not export that server in its types: on a Deno without it this falls
 * back to plain `Deno.serve`, with a warning and `guarded` false. The
 * timeouts close a connection without a `408`: the HTTP parser holds the
 * connection's bytes, not this module.
 *
 * @module
 */

import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import { type ConnectionDriver, nativeDriver, upgradingDriver } from "./_deno_http.ts";
import { type ExpiryReason, GuardedConnection } from "./_guarded_connection.ts";
import { checkLimits, type ConnectionLimits } from "./_limits.ts";
import { refuse } from "./_refusal.ts";
import { serveUnguarded } from "./_unguarded_server.ts";

export type { ConnectionLimits } from "./_limits.ts";
export {
  DEFAULT_HEADER_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
} from "./_limits.ts";

/** A request handler: the request, and the client's address. */
export type GuardedHandler = (
  req: Request,
  info: { readonly remoteAddr: Deno.NetAddr },
) => Response | Promise<Response>;

/** Options of {@linkcode serveGuarded}. */
export interface GuardedServeOptions extends ConnectionLimits {
  /** The address to listen on (`0.0.0.0` or `::` for every interface). */
  hostname: string;
  /** The TCP port; 0 lets the system choose one (read it from `addr`). */
  port: number;
  /**
   * The handler upgrades requests with `Deno.upgradeWebSocket` (default
   * false). Connections are then served by Deno's per-connection server
   * that keeps an upgraded connection open (`Deno.serveHttp`), slower than
   * the default one, which closes it. An upgraded connection leaves the
   * server's count and timeouts: it is the handler's.
   */
  webSocket?: boolean;
  /** Called once, as soon as the server listens. */
  onListen?: (addr: Deno.NetAddr) => void;
  /** What this listener is (an option or flag name), named when it cannot listen. */
  name?: string;
  /** Answers a request whose handler threw (default: logs it, answers 500). */
  onError?: (error: unknown) => Response | Promise<Response>;
  /** The clock of the timeouts and of the accept back-off (default: the system clock). */
  clock?: Clock;
}

/** What a {@linkcode GuardedServer} has done so far. */
export interface GuardedServerStats {
  /** Connections open now (refused ones not included). */
  readonly open: number;
  /** Connections accepted and served. */
  readonly accepted: number;
  /** Connections answered 503 because `maxConnections` were open. */
  readonly refused: number;
  /** Failed accepts (`EMFILE`, `ENFILE`, …), each followed by a back-off. */
  readonly acceptErrors: number;
  /** Connections closed by the header timeout. */
  readonly headerTimeouts: number;
  /** Connections closed by the idle timeout. */
  readonly idleTimeouts: number;
}

/** A running {@linkcode serveGuarded} server. */
export interface GuardedServer extends AsyncDisposable {
  /** Where it listens. */
  readonly addr: Deno.NetAddr;
  /**
   * False when this Deno lacks the per-connection server this module runs
   * on: it then runs on plain `Deno.serve`, without timeouts, cap or
   * back-off (a warning says so once).
   */
  readonly guarded: boolean;
  /** Counts since the start. */
  readonly stats: GuardedServerStats;
  /** Settles once the server stopped after {@linkcode GuardedServer.shutdown}; never rejects. */
  readonly finished: Promise<void>;
  /**
   * Stops accepting, closes idle connections (and half-received requests)
   * at once, lets in-flight requests finish, then closes their connections;
   * resolves when every connection is closed. Idempotent.
   */
  shutdown(): Promise<void>;
}

const LINGERING_REFUSALS = 64;
const REFUSAL_LINGER_MS = 1_000;
const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 1_000;

/**
 * Serves `handler` on `options.hostname:options.port` with header and idle
 * timeouts, a connection cap and an accept loop that survives `EMFILE`
 * (see the module's documentation). Needs `--allow-net`.
 *
 * @example
 * ```ts ignore
 * import { serveGuarded } from "@apf/edge/deno";
 * const server = serveGuarded(() => new Response("hello"), {
 *   hostname: "127.0.0.1",
 *   port: 8080,
 *   headerTimeoutMs: 10_000,
 *   idleTimeoutMs: 75_000,
 *   maxConnections: 10_000,
 * });
 * Deno.addSignalListener("SIGTERM", () => server.shutdown());
 * await server.finished;
 * ```
 *
 * @throws {RangeError} for a timeout that is not > 0, or a cap that is not an integer >= 1
 * ({TypeError}: not a number).
 * @throws {Deno.errors.AddrInUse} and the like when the address cannot be listened on: the
 * same class, its message naming the address (and `name`).
 */
export function serveGuarded(handler: GuardedHandler, options: GuardedServeOptions): GuardedServer {
  const driver = options.webSocket === true ? upgradingDriver() : nativeDriver();
  return serveDriven(driver, handler, options);
}

/**
 * {@linkcode serveGuarded} with the HTTP of each connection served by
 * `driver` (the gateway's own HTTP/1.1 server), `handler` being what it is
 * given; on plain `Deno.serve` when `driver` is `null`.
 */
export function serveDriven(
  driver: ConnectionDriver | null,
  handler: GuardedHandler,
  options: GuardedServeOptions,
): GuardedServer {
  const limits = checkLimits("serve", options);
  let listener: Deno.TcpListener;
  try {
    if (driver === null) return serveUnguarded(handler, options);
    listener = Deno.listen({ hostname: options.hostname, port: options.port });
  } catch (e) {
    throw listenError(e, options);
  }
  const server = new Guarded(listener, driver, handler, {
    ...limits,
    clock: options.clock ?? systemClock,
    onError: options.onError ?? internalError,
  });
  try {
    options.onListen?.(listener.addr);
  } catch (e) {
    void server.shutdown();
    throw e;
  }
  return server;
}

/**
 * `e` with a message that says where: "Address already in use (os error
 * 98)" names neither the address nor the setting it came from.
 */
function listenError(e: unknown, options: GuardedServeOptions): unknown {
  if (!(e instanceof Error)) return e;
  const where = `${options.hostname}:${options.port}${
    options.name === undefined ? "" : ` (${options.name})`
  }`;
  const Same = e.constructor as new (message: string, init: { cause: unknown }) => Error;
  try {
    return new Same(`Cannot listen on ${where}: ${e.message}`, { cause: e });
  } catch {
    return new Error(`Cannot listen on ${where}: ${e.message}`, { cause: e });
  }
}

interface GuardedSettings extends Required<ConnectionLimits> {
  clock: Clock;
  onError: (error: unknown) => Response | Promise<Response>;
}

class Guarded implements GuardedServer {
  readonly addr: Deno.NetAddr;
  readonly guarded = true;
  readonly finished: Promise<void>;
  #listener: Deno.TcpListener;
  #settings: GuardedSettings;
  #guard;
  #connections = new Set<GuardedConnection>();
  #refusals = new Set<Promise<void>>();
  #counts = { accepted: 0, refused: 0, acceptErrors: 0, headerTimeouts: 0, idleTimeouts: 0 };
  #loop: Promise<void>;
  #backoff: { timer: Timer; wake: () => void } | null = null;
  #stopping: Promise<void> | null = null;
  #stopped!: () => void;

  constructor(
    listener: Deno.TcpListener,
    driver: ConnectionDriver,
    handler: GuardedHandler,
    settings: GuardedSettings,
  ) {
    this.addr = listener.addr;
    this.#listener = listener;
    this.#settings = settings;
    this.#guard = {
      driver,
      handler,
      onError: settings.onError,
      clock: settings.clock,
      headerTimeoutMs: settings.headerTimeoutMs,
      idleTimeoutMs: settings.idleTimeoutMs,
      onExpired: (reason: ExpiryReason) => {
        if (reason === "header") this.#counts.headerTimeouts++;
        else this.#counts.idleTimeouts++;
      },
    };
    this.finished = new Promise((resolve) => this.#stopped = resolve);
    this.#loop = this.#acceptLoop();
  }

  get stats(): GuardedServerStats {
    return { open: this.#connections.size, ...this.#counts };
  }

  shutdown(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        this.#listener.close();
      } catch {
        // Already closed.
      }
      this.#backoff?.timer.cancel();
      this.#backoff?.wake();
      await this.#loop;
      for (const connection of this.#connections) connection.drain();
      await Promise.all([...this.#connections].map((c) => c.finished));
      await Promise.all(this.#refusals);
      this.#stopped();
    })();
    return this.#stopping;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.shutdown();
  }

  async #acceptLoop(): Promise<void> {
    let delayMs = 0;
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch {
        if (this.#stopping !== null) return;
        // EMFILE, ENFILE, ECONNABORTED…: the listener is still good. Wait, as Go's
        // http.Server.Serve does, for connections to close (the timeouts see to it).
        this.#counts.acceptErrors++;
        delayMs = delayMs === 0 ? FIRST_BACKOFF_MS : Math.min(2 * delayMs, MAX_BACKOFF_MS);
        await new Promise<void>((wake) => {
          this.#backoff = { timer: this.#settings.clock.setTimer(delayMs, wake), wake };
        });
        this.#backoff = null;
        if (this.#stopping !== null) return;
        continue;
      }
      delayMs = 0;
      this.#admit(conn);
    }
  }

  #admit(conn: Deno.TcpConn): void {
    if (this.#stopping !== null) {
      conn.close();
      return;
    }
    if (this.#connections.size >= this.#settings.maxConnections) {
      this.#counts.refused++;
      // Past a few lingering refusals, a flood gets the answer without the linger.
      const linger = this.#refusals.size < LINGERING_REFUSALS ? REFUSAL_LINGER_MS : 0;
      const refusal = refuse(conn, this.#settings.clock, linger);
      this.#refusals.add(refusal);
      void refusal.then(() => this.#refusals.delete(refusal));
      return;
    }
    this.#counts.accepted++;
    try {
      // Responses leave as soon as written, as with Node's http.Server (noDelay: true).
      conn.setNoDelay(true);
    } catch {
      // Reset already: the driver will see it.
    }
    const connection = new GuardedConnection(conn, this.#guard);
    this.#connections.add(connection);
    void connection.finished.then(() => this.#connections.delete(connection));
  }
}

/** The default `onError`: logs the handler's failure, answers 500. */
export function internalError(error: unknown): Response {
  console.error("serveGuarded: the handler failed:", error);
  return new Response("Internal Server Error\n", { status: 500 });
}
