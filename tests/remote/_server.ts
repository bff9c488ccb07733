/**
 * A real coordinator server on loopback for the client tests, built from
 * the existing pieces: `Deno.serve` upgrading to WebSockets, one
 * `ServerConnection` per socket, a `SessionHost` over an
 * `EmbeddedCoordinator`.
 *
 * @module
 */

import type { EffectiveConfiguration } from "../../src/config/effective.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { ServerConnection } from "../../src/server/server_connection.ts";
import { SessionHost } from "../../src/server/sessions.ts";
import type { Coordinator } from "../../src/coordinator/types.ts";
import type { WireConfiguration } from "../../src/protocol/wire.ts";
import { type Clock, systemClock } from "../../src/fairqueuing/clock.ts";

/** Options of {@linkcode startServer}. */
export interface TestServerOptions {
  /** The coordinator's configuration. */
  config: EffectiveConfiguration;
  /** The wire configuration sent to clients (default: no objects, at the config's limit). */
  wire?: WireConfiguration;
  /** The server's clock (default: the system clock). */
  clock?: Clock;
  /** The shared secret (default `null`). */
  token?: string | null;
  /** Lease term (default 30 s). */
  leaseMs?: number;
  /** Grace period (default 5 s). */
  graceMs?: number;
  /** The port (default 0: any). */
  port?: number;
  /**
   * `"stall"`: accept WebSockets and never answer. `"garbage"`: answer
   * normally, but send `garbage` frames before every real one.
   */
  mode?: "normal" | "stall" | "garbage";
  /** The frames sent before each real frame in `"garbage"` mode. */
  garbage?: string[];
  /** Delays every acquire by this many ms before the coordinator sees it (a slow server). */
  decisionDelayMs?: number;
}

/** A running test server. */
export interface TestServer {
  /** `ws://127.0.0.1:PORT`. */
  url: string;
  /** The port. */
  port: number;
  /** The coordinator behind the sessions. */
  coordinator: EmbeddedCoordinator;
  /** The sessions. */
  host: SessionHost;
  /** Frames received from clients. */
  framesIn: number;
  /** Frames sent to clients (garbage included). */
  framesOut: number;
  /** Closes every client socket from the server side (the sessions wait out their grace). */
  dropClients(): Promise<void>;
  /** Stops everything: sockets, sessions, coordinator, listener. */
  close(): Promise<void>;
}

/** Starts a coordinator server on 127.0.0.1. */
export function startServer(options: TestServerOptions): TestServer {
  const clock = options.clock ?? systemClock;
  const coordinator = new EmbeddedCoordinator(options.config, { clock });
  const delayMs = options.decisionDelayMs ?? 0;
  const slow: Coordinator = {
    acquire: (request, opts) =>
      new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(() =>
        coordinator.acquire(request, opts)
      ),
  };
  const host = new SessionHost(delayMs > 0 ? slow : coordinator, {
    clock,
    ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    ...(options.graceMs !== undefined && { graceMs: options.graceMs }),
  });
  const wire: WireConfiguration = options.wire ??
    {
      serverConcurrencyLimit: options.config.serverConcurrencyLimit,
      mandatoryOnly: false,
      objects: [],
    };
  const sockets = new Map<WebSocket, Promise<void>>();
  const mode = options.mode ?? "normal";
  const server = Deno.serve({
    port: options.port ?? 0,
    hostname: "127.0.0.1",
    onListen: () => {},
  }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    const { promise, resolve } = Promise.withResolvers<void>();
    sockets.set(socket, promise);
    const send = (text: string) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      if (mode === "garbage") {
        for (const g of options.garbage ?? []) {
          socket.send(g);
          t.framesOut++;
        }
      }
      socket.send(text);
      t.framesOut++;
    };
    const conn = new ServerConnection({
      host,
      token: options.token ?? null,
      configuration: () => wire,
      send,
      close: (code, reason) => socket.close(code, reason),
    });
    socket.onmessage = (e) => {
      t.framesIn++;
      if (mode !== "stall") conn.receive(e.data);
    };
    socket.onclose = () => {
      conn.closed();
      sockets.delete(socket);
      resolve();
    };
    return response;
  });
  const closeSockets = async () => {
    const closing = [...sockets.entries()];
    for (const [socket] of closing) {
      try {
        socket.close(1001, "going away");
      } catch {
        // Already closing.
      }
    }
    await Promise.all(closing.map(([, closed]) => closed));
  };
  const t: TestServer = {
    url: `ws://127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    coordinator,
    host,
    framesIn: 0,
    framesOut: 0,
    dropClients: closeSockets,
    async close() {
      await closeSockets();
      host.close();
      coordinator.close();
      await server.shutdown();
    },
  };
  return t;
}
