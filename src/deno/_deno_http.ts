/**
 * HTTP on one accepted connection, served by Deno's own HTTP machinery:
 * what `serveGuarded()` hands each connection to once its accept loop took
 * it. Deno has two such servers and exports neither in its types:
 *
 * - `serveHttpOnConnection`, the function `Deno.serve` itself runs on
 *   (hyper; same request path and speed), reachable as
 *   `Deno[Deno.internal].serveHttpOnConnection`. It closes the connection
 *   once a request was upgraded, so `Deno.upgradeWebSocket` cannot be used
 *   with it.
 * - `Deno.serveHttp`, the per-connection server of Deno 1 (still present in
 *   Deno 2 at run time), which keeps an upgraded connection open for its
 *   WebSocket; about half as fast for a hello world, and it compresses
 *   compressible bodies for clients that accept gzip or br, as Deno 1 did.
 *
 * Each is looked up when a server starts; when the one a server needs is
 * not there (another Deno), `serveGuarded()` falls back to plain
 * `Deno.serve`.
 *
 * @module
 */

/** A request handler, as `Deno.serve` takes it, with the client's address. */
export type ConnectionHandler = (
  req: Request,
  info: { readonly remoteAddr: Deno.NetAddr },
) => Response | Promise<Response>;

/** What a connection's server tells its guard. */
export interface ConnectionHooks {
  /** A request's headers are complete: it goes to the handler now. */
  requestStarted(): void;
  /**
   * That request's response was handed over to be sent (its body may still
   * stream: the native driver) or delivered (the upgrading driver), or the
   * request failed.
   */
  requestEnded(): void;
  /** That request was answered `101 Switching Protocols`: the connection left HTTP. */
  upgraded(): void;
}

/** HTTP running on one connection. */
export interface ConnectionServer {
  /** Settles once the connection closed (or was upgraded and left to its WebSocket). */
  readonly finished: Promise<void>;
  /**
   * Closes the connection once the responses handed over are delivered
   * (at once when there are none); a partly received request head is
   * dropped. Called only when no request is in flight by the hooks.
   */
  close(): void;
}

/** Starts HTTP on `conn`. */
export type ConnectionDriver = (
  conn: Deno.TcpConn,
  handler: ConnectionHandler,
  onError: (error: unknown) => Response | Promise<Response>,
  hooks: ConnectionHooks,
) => ConnectionServer;

interface InnerServer {
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

type ServeHttpOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal | undefined,
  handler: (
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response>,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: (scheme: string) => void,
) => InnerServer;

interface RequestEvent {
  readonly request: Request;
  respondWith(response: Response | Promise<Response>): Promise<void>;
}

interface HttpConn {
  nextRequest(): Promise<RequestEvent | null>;
  close(): void;
}

type ServeHttp = (conn: Deno.Conn) => HttpConn;

const noop = () => {};

/**
 * The driver on `Deno.serve`'s own per-connection server, or `null` when
 * this Deno does not have it where Deno 2.9 keeps it.
 */
export function nativeDriver(): ConnectionDriver | null {
  const deno = Deno as unknown as Record<PropertyKey, unknown>;
  const internals = deno[deno.internal as PropertyKey] as Record<string, unknown> | undefined;
  const serveOn = internals?.serveHttpOnConnection;
  if (typeof serveOn !== "function") return null;
  const serveHttpOnConnection = serveOn as ServeHttpOnConnection;
  return (conn, handler, onError, hooks) => {
    const server = serveHttpOnConnection(
      conn,
      undefined,
      (req, info) => {
        hooks.requestStarted();
        // Ended once the response is handed over, its body maybe still streaming: close() is
        // graceful here, so the body still gets out; `info.completed` would add a promise per
        // request.
        let result: Response | Promise<Response>;
        try {
          result = handler(req, info);
        } catch (e) {
          hooks.requestEnded();
          throw e;
        }
        if (!(result instanceof Promise)) {
          hooks.requestEnded();
          return result;
        }
        return result.then((response) => {
          hooks.requestEnded();
          return response;
        }, (e) => {
          hooks.requestEnded();
          throw e;
        });
      },
      onError,
      noop,
    );
    return {
      // A connection reset by the client rejects it: that is an end like any other.
      finished: server.finished.then(noop, noop),
      // Graceful in hyper's sense: an idle or half-received connection closes at once.
      close: () => void server.shutdown().catch(noop),
    };
  };
}

/**
 * The driver on `Deno.serveHttp`, which keeps upgraded connections open,
 * or `null` when this Deno does not have it.
 */
export function upgradingDriver(): ConnectionDriver | null {
  const serveHttp = (Deno as unknown as { serveHttp?: unknown }).serveHttp;
  if (typeof serveHttp !== "function") return null;
  return (conn, handler, onError, hooks) => {
    const httpConn = (serveHttp as ServeHttp).call(Deno, conn);
    const info = { remoteAddr: conn.remoteAddr };
    let closed = false;
    const respond = async (event: RequestEvent): Promise<void> => {
      let response: Response;
      try {
        response = await handler(event.request, info);
      } catch (e) {
        response = await onError(e);
      }
      const upgrade = response.status === 101;
      try {
        // Resolves once the body was written out.
        await event.respondWith(response);
      } catch {
        // The client went away; its request signal told the handler.
      } finally {
        if (upgrade) hooks.upgraded();
        else hooks.requestEnded();
      }
    };
    const responding = new Set<Promise<void>>();
    const finished = (async () => {
      for (;;) {
        let event: RequestEvent | null;
        try {
          event = await httpConn.nextRequest();
        } catch {
          event = null; // reset, malformed request, or closed by us
        }
        if (event === null) break;
        hooks.requestStarted();
        const responded = respond(event);
        responding.add(responded);
        void responded.then(() => responding.delete(responded));
      }
      // A client that half-closed after its request still gets the response.
      await Promise.all(responding);
    })();
    return {
      finished,
      close: () => {
        if (closed) return;
        closed = true;
        try {
          httpConn.close();
        } catch {
          // Already closed by the client.
        }
      },
    };
  };
}
