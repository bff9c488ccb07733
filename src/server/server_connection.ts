/**
 * One client connection of a coordinator server, transport-free: it takes
 * the frames a WebSocket received and gives back the frames to send,
 * following `src/protocol/PROTOCOL.md`. The Deno server and the Durable Objects wrap it
 * around their own sockets.
 *
 * @module
 */

import type { Clock, Timer } from "../fairqueuing/clock.ts";
import type { Session, SessionHost, SessionOutput } from "./sessions.ts";
import {
  decodeClientMessage,
  encodeMessage,
  negotiateVersion,
  type ServerMessage,
  type WireConfiguration,
  type WireError,
} from "../protocol/wire.ts";
import { CLOSE_PROTOCOL_ERROR, CLOSE_UNAUTHENTICATED } from "../protocol/wire.ts";
import { constantTimeEqual } from "../_shared/secrets.ts";

/** What a connection needs from its server. */
export interface ServerConnectionOptions {
  /** The sessions. */
  host: SessionHost;
  /** The shared secret clients must present, or `null` when there is none. */
  token: string | null;
  /** The configuration handed to clients in `welcome`. */
  configuration: () => WireConfiguration;
  /** Sends a text frame. */
  send(text: string): void;
  /** Closes the socket. */
  close(code: number, reason: string): void;
  /**
   * Told about every refused frame (for metrics and logs), with the name the
   * client gave in its `hello` when refusing that; never given a secret.
   */
  onRefused?: (error: WireError, client: string | null) => void;
  /**
   * A client that has not sent `hello` this many ms after the connection
   * was created gets `error` `hello-expected` and is closed, so that a
   * socket opened and left silent does not stay forever (default: no
   * limit). Needs `clock`.
   */
  helloTimeoutMs?: number;
  /** The clock of the hello timeout. */
  clock?: Clock;
}

/** The server side of one WebSocket connection. */
export class ServerConnection {
  #options: ServerConnectionOptions;
  #session: Session | null = null;
  #closed = false;
  #helloTimer: Timer | null = null;

  /**
   * Creates the connection; nothing happens until the first frame, or the
   * hello timeout.
   *
   * @throws {TypeError} when `helloTimeoutMs` is given without `clock`.
   */
  constructor(options: ServerConnectionOptions) {
    this.#options = options;
    const timeoutMs = options.helloTimeoutMs;
    if (timeoutMs !== undefined) {
      if (options.clock === undefined) {
        throw new TypeError("Cannot create a server connection: helloTimeoutMs needs a clock");
      }
      this.#helloTimer = options.clock.setTimer(timeoutMs, () => {
        this.#helloTimer = null;
        if (this.#session !== null || this.#closed) return;
        this.#refuse(
          { code: "hello-expected", message: `no hello within ${timeoutMs} ms` },
          null,
          true,
        );
      });
    }
  }

  /** The session, once `hello` was accepted. */
  get session(): Session | null {
    return this.#session;
  }

  /** Handles a received frame; never throws. */
  receive(data: unknown): void {
    if (this.#closed) return;
    const decoded = decodeClientMessage(data);
    if (!decoded.ok) {
      this.#refuse(decoded.error, null, this.#session === null);
      return;
    }
    const message = decoded.message;
    if (this.#session === null) {
      if (message.t !== "hello") {
        this.#refuse(
          { code: "hello-expected", message: "the first message must be hello" },
          null,
          true,
        );
        return;
      }
      const version = negotiateVersion(message.v);
      if (version === null) {
        this.#refuse(
          {
            code: "unsupported-version",
            message: `no common protocol version (offered ${message.v.join(", ")})`,
          },
          null,
          true,
        );
        return;
      }
      const expected = this.#options.token;
      if (expected !== null && !constantTimeEqual(message.token ?? "", expected)) {
        // Nothing is created for a client that cannot prove who it is.
        this.#refuse(
          { code: "unauthenticated", message: "wrong or missing token" },
          null,
          true,
          CLOSE_UNAUTHENTICATED,
          message.client,
        );
        return;
      }
      this.#cancelHelloTimer();
      const out = this.#output();
      const host = this.#options.host;
      const resumed = message.resume === null ? null : host.resume(message.resume, out);
      const session = resumed?.session ?? host.open(message.client, out);
      this.#session = session;
      this.#send({
        t: "welcome",
        v: version,
        session: session.id,
        leaseMs: host.leaseMs,
        graceMs: host.graceMs,
        config: this.#options.configuration(),
        reclaimed: resumed?.reclaimed ?? [],
      });
      return;
    }
    if (message.t === "hello") {
      this.#refuse({ code: "malformed", message: "hello was already received" }, null, false);
      return;
    }
    this.#session.apply(message.ops);
  }

  /** Sends the configuration again (after a reload). */
  sendConfiguration(): void {
    if (this.#session !== null && !this.#closed) {
      this.#send({ t: "config", config: this.#options.configuration() });
    }
  }

  /** The socket closed: the session keeps its seats for the grace period. */
  closed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelHelloTimer();
    this.#session?.detach();
  }

  #cancelHelloTimer(): void {
    this.#helloTimer?.cancel();
    this.#helloTimer = null;
  }

  #output(): SessionOutput {
    return {
      decisions: (batch) => this.#send({ t: "decisions", d: batch }),
      error: (error, id) =>
        this.#send({ t: "error", code: error.code, message: error.message, id }),
    };
  }

  #send(message: ServerMessage): void {
    if (this.#closed) return;
    try {
      this.#options.send(encodeMessage(message));
    } catch {
      // A socket that can no longer send is a closed one.
      this.closed();
    }
  }

  #refuse(
    error: WireError,
    id: number | null,
    close: boolean,
    code = CLOSE_PROTOCOL_ERROR,
    client: string | null = null,
  ): void {
    this.#options.onRefused?.(error, client);
    this.#send({ t: "error", code: error.code, message: error.message, id });
    if (close) {
      this.closed();
      try {
        this.#options.close(code, error.code);
      } catch {
        // Already closed.
      }
    }
  }
}
