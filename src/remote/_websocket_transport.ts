/**
 * The client kit's WebSocket transport (`src/protocol/PROTOCOL.md`): the
 * operations of a tick leave in one `ops` message over the
 * {@linkcode Connection}; a `welcome` makes the transport reachable,
 * naming the seats a resumed session kept; decisions, errors, a lost
 * connection and a refused token go to the kit as its events. Internal to
 * the remote client.
 *
 * @module
 */

import type { SeatRequest } from "../coordinator/types.ts";
import { Coalescer } from "../protocol/coalescer.ts";
import {
  encodeMessage,
  RELEASE_OUTCOME_VERSION,
  type WireDecision,
  type WireOp,
} from "../protocol/wire.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { Connection, type ConnectionOptions } from "./_connection.ts";
import { type ClientState, CoordinatorRefusedError } from "./client_types.ts";
import type { SeatTransport, TransportEvents } from "./seat_transport.ts";

/** Seats over one coordinator session, resumed across reconnections. */
export class WebSocketTransport implements SeatTransport {
  #connection: Connection;
  #session: string | null = null;
  #leaseMs = 30_000;
  /** The server agreed to a version whose releases may state their outcome. */
  #outcomes = false;
  #ops = new Coalescer<WireOp>((ops) => this.#connection.send(encodeMessage({ t: "ops", ops })));

  /** A transport over `options`' connection, not started yet. */
  constructor(options: ConnectionOptions, events: TransportEvents) {
    const stats = options.stats;
    this.#connection = new Connection(options, {
      session: () => this.#session,
      welcome: (m) => {
        const resumed = this.#session !== null && m.session === this.#session;
        this.#session = m.session;
        this.#leaseMs = m.leaseMs;
        this.#outcomes = m.v >= RELEASE_OUTCOME_VERSION;
        events.configure(m.config);
        stats.reclaimed += events.reachable(resumed ? m.reclaimed : []);
      },
      config: (c) => events.configure(c),
      decisions: (ds) => {
        for (const d of ds) decide(d);
      },
      error: (m) => {
        if (m.id === null) return;
        events.failed(
          m.id,
          m.code === "invalid-request" ? new TypeError(m.message) : new Error(m.message),
        );
      },
      lost: () => {
        // The server cancels a closed connection's waiters: nothing queued here is sent.
        this.#ops.clear();
        events.unreachable();
      },
      refused: (reason) => events.refused(new CoordinatorRefusedError(options.url, reason)),
    });
    // One object for every admission: the kit keeps nothing of it (`TransportEvents.decided`).
    const admitted = { admitted: true as const, waitedMs: 0 };
    const decide = (d: WireDecision): void => {
      if (d[1] === "expired") events.expired(d[0]);
      else if (d[1] === "admitted") {
        admitted.waitedMs = d[2];
        events.decided(d[0], admitted);
      } else events.decided(d[0], { admitted: false, reason: d[2], retryAfterSeconds: d[3] });
    };
  }

  get state(): ClientState {
    return this.#connection.state;
  }

  get leaseMs(): number {
    return this.#leaseMs;
  }

  /** The session id, once welcomed. */
  get session(): string | null {
    return this.#session;
  }

  /** Opens the first connection. */
  start(): void {
    this.#connection.start();
  }

  acquire(id: number, request: SeatRequest): void {
    this.#ops.push(["acquire", id, request]);
  }

  readonly cancel = (id: number): void => this.#ops.push(["cancel", id]);

  release(id: number, executionMs: number | null, outcome?: SampleOutcome): void {
    // "ok" goes without saying; a server of version 1 would refuse the field, and the whole frame.
    this.#ops.push(
      outcome === undefined || outcome === "ok" || !this.#outcomes
        ? ["release", id, executionMs]
        : ["release", id, executionMs, outcome],
    );
  }

  initialized(id: number): void {
    this.#ops.push(["initialized", id]);
  }

  renew(id: number): void {
    this.#ops.push(["renew", id]);
  }

  /** Stops reconnecting, sends what is queued, closes the socket; resolves once it is closed. */
  close(): Promise<void> {
    this.#connection.stop();
    this.#ops.flush();
    return this.#connection.closeSocket();
  }
}
