/**
 * The remote client's connection to its coordinator server: one WebSocket
 * at a time, opened with `hello`, given up when not welcomed within the
 * connect timeout, and opened again after a backoff when lost. It decodes
 * what arrives and hands the WebSocket transport (`_websocket_transport.ts`)
 * only well-formed messages in their place (a `welcome` first, then
 * configurations, decisions and errors); the seats and the requests are the
 * client kit's. Internal to the remote client.
 *
 * @module
 */

import type { Clock, Timer } from "../fairqueuing/clock.ts";
import { backoffDelayMs, type BackoffOptions } from "./_backoff.ts";
import type { ClientState, CoordinatorSocket, RemoteCoordinatorStats } from "./client_types.ts";
import {
  CLOSE_UNAUTHENTICATED,
  decodeServerMessage,
  encodeMessage,
  type ServerMessage,
  WIRE_VERSIONS,
  type WireConfiguration,
  type WireDecision,
} from "../protocol/wire.ts";

/** `WebSocket.OPEN` and `WebSocket.CLOSED`, for sockets that are not the global `WebSocket`. */
const OPEN = 1;
const CLOSED = 3;

/** What the connection tells its client. */
export interface ConnectionEvents {
  /** The session `hello` asks to resume, or `null`. */
  session(): string | null;
  /** The server welcomed this connection: the client is `connected`. */
  welcome(message: Extract<ServerMessage, { t: "welcome" }>): void;
  /** A configuration arrived after the welcome. */
  config(config: WireConfiguration): void;
  /** Decisions arrived after the welcome. */
  decisions(decisions: WireDecision[]): void;
  /** The server refused an operation. */
  error(message: Extract<ServerMessage, { t: "error" }>): void;
  /** The connection is gone (state `disconnected`); a new attempt is scheduled after this. */
  lost(): void;
  /** The server refused the token (state `refused`): no attempt follows. */
  refused(reason: string): void;
}

/** Options of a {@linkcode Connection}, checked by `connectCoordinator`. */
export interface ConnectionOptions {
  url: string;
  token: string | null;
  name: string;
  clock: Clock;
  connectTimeoutMs: number;
  backoff: BackoffOptions;
  webSocket: (url: string) => CoordinatorSocket;
  /** The client's counters: frames, garbage, errors and reconnections are counted here. */
  stats: RemoteCoordinatorStats;
}

/** The default transport: the global `WebSocket`. */
export const globalWebSocket = (url: string): CoordinatorSocket => new WebSocket(url);

/** One coordinator connection at a time, from `connecting` to `closed`. */
export class Connection {
  #o: ConnectionOptions;
  #events: ConnectionEvents;
  #state: ClientState = "connecting";
  #ws: CoordinatorSocket | null = null;
  #welcomed = false;
  #everConnected = false;
  #attempt = 0;
  /** The connect timeout, then the backoff before the next attempt. */
  #timer: Timer | null = null;

  constructor(options: ConnectionOptions, events: ConnectionEvents) {
    this.#o = options;
    this.#events = events;
  }

  /** Where the connection stands. */
  get state(): ClientState {
    return this.#state;
  }

  /** The current socket was welcomed (state `connected`). */
  get welcomed(): boolean {
    return this.#welcomed;
  }

  /** Opens the first connection. */
  start(): void {
    this.#connect();
  }

  /** Sends `text` on the open socket; dropped when there is none. */
  send(text: string): void {
    const ws = this.#ws;
    if (ws === null || ws.readyState !== OPEN) return;
    ws.send(text);
    this.#o.stats.framesSent++;
  }

  /** State `closed` (`refused` stays): no attempt, no timer any more. The socket stays for the last sends. */
  stop(): void {
    if (this.#state !== "refused") this.#state = "closed";
    this.#timer?.cancel();
    this.#timer = null;
  }

  /** After {@linkcode stop}: closes the socket; resolves once it is closed. */
  closeSocket(): Promise<void> {
    const ws = this.#ws;
    this.#ws = null;
    return ws === null || ws.readyState === CLOSED ? Promise.resolve() : new Promise<void>(
      (resolve) => {
        ws.onclose = () => resolve();
        ws.onmessage = null;
        ws.close(1000, "client closed");
      },
    );
  }

  #connect(): void {
    this.#state = "connecting";
    this.#welcomed = false;
    let ws: CoordinatorSocket;
    try {
      ws = this.#o.webSocket(this.#o.url);
    } catch {
      this.#lost();
      return;
    }
    this.#ws = ws;
    this.#timer = this.#o.clock.setTimer(this.#o.connectTimeoutMs, () => {
      this.#timer = null;
      // A server that accepts and never welcomes is a dead one.
      if (this.#ws === ws && !this.#welcomed) this.#drop(ws);
    });
    ws.onopen = () => {
      if (this.#ws !== ws) return;
      this.send(encodeMessage({
        t: "hello",
        v: [...WIRE_VERSIONS],
        token: this.#o.token,
        client: this.#o.name,
        resume: this.#events.session(),
      }));
    };
    ws.onmessage = (e) => {
      if (this.#ws === ws) this.#receive(e.data);
    };
    ws.onclose = (e) => {
      if (this.#ws !== ws) return;
      // Also when the refusal's error frame did not arrive before the close.
      if (!this.#welcomed && e?.code === CLOSE_UNAUTHENTICATED) {
        this.#refused("wrong or missing token");
      } else this.#lost();
    };
  }

  /** Gives up on `ws` at once (it may take a while to close). */
  #drop(ws: CoordinatorSocket): void {
    ws.onmessage = null;
    ws.onclose = null;
    try {
      ws.close(1000, "timeout");
    } catch {
      // Already closing.
    }
    if (this.#ws === ws) this.#lost();
  }

  /** The connection is gone: the client answers what waited on it, then a retry after a backoff. */
  #lost(): void {
    this.#ws = null;
    this.#welcomed = false;
    this.#timer?.cancel();
    this.#timer = null;
    this.#state = "disconnected";
    this.#events.lost();
    const delay = backoffDelayMs(this.#attempt++, this.#o.backoff);
    this.#timer = this.#o.clock.setTimer(delay, () => {
      this.#timer = null;
      if (this.#state === "disconnected") this.#connect();
    });
  }

  /** The server will not have this client: stop for good, it is not an outage. */
  #refused(reason: string): void {
    // The socket stays for closeSocket() to wait on.
    const ws = this.#ws;
    this.#timer?.cancel();
    this.#timer = null;
    this.#state = "refused";
    if (ws !== null) {
      ws.onmessage = null;
      ws.onclose = null;
      try {
        ws.close(1000, "refused");
      } catch {
        // Already closing.
      }
    }
    this.#events.refused(reason);
  }

  #receive(data: unknown): void {
    const stats = this.#o.stats;
    stats.framesReceived++;
    const decoded = decodeServerMessage(data);
    if (!decoded.ok) {
      stats.garbage++;
      return;
    }
    const m = decoded.message;
    if (m.t === "error") {
      stats.errors++;
      if (m.code === "unauthenticated" && !this.#welcomed) this.#refused(m.message);
      else this.#events.error(m);
      return;
    }
    if (m.t === "welcome") {
      if (this.#welcomed) stats.garbage++;
      else this.#welcome(m);
      return;
    }
    if (!this.#welcomed) {
      stats.garbage++;
      return;
    }
    if (m.t === "config") this.#events.config(m.config);
    else this.#events.decisions(m.d);
  }

  #welcome(m: Extract<ServerMessage, { t: "welcome" }>): void {
    this.#welcomed = true;
    this.#timer?.cancel();
    this.#timer = null;
    this.#state = "connected";
    this.#attempt = 0;
    if (this.#everConnected) this.#o.stats.reconnects++;
    this.#everConnected = true;
    this.#events.welcome(m);
  }
}
