/**
 * The remote coordinator's client (`src/protocol/PROTOCOL.md`): a
 * {@linkcode Coordinator} whose seats come from a coordinator server over
 * one WebSocket. Every operation of a tick leaves in one `ops` message;
 * held seats' leases are renewed at half their term; a lost connection is
 * retried with exponential backoff and jitter and the old session resumed,
 * so that seats held across a reconnect are reclaimed or reported lost,
 * never doubled.
 *
 * No request hangs: an acquire resolves at the latest when its queue wait
 * limit plus a margin has passed, whatever the server does (dies, stalls,
 * sends garbage), with the policy's answer (`local`, `open` or `closed`).
 * Portable: the standard `WebSocket` (or the transport given as
 * `webSocket`) and the injected clock. The books of requests and seats
 * (deadlines, policy, late releases, leases, a refused token) are the client
 * kit's (`seat_client.ts`); the WebSocket transport plugged into it is
 * `_websocket_transport.ts`, its connection (hello, connect timeout,
 * backoff, decoding) `_connection.ts`.
 *
 * Semantics decided here:
 * - An acquire made while the first connection (or a reconnection) is being
 *   set up waits for it (within its deadline, and at most
 *   `connectTimeoutMs`); one made while the client is `disconnected`
 *   (between attempts) gets the policy's answer at once.
 * - When the connection is lost, acquires sent on it get the policy's answer
 *   at once: the server cancels a closed connection's waiting requests, and
 *   re-sending would queue them again at the back, past their deadline (the
 *   `local` limiter lets them wait only what is left of their wait limit). A
 *   seat the server granted while its decision was lost comes back in
 *   `reclaimed` and is released at once.
 * - `close()` gives every held seat back to the server, answers waiting
 *   requests `unavailable`, and stops every timer.
 *
 * @module
 */

import { systemClock } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { AcquireOptions, Admission, SeatRequest } from "../coordinator/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import { globalWebSocket } from "./_connection.ts";
import { WebSocketTransport } from "./_websocket_transport.ts";
import { SeatClient } from "./seat_client.ts";
import { checkNumber } from "../_shared/errors.ts";

export {
  type ClientState,
  type ConnectCoordinatorOptions,
  CoordinatorRefusedError,
  type CoordinatorSocket,
  DEFAULT_FALLBACK_FRACTION,
  type RemoteCoordinator,
  type RemoteCoordinatorStats,
  type UnreachablePolicy,
} from "./client_types.ts";
import type {
  ClientState,
  ConnectCoordinatorOptions,
  RemoteCoordinator,
  RemoteCoordinatorStats,
} from "./client_types.ts";

const WHAT = "Cannot connect a coordinator";

function positive(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  checkNumber(
    v,
    (n) => n >= 0 && n < Infinity,
    () => `${WHAT}: ${name} must be >= 0, got ${String(v)}`,
  );
  return v;
}

/**
 * Connects to a coordinator server at `url` (`ws:` or `wss:`) and returns
 * its client at once, in state `connecting`.
 *
 * @example
 * ```ts ignore
 * import { connectCoordinator } from "@apf/edge";
 * await using coordinator = connectCoordinator("ws://127.0.0.1:7070", { policy: "open" });
 * const admission = await coordinator.acquire({ priorityLevel: "catch-all", flowSchema: "catch-all" });
 * if (admission.admitted) admission.seat.release();
 * ```
 *
 * @throws {TypeError} when `url` is not a `ws:` or `wss:` URL; {RangeError} for a bad option.
 */
export function connectCoordinator(
  url: string | URL,
  options: ConnectCoordinatorOptions = {},
): RemoteCoordinator {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`${WHAT}: invalid URL ${String(url)}`);
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
    throw new TypeError(`${WHAT}: expected a ws: or wss: URL, got ${parsed}`);
  }
  return new RemoteClient(parsed.href, options);
}

class RemoteClient implements RemoteCoordinator {
  readonly stats: RemoteCoordinatorStats = {
    framesSent: 0,
    framesReceived: 0,
    garbage: 0,
    errors: 0,
    lost: 0,
    reclaimed: 0,
    lateReleases: 0,
    reconnects: 0,
    fallbacks: 0,
  };
  #kit: SeatClient;
  #transport!: WebSocketTransport;
  #closedPromise: Promise<void> | null = null;

  constructor(url: string, options: ConnectCoordinatorOptions) {
    const clock = options.clock ?? systemClock;
    const connectTimeoutMs = positive("connectTimeoutMs", options.connectTimeoutMs, 3_000);
    const initialMs = positive("reconnect.initialMs", options.reconnect?.initialMs, 100);
    const maxMs = positive("reconnect.maxMs", options.reconnect?.maxMs, 5_000);
    const connection = {
      url,
      token: options.token ?? null,
      name: options.client ?? "apf",
      clock,
      connectTimeoutMs,
      backoff: {
        initialMs,
        maxMs: Math.max(initialMs, maxMs),
        random: options.random ?? Math.random,
      },
      webSocket: options.webSocket ?? globalWebSocket,
      stats: this.stats,
    };
    this.#kit = new SeatClient(
      WHAT,
      { ...options, clock },
      this.stats,
      (events) => this.#transport = new WebSocketTransport(connection, events),
    );
    this.#transport.start();
  }

  get state(): ClientState {
    return this.#transport.state;
  }

  get configuration(): WireConfiguration | null {
    return this.#kit.configuration;
  }

  get session(): string | null {
    return this.#transport.session;
  }

  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void {
    return this.#kit.onConfiguration(listener);
  }

  ready(): Promise<void> {
    return this.#kit.ready();
  }

  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    return this.#kit.acquire(request, options);
  }

  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null {
    return this.#kit.snapshot(options);
  }

  close(): Promise<void> {
    // The kit cancels waiters and gives held seats back while the connection still carries them.
    this.#kit.close(true);
    return this.#closedPromise ??= this.#transport.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
