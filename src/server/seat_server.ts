/**
 * The server kit: what every coordinator server is, whatever carries its
 * messages. It holds the queue sets (an {@linkcode EmbeddedCoordinator}),
 * the sessions and leases ({@linkcode SessionHost}), the metrics, and the
 * clients' connections: a WebSocket transport hands it each socket's frames
 * ({@linkcode SeatServer.connect}, protocol of `src/protocol/PROTOCOL.md`),
 * an RPC transport calls it directly ({@linkcode SeatServer.acquire}). The
 * Deno coordinator server (`src/deno/coordinator_server.ts`) and the
 * Cloudflare level object (`src/cloudflare/_level_host.ts`) are transports
 * over it: sockets, listeners, alarms and the platform are theirs; seats,
 * leases, grace and configuration are here.
 *
 * @module
 */

import { withServerConcurrencyLimit } from "../config/mod.ts";
import { AdaptiveLimit, trackingSeats } from "../coordinator/adaptive_limit.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import { exposeAdaptiveLimit } from "../observe/adaptive_metrics.ts";
import type { EffectiveConfiguration } from "../config/effective.ts";
import { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import type { SeatDemandReport } from "../coordinator/borrowing_controller.ts";
import type { Seat, SeatRequest } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import type { CoordinatorSnapshot, SessionsSnapshot } from "../observe/types.ts";
import { seatRequestError, type WireConfiguration, type WireError } from "../protocol/wire.ts";
import { ServerConnection } from "./server_connection.ts";
import { type Session, type SessionAdmission, SessionHost } from "./sessions.ts";

/** Options of {@linkcode SeatServer}. */
export interface SeatServerOptions {
  /** The clock of leases, grace and hello timeouts (default: the system clock). */
  clock?: Clock;
  /** Lease term of a granted seat in ms (default 30,000). */
  leaseMs?: number;
  /** How long a closed connection's seats wait for the client to resume, in ms (default 5,000). */
  graceMs?: number;
  /** The shared secret WebSocket clients present in `hello`, or `null` (default). */
  token?: string | null;
  /** A connection without `hello` this many ms after it opened is closed (default: no limit). */
  helloTimeoutMs?: number;
  /** The levels this server holds (default: all); the others answer `unavailable`. */
  levels?: readonly string[];
  /**
   * `"timer"` (default): the server adjusts borrowing between its levels
   * every 10 s; `"external"`: the current limits come from
   * {@linkcode SeatServer.setCurrentLimits} (a controller elsewhere).
   */
  borrowing?: "timer" | "external";
  /**
   * The metrics to register on (default: new ones over this server's
   * coordinator), for a transport that creates its metrics before the
   * server.
   */
  metrics?: FlowcontrolMetrics;
  /** Told of every client refused at its `hello` for a wrong or missing token: its name only. */
  onRefusedHandshake?: (client: string) => void;
  /**
   * Learn the server concurrency limit from latency (`docs/adaptive.md`):
   * the controller's options. Each seat is a sample from its grant to its
   * release by the client, who holds it while its upstream works, ended as
   * the client's release says (a `release` operation's outcome; absent:
   * `"ok"`). A seat the server takes back (lease expired, session lost) is
   * no sample.
   */
  adaptive?: GradientControllerOptions;
  /**
   * Wraps each seat the sessions grant, WebSocket clients' and direct
   * callers' alike (after the adaptive limit's own wrapping): for a host
   * that samples its seats for a limit learned elsewhere (the Cloudflare
   * level object's, `src/cloudflare/_latency_samples.ts`).
   */
  track?: (seat: Seat) => Seat;
}

/** A transport's socket, as the kit sees it. */
export interface ClientSocket {
  /** Sends a text frame. */
  send(text: string): void;
  /** Closes the socket. */
  close(code: number, reason: string): void;
}

/** One client connection: the transport feeds it what its socket receives. */
export interface ClientConnection {
  /** Hands over a received frame; never throws. */
  receive(data: unknown): void;
  /** The socket closed: the session keeps its seats for the grace period. */
  closed(): void;
}

/** Seats for WebSocket sessions and direct (RPC) callers, over one embedded coordinator. */
export class SeatServer {
  /** The queue sets of the levels served. */
  readonly coordinator: EmbeddedCoordinator;
  /** The sessions and their leases. */
  readonly sessions: SessionHost;
  /** Flow-control metrics and the server's own (sessions, refusals). */
  readonly metrics: FlowcontrolMetrics;
  /** The learned server concurrency limit, or `null` for a static one. */
  readonly adaptive: AdaptiveLimit | null;
  #wire: WireConfiguration;
  #token: string | null;
  #clock: Clock;
  #helloTimeoutMs: number | undefined;
  #onRefusedHandshake: ((client: string) => void) | undefined;
  #connections = new Set<ServerConnection>();
  /** The session of direct callers (opened on first use): seats addressed by id, leased as any other. */
  #directSession: Session | null = null;
  #nextId = 0;
  #refused: (error: WireError) => void;

  /**
   * Serves `configuration` (handed to clients as `wire`).
   *
   * @throws {RangeError} or {TypeError} for an invalid configuration or option.
   */
  constructor(
    configuration: EffectiveConfiguration,
    wire: WireConfiguration,
    options: SeatServerOptions = {},
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#wire = wire;
    this.#token = options.token ?? null;
    this.#helloTimeoutMs = options.helloTimeoutMs;
    this.#onRefusedHandshake = options.onRefusedHandshake;
    // The snapshot provider runs at scrape time, once the coordinator exists.
    this.metrics = options.metrics ?? new FlowcontrolMetrics({
      snapshot: (): CoordinatorSnapshot => this.coordinator.snapshot(),
    });
    this.coordinator = new EmbeddedCoordinator(configuration, {
      clock: this.#clock,
      metrics: this.metrics,
      ...(options.levels !== undefined && { levels: [...options.levels] }),
      ...(options.borrowing !== undefined && { borrowing: options.borrowing }),
    });
    let adaptive: AdaptiveLimit | null = null;
    try {
      adaptive = options.adaptive === undefined
        ? null
        : new AdaptiveLimit(this.coordinator, options.adaptive, { clock: this.#clock });
      const served = adaptive?.tracking(this.coordinator) ?? this.coordinator;
      const track = options.track;
      this.sessions = new SessionHost(track === undefined ? served : trackingSeats(served, track), {
        clock: this.#clock,
        ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
        ...(options.graceMs !== undefined && { graceMs: options.graceMs }),
      });
    } catch (e) {
      adaptive?.close();
      this.coordinator.close();
      throw e;
    }
    this.adaptive = adaptive;
    this.#refused = this.#registerMetrics();
    if (adaptive !== null) exposeAdaptiveLimit(this.metrics.registry, () => adaptive.snapshot());
  }

  get #direct(): Session {
    return this.#directSession ??= this.sessions.open("rpc", {
      decisions: () => {},
      error: () => {},
    });
  }

  /** The configuration handed to clients. */
  get configuration(): WireConfiguration {
    return this.#wire;
  }

  /** Lease term of a granted seat in ms. */
  get leaseMs(): number {
    return this.sessions.leaseMs;
  }

  /** The WebSocket connections open now. */
  get connections(): number {
    return this.#connections.size;
  }

  /**
   * A client connection over `socket` (`src/protocol/PROTOCOL.md`): feed
   * it the frames the socket receives, and tell it when the socket closes.
   */
  connect(socket: ClientSocket): ClientConnection {
    const connection: ServerConnection = new ServerConnection({
      host: this.sessions,
      token: this.#token,
      configuration: () => this.#wire,
      send: (text) => socket.send(text),
      close: (code, reason) => socket.close(code, reason),
      onRefused: (error, client) => {
        this.#refused(error);
        if (error.code === "unauthenticated") this.#onRefusedHandshake?.(client ?? "");
      },
      ...(this.#helloTimeoutMs !== undefined &&
        { helloTimeoutMs: this.#helloTimeoutMs, clock: this.#clock }),
    });
    this.#connections.add(connection);
    return {
      receive: (data) => connection.receive(data),
      closed: () => {
        this.#connections.delete(connection);
        connection.closed();
      },
    };
  }

  /**
   * Applies a new configuration (validated whole by the coordinator: on
   * error nothing changes) and sends `wire` to every connected client.
   *
   * @throws {RangeError} or {TypeError} when the coordinator refuses it.
   */
  configure(configuration: EffectiveConfiguration, wire: WireConfiguration): void {
    // A reload keeps the learned limit: the files' ServerCL is only where learning started.
    const adaptive = this.adaptive;
    this.coordinator.configure(
      adaptive === null
        ? configuration
        : withServerConcurrencyLimit(configuration, adaptive.controller.limit),
    );
    this.#wire = wire;
    for (const connection of this.#connections) connection.sendConfiguration();
  }

  /** Sets current limits by level (`borrowing: "external"`); unknown levels are ignored. */
  setCurrentLimits(limits: Record<string, number>): void {
    this.coordinator.setCurrentLimits(limits);
  }

  /** The seat demand of the levels since the last call (`borrowing: "external"`). */
  collectSeatDemand(): SeatDemandReport[] {
    return this.coordinator.collectSeatDemand();
  }

  /**
   * A seat for a direct caller: its id is for {@linkcode SeatServer.release},
   * {@linkcode SeatServer.initialized} and {@linkcode SeatServer.renew}; a
   * seat never given back expires with its lease. `started(id)` is told the
   * id before the decision, to cancel a waiting request.
   *
   * Rejects with a `TypeError` or `RangeError` for a request the coordinator refuses.
   */
  acquire(request: SeatRequest, started?: (id: number) => void): Promise<SessionAdmission> {
    const error = seatRequestError(request);
    if (error !== null) return Promise.reject(error);
    const id = ++this.#nextId;
    const answer = this.#direct.acquire(id, request);
    started?.(id);
    return answer;
  }

  /** True while direct acquire `id` waits in a queue. */
  isWaiting(id: number): boolean {
    return this.#direct.isWaiting(id);
  }

  /** Cancels direct acquire `id` while it waits (answered `cancelled`). */
  cancel(id: number): void {
    this.#direct.cancel(id);
  }

  /**
   * Gives direct seat `id` back (unknown or released ids are ignored), with
   * how its work ended when the caller said (`docs/adaptive.md`).
   */
  release(id: number, executionMs?: number, outcome?: SampleOutcome): void {
    this.#direct.release(id, executionMs, outcome);
  }

  /** Watch-style early release of direct seat `id` (`docs/semantics.md` §5.5). */
  initialized(id: number): void {
    this.#direct.initialized(id);
  }

  /** Starts direct seat `id`'s lease again; false when it is gone (expired or released). */
  renew(id: number): boolean {
    return this.#direct.renew(id);
  }

  /** The levels' state, for dumps and metrics. */
  snapshot(options: SnapshotOptions = {}): CoordinatorSnapshot {
    return this.coordinator.snapshot(options);
  }

  /** The sessions and the seats taken back from them (`dump_sessions`). */
  sessionsSnapshot(): SessionsSnapshot {
    return this.sessions.snapshot();
  }

  /** Takes back every seat whose lease is due (for transports with their own alarms). */
  expireDue(): void {
    this.sessions.expireDue();
  }

  /** Clock time of the next lease to fall due, or `null` when no seat is held. */
  nextLeaseDue(): number | null {
    return this.sessions.nextLeaseDue();
  }

  /** Ends every session (their seats go back, waiters are answered) and stops the coordinator. */
  close(): void {
    this.sessions.close();
    this.adaptive?.close();
    this.coordinator.close();
  }

  #registerMetrics(): (error: WireError) => void {
    const registry = this.metrics.registry;
    const refused = registry.counter({
      name: "apf_coordinator_refused_frames_total",
      help: "Frames from clients refused as malformed, too large, unknown or unauthenticated",
      labelNames: ["code"],
    });
    const refusedHandshakes = registry.counter({
      name: "apf_coordinator_refused_handshakes_total",
      help: "Clients refused at their hello for a wrong or missing token",
    });
    const expired = registry.gauge({
      name: "apf_coordinator_seats_expired",
      help: "Seats taken back because their lease ran out, since the server started",
    });
    const lost = registry.gauge({
      name: "apf_coordinator_seats_lost",
      help: "Seats released because their client's connection closed and did not come back",
    });
    const sessions = registry.gauge({
      name: "apf_coordinator_sessions",
      help: "Client sessions connected or in their grace period",
    });
    const stats = this.sessions.stats;
    registry.onCollect(() => {
      expired.labels().set(stats.expired);
      lost.labels().set(stats.lost);
      // The direct callers' session is the server's own, not a client's.
      sessions.labels().set(stats.sessions - (this.#directSession === null ? 0 : 1));
    });
    return (error) => {
      refused.labels(error.code).inc();
      if (error.code === "unauthenticated") refusedHandshakes.labels().inc();
    };
  }
}
