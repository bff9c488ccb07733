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
 * `webSocket`) and the injected {@linkcode Clock}. The connection itself
 * (hello, connect timeout, backoff, decoding) is `_connection.ts`; this file
 * keeps the books of requests and seats.
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

import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import { Connection, globalWebSocket } from "./_connection.ts";
import { Fallback, unavailable, type UnreachablePolicy } from "./fallback.ts";
import { RemoteSeat, type SeatOwner } from "./remote_seat.ts";
import { Coalescer } from "../protocol/coalescer.ts";
import {
  DEFAULT_QUEUE_WAIT_LIMIT_MS,
  MAX_QUEUE_WAIT_LIMIT_MS,
} from "../coordinator/seat_request.ts";
import type { AcquireOptions, Admission, SeatRequest } from "../coordinator/types.ts";
import {
  encodeMessage,
  seatRequestProblem,
  type ServerMessage,
  type WireConfiguration,
  type WireDecision,
  type WireOp,
} from "../protocol/wire.ts";

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
import {
  type ClientState,
  type ConnectCoordinatorOptions,
  CoordinatorRefusedError,
  DEFAULT_FALLBACK_FRACTION,
  type RemoteCoordinator,
  type RemoteCoordinatorStats,
} from "./client_types.ts";

/** An acquire answered by the `local` policy, perhaps waiting in the local limiter. */
interface FallbackWaiter {
  request: SeatRequest;
  signal: AbortSignal | undefined;
  waitEndsAt: number;
  /** Aborted to take it out of the local queue when the coordinator is reached again. */
  moving: AbortController;
  moved: boolean;
}

/** An acquire waiting for its decision. */
interface Pending {
  id: number;
  request: SeatRequest;
  /** When its queue wait limit ends, on the client's clock. */
  waitEndsAt: number;
  resolve(admission: Admission): void;
  reject(error: unknown): void;
  deadline: Timer;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | null;
  /** Sent on the current connection. */
  sent: boolean;
  /** Its signal was aborted before it could be sent. */
  cancelOnSend: boolean;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!(v >= 0 && v < Infinity)) {
    throw new RangeError(`Cannot connect a coordinator: ${name} must be >= 0, got ${v}`);
  }
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
    throw new TypeError(`Cannot connect a coordinator: invalid URL ${String(url)}`);
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
    throw new TypeError(`Cannot connect a coordinator: expected a ws: or wss: URL, got ${parsed}`);
  }
  const policy = options.policy ?? "local";
  if (!["local", "open", "closed"].includes(policy)) {
    throw new RangeError(`Cannot connect a coordinator: unknown policy ${String(policy)}`);
  }
  const fraction = options.fallback?.fraction ?? DEFAULT_FALLBACK_FRACTION;
  if (!(fraction > 0 && fraction <= 1)) {
    throw new RangeError(
      `Cannot connect a coordinator: fraction must be in (0, 1], got ${fraction}`,
    );
  }
  return new RemoteClient(parsed.href, options, policy, fraction);
}

class RemoteClient implements RemoteCoordinator, SeatOwner {
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
  #clock: Clock;
  #marginMs: number;
  #fallback: Fallback;
  #connection: Connection;
  #renewTimer: Timer | null = null;
  #session: string | null = null;
  #leaseMs = 30_000;
  #configuration: WireConfiguration | null = null;
  #listeners = new Set<(c: WireConfiguration) => void>();
  #nextId = 0;
  #pending = new Map<number, Pending>();
  #held = new Map<number, RemoteSeat>();
  /** Sent acquires answered locally (deadline): a late admission is released at once. */
  #abandoned = new Set<number>();
  #ops = new Coalescer<WireOp>((ops) => this.#connection.send(encodeMessage({ t: "ops", ops })));
  #closedPromise: Promise<void> | null = null;
  #inFallback = new Set<FallbackWaiter>();
  /** Waiting for the first connection attempt's outcome (welcomed, or lost). */
  #firstAttempt: Array<{ resolve(): void; reject(e: unknown): void }> | null = [];
  /** Set once the server refused the token: every call rejects with it. */
  #refusal: CoordinatorRefusedError | null = null;
  #url: string;

  constructor(
    url: string,
    options: ConnectCoordinatorOptions,
    policy: UnreachablePolicy,
    fraction: number,
  ) {
    this.#url = url;
    this.#clock = options.clock ?? systemClock;
    this.#marginMs = positive("deadlineMarginMs", options.deadlineMarginMs, 1_000);
    const connectTimeoutMs = positive("connectTimeoutMs", options.connectTimeoutMs, 3_000);
    const initialMs = positive("reconnect.initialMs", options.reconnect?.initialMs, 100);
    const maxMs = positive("reconnect.maxMs", options.reconnect?.maxMs, 5_000);
    this.#fallback = new Fallback(
      policy,
      fraction,
      options.fallback?.configuration ?? null,
      this.#clock,
    );
    this.#connection = new Connection({
      url,
      token: options.token ?? null,
      name: options.client ?? "apf",
      clock: this.#clock,
      connectTimeoutMs,
      backoff: {
        initialMs,
        maxMs: Math.max(initialMs, maxMs),
        random: options.random ?? Math.random,
      },
      webSocket: options.webSocket ?? globalWebSocket,
      stats: this.stats,
    }, {
      session: () => this.#session,
      welcome: (m) => this.#welcome(m),
      config: (c) => this.#configure(c),
      decisions: (ds) => {
        for (const d of ds) this.#decide(d);
      },
      error: (m) => {
        if (m.id !== null) this.#refused(m.id, m.code, m.message);
      },
      lost: () => this.#lost(),
      refused: (reason) => this.#refusedToken(reason),
    });
    this.#connection.start();
  }

  get state(): ClientState {
    return this.#connection.state;
  }

  get configuration(): WireConfiguration | null {
    return this.#configuration;
  }

  get session(): string | null {
    return this.#session;
  }

  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  ready(): Promise<void> {
    if (this.#refusal !== null) return Promise.reject(this.#refusal);
    const waiting = this.#firstAttempt;
    if (waiting === null) return Promise.resolve();
    return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
  }

  /** The first connection attempt ended (welcomed, lost, refused, or the client closed). */
  #attempted(): void {
    const waiting = this.#firstAttempt;
    this.#firstAttempt = null;
    for (const w of waiting ?? []) {
      if (this.#refusal !== null) w.reject(this.#refusal);
      else w.resolve();
    }
  }

  /**
   * The server refused the token: a configuration error, reported to every
   * caller, never answered by the unreachable policy (which would admit
   * past the shared limit, once per such client).
   */
  #refusedToken(reason: string): void {
    this.#refusal = new CoordinatorRefusedError(this.#url, reason);
    this.#attempted();
    for (const p of [...this.#pending.values()]) {
      this.#settle(p);
      p.reject(this.#refusal);
    }
    for (const seat of this.#held.values()) seat.lose();
    this.#held.clear();
    this.#renewTimer?.cancel();
    this.#renewTimer = null;
  }

  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    if (typeof request !== "object" || request === null) {
      return Promise.reject(
        new TypeError(`Cannot acquire a seat: request must be an object, got ${String(request)}`),
      );
    }
    const problem = seatRequestProblem(request);
    if (problem !== null) {
      const E = problem.error === "RangeError" ? RangeError : TypeError;
      return Promise.reject(new E(problem.message));
    }
    if (this.#refusal !== null) return Promise.reject(this.#refusal);
    const state = this.#connection.state;
    if (state === "closed") return Promise.resolve(unavailable());
    if (state === "disconnected") {
      return this.#byPolicy(request, readSignal(options), false);
    }
    return new Promise<Admission>((resolve, reject) => {
      const waitLimitMs = Math.min(
        request.waitLimitMs ?? DEFAULT_QUEUE_WAIT_LIMIT_MS,
        MAX_QUEUE_WAIT_LIMIT_MS,
      );
      const p: Pending = {
        id: this.#nextId++,
        request,
        waitEndsAt: this.#clock.now() + waitLimitMs,
        resolve,
        reject,
        deadline: null!,
        signal: undefined,
        onAbort: null,
        sent: false,
        cancelOnSend: false,
      };
      p.deadline = this.#clock.setTimer(waitLimitMs + this.#marginMs, () => this.#deadline(p));
      this.#pending.set(p.id, p);
      if (this.#connection.state === "connected") this.#sendAcquire(p);
      // Over the wire every request waits a round trip: the signal is read now.
      const signal = readSignal(options);
      if (signal === undefined) return;
      p.signal = signal;
      if (signal.aborted) {
        // An aborted request still runs if it need not wait (`docs/semantics.md` §4.10); the
        // server decides.
        if (p.sent) this.#ops.push(["cancel", p.id]);
        else p.cancelOnSend = true;
        return;
      }
      p.onAbort = () => this.#abort(p);
      signal.addEventListener("abort", p.onAbort, { once: true });
    });
  }

  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null {
    return this.#fallback.snapshot(options);
  }

  close(): Promise<void> {
    if (this.#closedPromise !== null) return this.#closedPromise;
    this.#attempted();
    this.#connection.stop();
    this.#renewTimer?.cancel();
    this.#renewTimer = null;
    for (const p of [...this.#pending.values()]) {
      this.#settle(p);
      // Cancelled before the releases below, so that no freed seat goes to it.
      if (p.sent && this.#connection.welcomed) this.#ops.push(["cancel", p.id]);
      p.resolve(unavailable());
    }
    for (const seat of this.#held.values()) {
      seat.lose();
      if (this.#connection.welcomed) this.#ops.push(["release", seat.id, null]);
    }
    this.#held.clear();
    this.#ops.flush();
    this.#fallback.close();
    this.#closedPromise = this.#connection.closeSocket();
    return this.#closedPromise;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- seats --------------------------------------------------------------

  ended(seat: RemoteSeat, executionMs: number | null, initialized: boolean): void {
    if (this.#held.get(seat.id) !== seat) return;
    this.#held.delete(seat.id);
    // While disconnected the release cannot leave: after a resume, the seat
    // comes back in `reclaimed` and is released then.
    if (this.#connection.state !== "connected") return;
    this.#ops.push(initialized ? ["initialized", seat.id] : ["release", seat.id, executionMs]);
  }

  /** Renews, every half lease, the leases of seats held for a quarter lease or more. */
  #armRenewals(): void {
    const state = this.#connection.state;
    if (this.#renewTimer !== null || this.#held.size === 0 || state === "closed") return;
    this.#renewTimer = this.#clock.setTimer(this.#leaseMs / 2, () => {
      this.#renewTimer = null;
      if (this.#connection.state === "connected") {
        const now = this.#clock.now();
        for (const seat of this.#held.values()) {
          if (now - seat.leasedAt >= this.#leaseMs / 4) {
            seat.leasedAt = now;
            this.#ops.push(["renew", seat.id]);
          }
        }
      }
      this.#armRenewals();
    });
  }

  // ---- acquires -----------------------------------------------------------

  #sendAcquire(p: Pending): void {
    p.sent = true;
    this.#ops.push(["acquire", p.id, p.request]);
    if (p.cancelOnSend) this.#ops.push(["cancel", p.id]);
  }

  #abort(p: Pending): void {
    if (this.#pending.get(p.id) !== p) return;
    if (p.sent) {
      this.#ops.push(["cancel", p.id]);
      return;
    }
    this.#settle(p);
    p.resolve({ admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
  }

  /** Forgets `p`: its timer and its signal listener go. */
  #settle(p: Pending): void {
    this.#pending.delete(p.id);
    p.deadline.cancel();
    if (p.onAbort !== null) p.signal?.removeEventListener("abort", p.onAbort);
    p.onAbort = null;
  }

  #deadline(p: Pending): void {
    if (this.#pending.get(p.id) !== p) return;
    this.#settle(p);
    if (p.sent) {
      this.#abandoned.add(p.id);
      this.#ops.push(["cancel", p.id]);
    }
    this.#byPolicy(p.request, p.signal, true).then(p.resolve, p.reject);
  }

  #byPolicy(
    request: SeatRequest,
    signal: AbortSignal | undefined,
    late: boolean,
  ): Promise<Admission> {
    this.stats.fallbacks++;
    if (late || this.#fallback.policy !== "local") {
      return this.#fallback.answer(request, signal, late);
    }
    // It may queue in the local limiter: if the coordinator is back meanwhile, it moves there
    // (see #handOver), so that the local queue does not go on dispatching past the shared limit.
    const waitLimitMs = request.waitLimitMs ?? DEFAULT_QUEUE_WAIT_LIMIT_MS;
    const w: FallbackWaiter = {
      request,
      signal,
      waitEndsAt: this.#clock.now() + Math.min(waitLimitMs, MAX_QUEUE_WAIT_LIMIT_MS),
      moving: new AbortController(),
      moved: false,
    };
    this.#inFallback.add(w);
    const mine = w.moving.signal;
    const combined = signal === undefined ? mine : AbortSignal.any([signal, mine]);
    return this.#fallback.answer(request, combined, false).then((admission) => {
      this.#inFallback.delete(w);
      if (!w.moved || admission.admitted || admission.reason !== "cancelled") return admission;
      // Taken out of the local queue for the coordinator, with what is left of its wait.
      const left = Math.max(0, w.waitEndsAt - this.#clock.now());
      return this.acquire(
        { ...request, waitLimitMs: left },
        signal === undefined ? {} : { signal },
      );
    });
  }

  /** The coordinator is reached: what waits in the local limiter moves to it. */
  #handOver(): void {
    for (const w of this.#inFallback) {
      if (w.signal?.aborted === true) continue;
      w.moved = true;
      w.moving.abort();
    }
  }

  // ---- connection ---------------------------------------------------------

  /** The connection is gone: what waited on it gets the policy's answer. */
  #lost(): void {
    this.#attempted();
    this.#ops.clear();
    // The server cancels a closed connection's waiters; admissions it sent late come back in `reclaimed`.
    this.#abandoned.clear();
    const now = this.#clock.now();
    for (const p of [...this.#pending.values()]) {
      this.#settle(p);
      // Only what is left of its wait limit: the deadline still holds.
      const waitLimitMs = Math.max(0, p.waitEndsAt - now);
      this.#byPolicy({ ...p.request, waitLimitMs }, p.signal, false).then(p.resolve, p.reject);
    }
  }

  /** Reconciles the seats held with those the server kept, then sends what waited. */
  #welcome(m: Extract<ServerMessage, { t: "welcome" }>): void {
    const resumed = this.#session !== null && m.session === this.#session;
    const reclaimed = new Set(resumed ? m.reclaimed : []);
    for (const [id, seat] of this.#held) {
      if (reclaimed.delete(id)) {
        this.stats.reclaimed++;
        continue;
      }
      seat.lose();
      this.#held.delete(id);
      this.stats.lost++;
    }
    // Held by the server, not by us: released while disconnected, or granted while the decision was lost.
    for (const id of reclaimed) {
      this.#ops.push(["release", id, null]);
      this.stats.lateReleases++;
    }
    this.#session = m.session;
    this.#leaseMs = m.leaseMs;
    this.#configure(m.config);
    for (const p of this.#pending.values()) if (!p.sent) this.#sendAcquire(p);
    const now = this.#clock.now();
    for (const seat of this.#held.values()) seat.leasedAt = now;
    this.#renewTimer?.cancel();
    this.#renewTimer = null;
    this.#armRenewals();
    this.#handOver();
    this.#attempted();
  }

  #configure(config: WireConfiguration): void {
    this.#configuration = config;
    this.#fallback.serverConfiguration(config);
    for (const listener of [...this.#listeners]) {
      try {
        listener(config);
      } catch (e) {
        console.error("apf: an onConfiguration listener threw:", e);
      }
    }
  }

  #decide(d: WireDecision): void {
    const id = d[0];
    if (d[1] === "expired") {
      const seat = this.#held.get(id);
      if (seat === undefined) return;
      this.#held.delete(id);
      seat.lose();
      this.stats.lost++;
      return;
    }
    const p = this.#pending.get(id);
    if (p === undefined || !p.sent) {
      // A decision for an acquire answered already (or never made): never keep its seat.
      this.#abandoned.delete(id);
      if (d[1] === "admitted") {
        this.#ops.push(["release", id, null]);
        this.stats.lateReleases++;
      }
      return;
    }
    this.#settle(p);
    if (d[1] === "rejected") {
      p.resolve({ admitted: false, reason: d[2], retryAfterSeconds: d[3] });
      return;
    }
    const seat = new RemoteSeat(this, id, p.request.priorityLevel, this.#clock.now());
    this.#held.set(id, seat);
    this.#armRenewals();
    p.resolve({ admitted: true, seat, waitedMs: d[2] });
  }

  #refused(id: number, code: string, message: string): void {
    this.#abandoned.delete(id);
    const p = this.#pending.get(id);
    if (p === undefined || !p.sent) return;
    this.#settle(p);
    if (code === "invalid-request") p.reject(new TypeError(message));
    else this.#byPolicy(p.request, p.signal, false).then(p.resolve, p.reject);
  }
}

function readSignal(options: AcquireOptions | undefined): AbortSignal | undefined {
  const s = options?.signal;
  return typeof s === "function" ? s() : s;
}
