/**
 * What a priority-level Durable Object does, without the platform: the
 * server kit ({@linkcode SeatServer}: one level's queue set, whose limits
 * the controller sets, with the sessions and leases of WebSocket clients and
 * the seats of RPC callers, addressed by id), created at the controller's
 * first update, plus liveness checks of queued RPC callers. `level_object.ts` wraps it in
 * `DurableObject`/`RpcTarget` classes; tests drive it on a fake clock.
 * With a learned server concurrency limit (`docs/adaptive.md`) the
 * controller's updates carry it: the level is served at it (NominalCL,
 * LendableCL and BorrowingCL recomputed live, as for a new ServerCL), and
 * each seat it grants, to an RPC caller or a WebSocket client, is timed
 * from its dispatch to its release, with how its work ended as the release
 * says, for the controller to collect (`_latency_samples.ts`).
 * Internal to the Cloudflare adapter, except for its types, which
 * `PriorityLevelObject.createHost` (the seam of a subclass) names.
 *
 * @module
 */

import { type EffectiveConfiguration, withServerConcurrencyLimit } from "../config/effective.ts";
import { applyServerConcurrencyLimit } from "../coordinator/learned_limit.ts";
import { checkNumber } from "../_shared/errors.ts";
import { type LevelSamples, SampleRecorder } from "./_latency_samples.ts";
import type { SeatDemandReport } from "../coordinator/borrowing_controller.ts";
import type { Seat, SeatRequest } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { seatRequestError, type WireConfiguration } from "../protocol/wire.ts";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import { type ClientConnection, SeatServer } from "../server/seat_server.ts";
import type { SessionAdmission } from "../server/sessions.ts";
import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import type { CoordinatorSnapshot, SessionsSnapshot } from "../observe/types.ts";

/** A queued caller's pulse: resolving `false`, throwing or rejecting means it is gone. */
export interface Liveness {
  /** True while the caller still wants its seat. */
  alive(): boolean | Promise<boolean>;
}

/** What the controller pushes to a level object. */
export interface LevelUpdate {
  /** Increases with every configuration; an older one is ignored. */
  version: number;
  /** The configuration (every object), or `null` when only the limits change. */
  configuration: WireConfiguration | null;
  /** Current limits by level (the object takes its own). */
  limits: Record<string, number>;
  /**
   * The server concurrency limit learned from latency (`"auto"`), which
   * the configuration is served at instead of its own; absent for a static
   * limit. While it is given, the object samples its seats' latency.
   */
  serverConcurrencyLimit?: number;
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
  /** The level's metrics (flow control plus the server kit's). */
  readonly metrics: FlowcontrolMetrics;
  #clock: Clock;
  #options: LevelHostOptions;
  #level: string | null = null;
  #version = -1;
  #server: SeatServer | null = null;
  #samples: SampleRecorder | null = null;

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
    return this.#server?.configuration ?? null;
  }

  /**
   * The server kit (`null` before the first update).
   *
   * @internal For the level object.
   */
  get server(): SeatServer | null {
    return this.#server;
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
    const learned = update.serverConcurrencyLimit;
    if (learned !== undefined) {
      checkNumber(
        learned,
        (n) => Number.isSafeInteger(n) && n > 0,
        () =>
          `Cannot apply a learned server concurrency limit: it must be a positive integer, got ${learned}`,
      );
    }
    if (update.configuration !== null && update.version > this.#version) {
      const resolved = (this.#options.resolve ?? effectiveFromWire)(update.configuration);
      if (resolved === null) {
        throw new TypeError(`Cannot apply configuration version ${update.version}: it is invalid`);
      }
      const config = learned === undefined
        ? resolved
        : withServerConcurrencyLimit(resolved, learned);
      if (this.#server === null) {
        this.#server = new SeatServer(config, update.configuration, {
          clock: this.#clock,
          levels: [level],
          borrowing: "external",
          metrics: this.metrics,
          token: this.#options.token ?? null,
          track: (seat) => this.#track(seat),
          ...(this.#options.leaseMs !== undefined && { leaseMs: this.#options.leaseMs }),
          ...(this.#options.graceMs !== undefined && { graceMs: this.#options.graceMs }),
        });
        this.#level = level;
      } else {
        this.#server.configure(config, update.configuration);
      }
      this.#version = update.version;
    } else if (learned !== undefined && this.#server !== null) {
      // A new ServerCL, digested live: nothing that waits is dropped or reordered.
      applyServerConcurrencyLimit(this.#server.coordinator, learned);
    }
    if (learned === undefined) {
      // Seats sampled until now record into the recorder let go of here: nobody collects it.
      this.#samples = null;
    } else {
      this.#samples ??= new SampleRecorder(
        this.#clock,
        () => this.#server?.coordinator.seatDemand() ?? 0,
      );
    }
    this.#server?.setCurrentLimits(
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
  acquire(request: SeatRequest, liveness?: Liveness): Promise<SessionAdmission> {
    const error = seatRequestError(request);
    if (error !== null) return Promise.reject(error);
    const server = this.#server;
    if (server === null) {
      return Promise.reject(new TypeError("Cannot acquire a seat: the level has no configuration"));
    }
    if (request.priorityLevel !== this.#level) {
      return Promise.resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
    }
    let id = 0;
    const decided = server.acquire(request, (started) => id = started);
    // Only a queued request has a caller to watch: one decided at once is answered now.
    if (liveness === undefined || !server.isWaiting(id)) {
      return decided.then((a) => this.#count(a));
    }
    const watch = this.#watch(server, id, liveness);
    return decided.then(async (a) => {
      watch.cancel();
      // Only a caller that waited may have gone meanwhile; one admitted at once just called.
      if (!a.admitted || a.waitedMs === 0 || (await isAlive(liveness))) {
        return this.#count(a);
      }
      // Given back unused: no sample (initialized() gives the seats back as release() does).
      server.initialized(a.seatId);
      this.stats.abandoned++;
      return { admitted: false, reason: "cancelled", retryAfterSeconds: 1 };
    });
  }

  /**
   * Gives seat `id` back (unknown or already released ids are ignored),
   * with the time the caller measured and how its work ended, when it says.
   */
  release(seatId: number, executionMs?: number, outcome?: SampleOutcome): void {
    this.#server?.release(seatId, executionMs, outcome);
  }

  /**
   * Watch-style early release of seat `id`'s seats (`docs/semantics.md`
   * §5.5); no sample: a long-running request's time is its stream's.
   */
  initialized(seatId: number): void {
    this.#server?.initialized(seatId);
  }

  /** Starts seat `id`'s lease again; false when the seat is gone (expired or released). */
  renew(seatId: number): boolean {
    return this.#server?.renew(seatId) ?? false;
  }

  /** For the controller: the level's seat demand since the last call. */
  collectSeatDemand(): SeatDemandReport[] {
    return this.#server?.collectSeatDemand() ?? [];
  }

  /**
   * For the controller: the latency samples of the seats released since
   * the last call, or `null` when the limit is static (nothing is sampled).
   *
   * @internal For the level object.
   */
  collectSamples(): LevelSamples | null {
    return this.#samples?.collect() ?? null;
  }

  /** Takes back every seat whose lease is over (the object's alarm calls this). */
  expireDue(): void {
    this.#server?.expireDue();
  }

  /** Clock time of the next lease to fall due, or `null` when no seat is held. */
  nextLeaseDue(): number | null {
    return this.#server?.nextLeaseDue() ?? null;
  }

  /** Milliseconds until the next lease falls due (0 when overdue), or `null` when no seat is held. */
  nextLeaseInMs(): number | null {
    const due = this.nextLeaseDue();
    return due === null ? null : Math.max(0, due - this.#clock.now());
  }

  /**
   * A WebSocket client's connection (`src/protocol/PROTOCOL.md`): feed it
   * the frames received; it sends through `send`.
   *
   * @throws {TypeError} when the object has no configuration yet.
   * @internal For the level object.
   */
  connect(
    send: (text: string) => void,
    close: (code: number, reason: string) => void,
  ): ClientConnection {
    if (this.#server === null) {
      throw new TypeError("Cannot accept a connection: the level has no configuration");
    }
    return this.#server.connect({ send, close });
  }

  /** The level's state, for dumps and metrics. */
  snapshot(options: SnapshotOptions = {}): CoordinatorSnapshot {
    const now = this.#clock.now();
    return this.#server?.snapshot(options) ?? {
      nowMs: now,
      wallClockMs: this.#clock.wallNow?.() ?? now,
      serverConcurrencyLimit: 0,
      seatFairFraction: 0,
      levels: [],
    };
  }

  /**
   * The sessions and reclaimed seats (`dump_sessions`), or `null` before the first update.
   *
   * @internal For the admin routes.
   */
  sessionsSnapshot(): SessionsSnapshot | null {
    return this.#server?.sessionsSnapshot() ?? null;
  }

  /** Ends every session, answers waiters `unavailable`. */
  close(): void {
    this.#server?.close();
  }

  /** Counts a grant to an RPC caller. */
  #count(a: SessionAdmission): SessionAdmission {
    if (a.admitted) this.stats.granted++;
    return a;
  }

  /** With a learned limit, `seat` (granted now) as a sample, else `seat`. */
  #track(seat: Seat): Seat {
    const samples = this.#samples;
    const limit = this.#server?.coordinator.configuration.serverConcurrencyLimit;
    return samples === null || limit === undefined ? seat : samples.track(seat, limit);
  }

  /** Checks `liveness` every interval while acquire `id` waits; cancels it when gone. */
  #watch(server: SeatServer, id: number, liveness: Liveness): Timer {
    const interval = this.#options.livenessIntervalMs ?? 1_000;
    let timer: Timer | null = null;
    let stopped = false;
    const tick = async () => {
      timer = null;
      if (stopped || !server.isWaiting(id)) return;
      if (!(await isAlive(liveness))) {
        if (stopped || !server.isWaiting(id)) return;
        this.stats.abandoned++;
        server.cancel(id);
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
