/**
 * What a priority-level Durable Object does, without the platform: one
 * level's queue set (a partial {@linkcode EmbeddedCoordinator} whose limits
 * the controller sets), the sessions and leases of the coordinator server
 * ({@linkcode SessionHost}), an RPC session whose seats are addressed by id,
 * and liveness checks of queued RPC callers. `level_object.ts` wraps it in
 * `DurableObject`/`RpcTarget` classes; tests drive it on a fake clock.
 * Internal to the Cloudflare adapter, except for its types, which
 * `PriorityLevelObject.createHost` (the seam of a subclass) names.
 *
 * @module
 */

import type { EffectiveConfiguration } from "../config/effective.ts";
import { isPlainSeatRequest } from "../protocol/fast_check.ts";
import { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import type { SeatDemandReport } from "../coordinator/borrowing_controller.ts";
import { ServerConnection } from "../server/server_connection.ts";
import { type Session, SessionHost } from "../server/sessions.ts";
import type { Rejected, SeatRequest } from "../coordinator/types.ts";
import { seatRequestProblem, type WireConfiguration, type WireDecision } from "../protocol/wire.ts";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import type { CoordinatorSnapshot, SessionsSnapshot } from "../observe/types.ts";

/** A queued caller's pulse: resolving `false`, throwing or rejecting means it is gone. */
export interface Liveness {
  /** True while the caller still wants its seat. */
  alive(): boolean | Promise<boolean>;
}

/** A WebSocket client's connection to a level object. */
export interface LevelConnection {
  /** Hands over a frame the socket received. */
  receive(data: unknown): void;
  /** The socket closed: the session keeps its seats for the grace period. */
  closed(): void;
}

/** An admission as a level object answers it: the seat is an id. */
export type HostAdmission =
  | { admitted: true; seatId: number; waitedMs: number; leaseMs: number }
  | Rejected;

/** What the controller pushes to a level object. */
export interface LevelUpdate {
  /** Increases with every configuration; an older one is ignored. */
  version: number;
  /** The configuration (every object), or `null` when only the limits change. */
  configuration: WireConfiguration | null;
  /** Current limits by level (the object takes its own). */
  limits: Record<string, number>;
}

/** Counters of a level object since it started. */
export interface LevelHostStats {
  /** Seats granted to RPC callers. */
  granted: number;
  /** Queued RPC callers found gone (liveness) and dropped before or at their grant. */
  abandoned: number;
}

/** Options of {@linkcode LevelHost}. */
export interface LevelHostOptions {
  /** The clock (default: the system clock). */
  clock?: Clock;
  /** Lease term of a seat in ms (default 30,000). */
  leaseMs?: number;
  /** Grace period of a closed WebSocket's seats in ms (default 5,000). */
  graceMs?: number;
  /** How often a queued RPC caller's liveness is checked, in ms (default 1,000). */
  livenessIntervalMs?: number;
  /** The shared secret WebSocket clients present, or `null`. */
  token?: string | null;
  /**
   * Turns a pushed configuration into the effective one (default
   * `effectiveFromWire`: merged with the built-in objects); `null` refuses it.
   */
  resolve?: (configuration: WireConfiguration) => EffectiveConfiguration | null;
}

interface Waiter {
  resolve(a: HostAdmission): void;
  reject(e: Error): void;
}

async function isAlive(liveness: Liveness): Promise<boolean> {
  try {
    return (await liveness.alive()) !== false;
  } catch {
    return false;
  }
}

/** One priority level's seats, for RPC callers and WebSocket sessions. */
export class LevelHost {
  /** Counters. */
  readonly stats: LevelHostStats = { granted: 0, abandoned: 0 };
  /** The level's metrics (flow control plus the sessions'). */
  readonly metrics: FlowcontrolMetrics;
  #clock: Clock;
  #options: LevelHostOptions;
  #level: string | null = null;
  #version = -1;
  #wire: WireConfiguration | null = null;
  #coordinator: EmbeddedCoordinator | null = null;
  #host: SessionHost | null = null;
  #rpc: Session | null = null;
  #nextId = 0;
  #waiters = new Map<number, Waiter>();
  #connections = new Set<ServerConnection>();

  /** A host that serves no level until its first {@linkcode LevelHost.update}. */
  constructor(options: LevelHostOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#options = options;
    this.metrics = new FlowcontrolMetrics({
      snapshot: () => this.snapshot(),
    });
  }

  /** The level this object holds, once known. */
  get level(): string | null {
    return this.#level;
  }

  /** The configuration version applied, or -1 before the first. */
  get version(): number {
    return this.#version;
  }

  /** The configuration in force, for WebSocket clients (`null` before the first update). */
  get configuration(): WireConfiguration | null {
    return this.#wire;
  }

  /** The sessions (`null` before the first update). */
  get sessions(): SessionHost | null {
    return this.#host;
  }

  /**
   * Applies what the controller pushed for `level`: a newer configuration
   * (refused whole when invalid: the old one keeps serving), then the limits.
   *
   * @throws {TypeError} when the configuration is invalid or names another level than before.
   */
  update(level: string, update: LevelUpdate): void {
    if (this.#level !== null && this.#level !== level) {
      throw new TypeError(
        `Cannot update the level object of ${this.#level} for level ${JSON.stringify(level)}`,
      );
    }
    if (update.version < this.#version) return;
    if (update.configuration !== null && update.version > this.#version) {
      const config = (this.#options.resolve ?? effectiveFromWire)(update.configuration);
      if (config === null) {
        throw new TypeError(`Cannot apply configuration version ${update.version}: it is invalid`);
      }
      if (this.#coordinator === null) {
        this.#level = level;
        this.#coordinator = new EmbeddedCoordinator(config, {
          clock: this.#clock,
          levels: [level],
          borrowing: "external",
          metrics: this.metrics,
        });
        this.#host = new SessionHost(this.#coordinator, {
          clock: this.#clock,
          ...(this.#options.leaseMs !== undefined && { leaseMs: this.#options.leaseMs }),
          ...(this.#options.graceMs !== undefined && { graceMs: this.#options.graceMs }),
        });
        this.#rpc = this.#host.open("rpc", {
          decisions: (batch) => this.#decided(batch),
          error: (error, id) => {
            if (id === null) return;
            const waiter = this.#waiters.get(id);
            this.#waiters.delete(id);
            waiter?.reject(new TypeError(error.message));
          },
        });
      } else {
        this.#coordinator.configure(config);
      }
      this.#wire = update.configuration;
      this.#version = update.version;
      for (const c of this.#connections) c.sendConfiguration();
    }
    this.#coordinator?.setCurrentLimits(
      Object.fromEntries(Object.entries(update.limits).filter(([name]) => name === level)),
    );
  }

  /**
   * Asks for a seat. `liveness` (the caller's pulse) is checked every
   * `livenessIntervalMs` while the request waits and once more when it is
   * granted after waiting: a caller found gone is dropped (`cancelled`) and
   * its seat, if any, goes back at once.
   *
   * Rejects with a `TypeError` or `RangeError` when the request is malformed
   * or the object has no configuration yet.
   */
  acquire(request: SeatRequest, liveness?: Liveness): Promise<HostAdmission> {
    // The fast check first; the schema names the problem when it fails.
    const problem = isPlainSeatRequest(request) ? null : seatRequestProblem(request);
    if (problem !== null) {
      const Class = problem.error === "RangeError" ? RangeError : TypeError;
      return Promise.reject(new Class(problem.message));
    }
    const rpc = this.#rpc;
    if (rpc === null) {
      return Promise.reject(new TypeError("Cannot acquire a seat: the level has no configuration"));
    }
    if (request.priorityLevel !== this.#level) {
      return Promise.resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
    }
    const id = ++this.#nextId;
    const decided = new Promise<HostAdmission>((resolve, reject) => {
      this.#waiters.set(id, { resolve, reject });
    });
    rpc.apply([["acquire", id, request]]);
    // Only a queued request has a caller to watch: one decided at once is answered now.
    if (liveness === undefined || !rpc.isWaiting(id)) return decided.then((a) => this.#count(a));
    const watch = this.#watch(id, liveness);
    return decided.then(async (a) => {
      watch.cancel();
      // Only a caller that waited may have gone meanwhile; one admitted at once just called.
      if (!a.admitted || a.waitedMs === 0 || (await isAlive(liveness))) return this.#count(a);
      this.release(id);
      this.stats.abandoned++;
      return { admitted: false, reason: "cancelled", retryAfterSeconds: 1 };
    });
  }

  /** Gives seat `id` back (unknown or already released ids are ignored). */
  release(seatId: number, executionMs?: number): void {
    this.#rpc?.apply([[
      "release",
      seatId,
      executionMs !== undefined && executionMs >= 0 && executionMs < Infinity ? executionMs : null,
    ]]);
  }

  /** Watch-style early release of seat `id`'s seats (`docs/semantics.md` §5.5). */
  initialized(seatId: number): void {
    this.#rpc?.apply([["initialized", seatId]]);
  }

  /** Starts seat `id`'s lease again; false when the seat is gone (expired or released). */
  renew(seatId: number): boolean {
    if (this.#rpc === null || !this.#rpc.holds(seatId)) return false;
    this.#rpc.apply([["renew", seatId]]);
    return true;
  }

  /** For the controller: the level's seat demand since the last call. */
  collectSeatDemand(): SeatDemandReport[] {
    return this.#coordinator?.collectSeatDemand() ?? [];
  }

  /** Takes back every seat whose lease is over (the object's alarm calls this). */
  expireDue(): void {
    this.#host?.expireDue();
  }

  /** Clock time of the next lease to fall due, or `null` when no seat is held. */
  nextLeaseDue(): number | null {
    return this.#host?.nextLeaseDue() ?? null;
  }

  /** Milliseconds until the next lease falls due (0 when overdue), or `null` when no seat is held. */
  nextLeaseInMs(): number | null {
    const due = this.nextLeaseDue();
    return due === null ? null : Math.max(0, due - this.#clock.now());
  }

  /**
   * A WebSocket client's connection (protocol v1, `src/protocol/PROTOCOL.md`): feed it
   * the frames received; it sends through `send`.
   *
   * @throws {TypeError} when the object has no configuration yet.
   */
  connect(
    send: (text: string) => void,
    close: (code: number, reason: string) => void,
  ): LevelConnection {
    const host = this.#host;
    if (host === null) {
      throw new TypeError("Cannot accept a connection: the level has no configuration");
    }
    const connection = new ServerConnection({
      host,
      token: this.#options.token ?? null,
      configuration: () => this.#wire!,
      send,
      close,
    });
    this.#connections.add(connection);
    return {
      receive: (data: unknown) => connection.receive(data),
      closed: () => {
        this.#connections.delete(connection);
        connection.closed();
      },
    };
  }

  /** The level's state, for dumps and metrics. */
  snapshot(options: SnapshotOptions = {}): CoordinatorSnapshot {
    const now = this.#clock.now();
    return this.#coordinator?.snapshot(options) ?? {
      nowMs: now,
      wallClockMs: this.#clock.wallNow?.() ?? now,
      serverConcurrencyLimit: 0,
      seatFairFraction: 0,
      levels: [],
    };
  }

  /** The sessions and reclaimed seats (`dump_sessions`), or `null` before the first update. */
  sessionsSnapshot(): SessionsSnapshot | null {
    return this.#host?.snapshot() ?? null;
  }

  /** Ends every session, answers waiters `unavailable`. */
  close(): void {
    this.#host?.close();
    this.#coordinator?.close();
    for (const w of this.#waiters.values()) {
      w.resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
    }
    this.#waiters.clear();
  }

  #count(a: HostAdmission): HostAdmission {
    if (a.admitted) this.stats.granted++;
    return a;
  }

  #decided(batch: WireDecision[]): void {
    const leaseMs = this.#host!.leaseMs;
    for (const d of batch) {
      if (d[1] === "expired") continue; // counted by the sessions; a later release is ignored
      const waiter = this.#waiters.get(d[0]);
      if (waiter === undefined) continue;
      this.#waiters.delete(d[0]);
      waiter.resolve(
        d[1] === "admitted"
          ? { admitted: true, seatId: d[0], waitedMs: d[2], leaseMs }
          : { admitted: false, reason: d[2], retryAfterSeconds: d[3] },
      );
    }
  }

  /** Checks `liveness` every interval while acquire `id` waits; cancels it when gone. */
  #watch(id: number, liveness: Liveness): Timer {
    const interval = this.#options.livenessIntervalMs ?? 1_000;
    let timer: Timer | null = null;
    let stopped = false;
    const tick = async () => {
      timer = null;
      if (stopped || !this.#waiters.has(id)) return;
      if (!(await isAlive(liveness))) {
        if (!this.#waiters.has(id)) return;
        this.stats.abandoned++;
        this.#rpc?.apply([["cancel", id]]);
        return;
      }
      if (!stopped) timer = this.#clock.setTimer(interval, tick);
    };
    // A first look at once: a caller already gone (its signal aborted) does not queue
    // (`docs/semantics.md` §4.10).
    void tick();
    return {
      cancel: () => {
        stopped = true;
        timer?.cancel();
      },
    };
  }
}
