/**
 * The public shapes of the remote coordinator's client: its options, state,
 * statistics and interface.
 *
 * @module
 */

import type { EffectiveConfiguration } from "../config/effective.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import type { UnreachablePolicy } from "./fallback.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { Coordinator } from "../coordinator/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";

export type { UnreachablePolicy };

/** Default fraction of the server concurrency limit the `local` policy's limiter gets. */
export const DEFAULT_FALLBACK_FRACTION = 0.1;

/** Where a client stands with its coordinator. */
export type ClientState = "connecting" | "connected" | "disconnected" | "refused" | "closed";

/**
 * The coordinator refused this client's credentials: a configuration
 * error, not an outage. The client stops (state `refused`, no retry), and
 * `ready()` and every acquire reject with this error; no unreachable
 * policy applies. The message names the coordinator, never the token.
 */
export class CoordinatorRefusedError extends Error {
  /** The coordinator's URL. */
  readonly url: string;

  /**
   * Creates the error.
   *
   * @param url The coordinator's URL.
   * @param reason What the coordinator said.
   */
  constructor(url: string, reason: string) {
    super(`The coordinator at ${url} refused this client's token: ${reason}`);
    this.name = "CoordinatorRefusedError";
    this.url = url;
  }
}

/**
 * The part of a WebSocket the remote client uses: the global `WebSocket`
 * fits it, and so does any transport a host supplies through
 * {@linkcode ConnectCoordinatorOptions.webSocket} (on Deno, `noDelayWebSocket()`
 * of `@apf/edge/deno`, which disables Nagle's algorithm).
 *
 * The contract is the WebSocket API's: `readyState` goes 0 (connecting), 1
 * (open), 2 (closing), 3 (closed), never back; `onopen` fires at most once,
 * before any `onmessage`; `onclose` fires exactly once, whatever ends the
 * connection (refused, failed handshake, error, either side's close),
 * including after a `close()` made while connecting; no handler fires after
 * it. The client assigns the handlers right after creating the socket.
 */
export interface CoordinatorSocket {
  /** 0 connecting, 1 open, 2 closing, 3 closed (the `WebSocket` constants). */
  readonly readyState: number;
  /** Sends a text message; only called while open. */
  send(data: string): void;
  /** Starts the closing handshake, or cancels a connection still being made. */
  close(code?: number, reason?: string): void;
  /** Called once the connection is open. */
  onopen: ((event: Event) => void) | null;
  /** Called with each message received: `data` is a string for a text message. */
  onmessage: ((event: MessageEvent) => void) | null;
  /** Called once, when the connection is closed. */
  onclose: ((event: CloseEvent) => void) | null;
}

/** Options of {@linkcode connectCoordinator}. */
export interface ConnectCoordinatorOptions {
  /** The server's shared secret (default `null`: none). */
  token?: string | null;
  /** The name the server shows for this client (default `"apf"`). */
  client?: string;
  /** The clock for deadlines, renewals and backoff (default: the system clock). */
  clock?: Clock;
  /** What to answer when the coordinator cannot be reached (default `"local"`). */
  policy?: UnreachablePolicy;
  /**
   * The `local` policy's limiter: an embedded coordinator serving
   * `configuration` until the coordinator sent its own, then the
   * coordinator's, at `fraction` of its server concurrency limit (default
   * {@linkcode DEFAULT_FALLBACK_FRACTION}, at least one seat). Without any
   * configuration, `local` answers `unavailable`.
   */
  fallback?: { configuration?: EffectiveConfiguration; fraction?: number };
  /** Added to a request's queue wait limit to make its deadline, in ms (default 1,000). */
  deadlineMarginMs?: number;
  /** How long a connection may take to be welcomed, in ms (default 3,000). */
  connectTimeoutMs?: number;
  /** Reconnection backoff: first delay (default 100 ms) and largest (default 5,000 ms). */
  reconnect?: { initialMs?: number; maxMs?: number };
  /** Random numbers in [0, 1) for the backoff's jitter (default `Math.random`). */
  random?: () => number;
  /**
   * Opens the WebSocket to `url`, once per connection attempt (default: the
   * global `WebSocket`). On Deno, pass `noDelayWebSocket()` from
   * `@apf/edge/deno`: Deno's `WebSocket` leaves Nagle's algorithm on, which
   * delays a frame sent right after one the server does not answer by about
   * 40 ms (see `src/protocol/PROTOCOL.md`, "Transport").
   */
  webSocket?: (url: string) => CoordinatorSocket;
}

/** Counters of a {@linkcode RemoteCoordinator}. */
export interface RemoteCoordinatorStats {
  /** Frames sent (hello and ops). */
  framesSent: number;
  /** Frames received, garbage included. */
  framesReceived: number;
  /** Frames that did not decode, or came out of place: ignored. */
  garbage: number;
  /** `error` messages received. */
  errors: number;
  /** Held seats the server took back (lease expired, session not resumed). */
  lost: number;
  /** Held seats kept across a reconnection. */
  reclaimed: number;
  /** Seats granted after their acquire had been answered (deadline, lost decision): released at once. */
  lateReleases: number;
  /** Successful reconnections. */
  reconnects: number;
  /** Acquires answered by the policy. */
  fallbacks: number;
}

/** A {@linkcode Coordinator} served by a coordinator server. */
export interface RemoteCoordinator extends Coordinator {
  /** Where the client stands. */
  readonly state: ClientState;
  /** The configuration the server sent last, or `null` before the first welcome. */
  readonly configuration: WireConfiguration | null;
  /** The session id, once welcomed. */
  readonly session: string | null;
  /** Counters (a live object). */
  readonly stats: Readonly<RemoteCoordinatorStats>;
  /** Calls `listener` with every configuration the server sends; returns the unsubscriber. */
  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void;
  /**
   * Resolves once the first connection attempt ended: welcomed (the
   * server's configuration is in), or failed (the policy answers). `apf()`
   * waits for it before classifying its first requests.
   *
   * @throws {CoordinatorRefusedError} (rejects) when the server refused the token.
   */
  ready(): Promise<void>;
  /**
   * The `local` policy's limiter: its levels, seats and queues (what the
   * admin routes of `apf()` and `apf serve` dump for a remote coordinator),
   * or `null` while it was never needed. Requests waiting in it move to the
   * coordinator once it is reached again.
   */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null;
  /** Releases held seats, answers waiting requests `unavailable`, closes the socket and timers. */
  close(): Promise<void>;
  /** Same as {@linkcode RemoteCoordinator.close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}
