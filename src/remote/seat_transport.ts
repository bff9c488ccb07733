/**
 * The seam between the client kit (`SeatClient` of `seat_client.ts`) and a
 * transport: what the kit asks of a transport
 * ({@linkcode SeatTransport}) and what a transport tells the kit
 * ({@linkcode TransportEvents}). The kit keeps the books (deadlines, the
 * unreachable policy and its local limiter, late releases, lease renewal,
 * a refused credential); a transport only carries operations, addressed by
 * the ids the kit gives, and reports answers and reachability. The
 * WebSocket client (`client.ts`, protocol of `src/protocol/PROTOCOL.md`)
 * and the Worker's RPC client (`src/cloudflare/_worker_client.ts`) are
 * transports.
 *
 * @module
 */

import type { Rejected, SeatRequest } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import type { ClientState } from "./client_types.ts";

/** A transport's answer to an acquire: a seat granted under the acquire's id, or a rejection. */
export type TransportDecision = { admitted: true; waitedMs: number } | Rejected;

/**
 * What the kit asks of a transport. Every call returns at once and never
 * throws: answers come back through {@linkcode TransportEvents}.
 */
export interface SeatTransport {
  /**
   * Where the transport stands: requests go out while `connected`, wait
   * while `connecting` (within their deadline), get the policy's answer at
   * once while `disconnected`. A transport without connections (each call
   * on its own, such as RPC) stays `connected` and reports failures per
   * call.
   */
  readonly state: ClientState;
  /** Lease term of the seats it grants, in ms: the kit renews them at half of it. */
  readonly leaseMs: number;
  /**
   * Asks for seat `id`; answered by {@linkcode TransportEvents.decided} or
   * {@linkcode TransportEvents.failed}, or by the connection being lost
   * ({@linkcode TransportEvents.unreachable}). `signal` is the caller's, for
   * a transport that lets the server watch it.
   */
  acquire(id: number, request: SeatRequest, signal: AbortSignal | undefined): void;
  /**
   * Asks the server to cancel waiting acquire `id` (it answers `cancelled`,
   * or admitted when the seat was already given). `null` for a transport
   * that cannot: the kit then answers an aborted request `cancelled` at
   * once, and gives back a seat granted after it.
   */
  readonly cancel: ((id: number) => void) | null;
  /**
   * Gives seat `id` back (`executionMs` or `null`: the server measures),
   * with how its work ended when the release stated it (absent: `"ok"`),
   * for a server that learns its limit (`docs/adaptive.md`).
   */
  release(id: number, executionMs: number | null, outcome?: SampleOutcome): void;
  /** Watch-style early release of seat `id` (`docs/semantics.md` §5.5). */
  initialized(id: number): void;
  /** Starts seat `id`'s lease again; a seat the server no longer has comes back by `expired`. */
  renew(id: number): void;
}

/** What a transport tells the kit. */
export interface TransportEvents {
  /** The coordinator's configuration arrived. */
  configure(configuration: WireConfiguration): void;
  /**
   * The transport is `connected` (again). `kept` are the seat ids the
   * server still holds for this client (a resumed session's); a seat held
   * and not kept is lost, one kept and not held is given back now.
   *
   * @returns How many held seats were kept.
   */
  reachable(kept: Iterable<number>): number;
  /** The connection is lost (`disconnected`): what waited on it gets the policy's answer. */
  unreachable(): void;
  /** The server refused this client's credential (`refused`): `error` for every caller. */
  refused(error: Error): void;
  /**
   * Acquire `id` is decided. The kit reads `decision` during the call and
   * keeps nothing of it, so a transport may hand the same object every time.
   */
  decided(id: number, decision: TransportDecision): void;
  /**
   * Acquire `id` failed: a `TypeError` or `RangeError` is the caller's
   * malformed request (rejected with it), anything else a server or
   * transport failure (answered by the policy).
   *
   * @returns True when the failure went to the policy (an acquire still waiting, not malformed).
   */
  failed(id: number, error: unknown): boolean;
  /** The server no longer holds seat `id` (lease expired, server restarted). */
  expired(id: number): void;
}
