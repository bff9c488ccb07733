/**
 * The Worker side of the Cloudflare topology, without the platform: a
 * {@linkcode Coordinator} whose seats come from one Durable Object per
 * priority level over RPC. Each acquire is bounded by its queue wait limit
 * plus a margin; an object that fails (`overloaded`, an exception, a
 * timeout) leads to the policy (`local`, `open` or `closed`), never to a
 * hang. `coordinator.ts` binds it to Durable Object namespaces. Internal to
 * the Cloudflare adapter.
 *
 * @module
 */

import type { EffectiveConfiguration } from "../config/effective.ts";
import { Fallback, type UnreachablePolicy } from "../remote/fallback.ts";
import { isPlainSeatRequest } from "../protocol/fast_check.ts";
import { RemoteSeat, type SeatOwner } from "../remote/remote_seat.ts";
import { DEFAULT_FALLBACK_FRACTION } from "../remote/client_types.ts";
import {
  DEFAULT_QUEUE_WAIT_LIMIT_MS,
  MAX_QUEUE_WAIT_LIMIT_MS,
} from "../coordinator/seat_request.ts";
import type {
  AcquireOptions,
  Admission,
  Coordinator,
  Rejected,
  SeatRequest,
} from "../coordinator/types.ts";
import { seatRequestProblem, type WireConfiguration } from "../protocol/wire.ts";
import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import type { LevelUpdate, Liveness } from "./_level_host.ts";

/** A seat as a level object hands it over RPC. */
export interface SeatRpc {
  release(options?: { executionMs?: number }): unknown;
  initialized(): unknown;
  renew(): boolean | Promise<boolean>;
}

/** A level object's answer to `acquire` over RPC. */
export type RpcAdmission =
  | { admitted: true; seat: SeatRpc; waitedMs: number; leaseMs: number }
  | Rejected;

/** What the Worker calls on a level object. */
export interface LevelRpc {
  acquire(request: SeatRequest, liveness: Liveness): Promise<RpcAdmission>;
}

/** What the Worker calls on the controller. */
export interface ControllerRpc {
  levelUpdate(): Promise<LevelUpdate>;
}

/** Options of the Worker-side coordinator. */
export interface WorkerCoordinatorOptions {
  /** What to answer when a level object cannot decide (default `"local"`). */
  policy?: UnreachablePolicy;
  /**
   * The `local` policy's limiter: an embedded coordinator in this isolate
   * with `fraction` (default 0.1) of the server limit, serving
   * `configuration` until the controller's arrives.
   */
  fallback?: { configuration?: EffectiveConfiguration; fraction?: number };
  /** Added to a request's queue wait limit to make its deadline, in ms (default 1,000). */
  deadlineMarginMs?: number;
  /** How old the controller's configuration may get before it is fetched again (default 10 s). */
  configurationRefreshMs?: number;
  /** How long the first requests wait for the controller's configuration, in ms (default 2,000). */
  readyTimeoutMs?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
}

/** Counters of the Worker-side coordinator. */
export interface WorkerCoordinatorStats {
  /** Acquires answered by the policy (object failed or too slow). */
  fallbacks: number;
  /** Calls to level objects that failed. */
  errors: number;
  /** Seats granted after their acquire had been answered: given back at once. */
  lateReleases: number;
  /** Held seats the level object no longer knew at renewal (lease expired, object restarted). */
  lost: number;
}

interface Held {
  stub: SeatRpc;
  grantedAt: number;
  renew: Timer | null;
}

function readSignal(options: AcquireOptions | undefined): AbortSignal | undefined {
  const s = options?.signal;
  return typeof s === "function" ? s() : s;
}

function dispose(stub: unknown): void {
  try {
    (stub as { [Symbol.dispose]?: () => void })[Symbol.dispose]?.();
  } catch {
    // Already gone.
  }
}

/** Calls `stub` (errors ignored: the object's lease gives the seat back), then lets go of it. */
function finish(stub: SeatRpc, call: (stub: SeatRpc) => unknown): void {
  let result: unknown;
  try {
    result = call(stub);
  } catch {
    result = undefined;
  }
  Promise.resolve(result).catch(() => {}).finally(() => dispose(stub));
}

/** Seats from level objects over RPC, with the policy as a net. */
export class WorkerCoordinator implements Coordinator, SeatOwner {
  /** Counters (a live object). */
  readonly stats: WorkerCoordinatorStats = { fallbacks: 0, errors: 0, lateReleases: 0, lost: 0 };
  #level: (name: string) => LevelRpc;
  #controller: ControllerRpc | null;
  #liveness: (signal: AbortSignal | undefined) => Liveness;
  #clock: Clock;
  #marginMs: number;
  #refreshMs: number;
  #readyTimeoutMs: number;
  #fallback: Fallback;
  #configuration: WireConfiguration | null = null;
  #version = -1;
  #fetchedAt = -Infinity;
  #fetching: Promise<void> | null = null;
  #listeners = new Set<(c: WireConfiguration) => void>();
  #held = new Map<number, Held>();
  #nextId = 0;

  /**
   * Seats from `level(name)`'s object; configuration from `controller`
   * (or none); `liveness(signal)` makes the pulse handed with each acquire.
   *
   * @throws {TypeError} or {RangeError} for an invalid option.
   */
  constructor(
    level: (name: string) => LevelRpc,
    controller: ControllerRpc | null,
    liveness: (signal: AbortSignal | undefined) => Liveness,
    options: WorkerCoordinatorOptions = {},
  ) {
    const policy = options.policy ?? "local";
    if (!["local", "open", "closed"].includes(policy)) {
      throw new TypeError(
        `Cannot create the coordinator: policy must be local, open or closed, got ${
          JSON.stringify(policy)
        }`,
      );
    }
    const fraction = options.fallback?.fraction ?? DEFAULT_FALLBACK_FRACTION;
    if (!(fraction > 0 && fraction <= 1)) {
      throw new RangeError(
        `Cannot create the coordinator: fallback.fraction must be in (0, 1], got ${fraction}`,
      );
    }
    this.#level = level;
    this.#controller = controller;
    this.#liveness = liveness;
    this.#clock = options.clock ?? systemClock;
    this.#marginMs = options.deadlineMarginMs ?? 1_000;
    this.#refreshMs = options.configurationRefreshMs ?? 10_000;
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 2_000;
    this.#fallback = new Fallback(
      policy,
      fraction,
      options.fallback?.configuration ?? null,
      this.#clock,
    );
  }

  /** The controller's configuration, once fetched. */
  get configuration(): WireConfiguration | null {
    return this.#configuration;
  }

  /** Calls `listener` with every new configuration; returns the unsubscriber. */
  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Resolves once the controller's configuration is in, or after
   * `readyTimeoutMs` (default 2 s) without it: the middleware then
   * classifies with its local configuration. `apf()` waits for it before
   * the first requests of an isolate.
   */
  ready(): Promise<void> {
    if (this.#configuration !== null || this.#controller === null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.#clock.setTimer(this.#readyTimeoutMs, resolve);
      void this.refreshConfiguration().then(() => {
        timer.cancel();
        resolve();
      });
    });
  }

  /**
   * Fetches the controller's configuration (at most one fetch at a time);
   * a failure keeps the one in force.
   */
  refreshConfiguration(): Promise<void> {
    const controller = this.#controller;
    if (controller === null) return Promise.resolve();
    this.#fetching ??= (async () => {
      try {
        const update = await controller.levelUpdate();
        this.#fetchedAt = this.#clock.now();
        if (update.configuration === null || update.version <= this.#version) return;
        this.#version = update.version;
        this.#configuration = update.configuration;
        this.#fallback.serverConfiguration(update.configuration);
        for (const listener of [...this.#listeners]) {
          try {
            listener(update.configuration);
          } catch (e) {
            console.error("apf: an onConfiguration listener threw:", e);
          }
        }
      } catch {
        this.stats.errors++;
      } finally {
        this.#fetching = null;
      }
    })();
    return this.#fetching;
  }

  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    // A malformed request is the caller's bug: refused here, as the embedded coordinator would.
    const problem = isPlainSeatRequest(request) ? null : seatRequestProblem(request);
    if (problem !== null) {
      const Class = problem.error === "RangeError" ? RangeError : TypeError;
      return Promise.reject(new Class(problem.message));
    }
    if (this.#clock.now() - this.#fetchedAt >= this.#refreshMs) void this.refreshConfiguration();
    const signal = readSignal(options);
    const waitLimitMs = Math.min(
      request.waitLimitMs ?? DEFAULT_QUEUE_WAIT_LIMIT_MS,
      MAX_QUEUE_WAIT_LIMIT_MS,
    );
    const started = this.#clock.now();
    return new Promise<Admission>((resolve, reject) => {
      let settled = false;
      const settle = (a: Admission | Promise<Admission>): void => {
        settled = true;
        timer.cancel();
        signal?.removeEventListener("abort", onAbort);
        resolve(a);
      };
      const byPolicy = (late: boolean): Promise<Admission> => {
        this.stats.fallbacks++;
        const left = Math.max(0, waitLimitMs - (this.#clock.now() - started));
        return this.#fallback.answer({ ...request, waitLimitMs: left }, signal, late);
      };
      const timer = this.#clock.setTimer(waitLimitMs + this.#marginMs, () => {
        if (!settled) settle(byPolicy(true));
      });
      const onAbort = (): void => {
        if (!settled) settle({ admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
      };
      signal?.addEventListener("abort", onAbort);
      let call: Promise<RpcAdmission>;
      try {
        call = this.#level(request.priorityLevel).acquire(request, this.#liveness(signal));
      } catch (e) {
        call = Promise.reject(e);
      }
      call.then((a) => {
        if (settled) {
          // Answered already (deadline, abort): a seat granted now goes back at once.
          if (a.admitted) {
            this.stats.lateReleases++;
            finish(a.seat, (stub) => stub.release({ executionMs: 0 }));
          }
          return;
        }
        if (!a.admitted) {
          settle({ admitted: false, reason: a.reason, retryAfterSeconds: a.retryAfterSeconds });
          return;
        }
        settle({ admitted: true, seat: this.#hold(request, a), waitedMs: a.waitedMs });
      }, (e: unknown) => {
        if (settled) return;
        // The object refused the request itself (TypeError or RangeError, as the embedded
        // coordinator throws): the caller's bug. Anything else is the object failing.
        const name = (e as { name?: unknown } | null)?.name;
        if (name === "TypeError" || name === "RangeError") {
          settled = true;
          timer.cancel();
          signal?.removeEventListener("abort", onAbort);
          reject(e);
          return;
        }
        this.stats.errors++;
        settle(byPolicy(false));
      });
    });
  }

  /** A seat ended (from {@linkcode RemoteSeat}): tell its level object. */
  ended(seat: RemoteSeat, measured: number | null, initialized: boolean): void {
    const held = this.#held.get(seat.id);
    if (held === undefined) return;
    this.#held.delete(seat.id);
    held.renew?.cancel();
    if (initialized) {
      finish(held.stub, (stub) => stub.initialized());
      return;
    }
    const executionMs = measured ?? this.#clock.now() - held.grantedAt;
    finish(held.stub, (stub) => stub.release({ executionMs }));
  }

  /** Stops the local limiter; held seats stay with their objects until released. */
  close(): void {
    this.#fallback.close();
  }

  #hold(request: SeatRequest, a: Extract<RpcAdmission, { admitted: true }>): RemoteSeat {
    const id = ++this.#nextId;
    const now = this.#clock.now();
    const seat = new RemoteSeat(this, id, request.priorityLevel, now);
    const held: Held = { stub: a.seat, grantedAt: now, renew: null };
    this.#held.set(id, held);
    // A long request renews its lease at half its term.
    const every = Math.max(1, a.leaseMs / 2);
    const renew = (): void => {
      held.renew = this.#clock.setTimer(every, async () => {
        held.renew = null;
        let ok = false;
        try {
          ok = await held.stub.renew();
        } catch {
          ok = false;
        }
        if (this.#held.get(id) !== held) return;
        if (ok) return renew();
        this.#held.delete(id);
        this.stats.lost++;
        seat.lose();
        dispose(held.stub);
      });
    };
    renew();
    return seat;
  }
}
