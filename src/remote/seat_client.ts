/**
 * The client kit: a {@linkcode Coordinator} whose seats come from a remote
 * coordinator through a {@linkcode SeatTransport}, whatever carries the
 * operations (a WebSocket session, Workers RPC). It keeps the books every
 * transport needs, once:
 *
 * - Deadlines. An acquire resolves at the latest when its queue wait limit
 *   plus a margin has passed, whatever the server does (dies, stalls,
 *   answers too late), with the policy's answer; a seat granted after its
 *   acquire was answered is given back at once, as an early release (no
 *   sample of a learned limit: it was never used), and so is
 *   one the server kept for a seat released while it could not be reached.
 * - The unreachable policy (`docs/semantics.md` §11.1): `local` (an
 *   embedded limiter at a fraction of the server's limit, whose waiting
 *   requests move to the coordinator once it is reached again), `open` or
 *   `closed`. An acquire made while the transport connects waits for it;
 *   one made while it is disconnected, or whose connection is lost, gets
 *   the policy's answer with what is left of its wait limit.
 * - Leases: held seats are renewed every half lease (those held for a
 *   quarter lease or more), while any is held; a seat the server no longer
 *   has is reported lost, and its release does nothing.
 * - A refused credential is a configuration error: every waiting and later
 *   acquire, and `ready()`, reject with it; no policy answers.
 * - A seat goes back exactly once: released, initialized, lost, or given
 *   back late, never two of them.
 * - The exempt level never crosses the network: its requests are admitted
 *   at once, here, as the embedded coordinator admits them, whatever the
 *   transport's state (`docs/architecture.md`, "The path of a request").
 *   Only the mandatory `exempt` level can be of type `Exempt`, as in
 *   Kubernetes' validation.
 *
 * Time is the injected {@linkcode Clock}'s.
 *
 * @module
 */

import type { EffectiveConfiguration } from "../config/effective.ts";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { type Deadline, Deadlines } from "../fairqueuing/deadlines.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import {
  DEFAULT_QUEUE_WAIT_LIMIT_MS,
  MAX_QUEUE_WAIT_LIMIT_MS,
} from "../coordinator/seat_request.ts";
import type { AcquireOptions, Admission, Coordinator, SeatRequest } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { seatRequestError, type WireConfiguration } from "../protocol/wire.ts";
import { checkNumber } from "../_shared/errors.ts";
import { DEFAULT_FALLBACK_FRACTION } from "./client_types.ts";
import { Fallback, unavailable, type UnreachablePolicy } from "./fallback.ts";
import { OpenSeat, RemoteSeat, type SeatOwner } from "./remote_seat.ts";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import { EXEMPT } from "../config/constants.ts";
import type { SeatTransport, TransportDecision, TransportEvents } from "./seat_transport.ts";

/** Options of a {@linkcode SeatClient}: those of the public clients with these names. */
export interface SeatClientOptions {
  /** What to answer when the coordinator cannot be reached (default `"local"`). */
  policy?: UnreachablePolicy;
  /** The `local` policy's limiter: its configuration until the coordinator's, and its fraction. */
  fallback?: { configuration?: EffectiveConfiguration; fraction?: number };
  /** Added to a request's queue wait limit to make its deadline, in ms (default 1,000). */
  deadlineMarginMs?: number;
  /** The clock of deadlines and renewals (default: the system clock). */
  clock?: Clock;
  /**
   * True when the server cannot measure a seat's execution (workerd's clock
   * stands still while a request computes): a release without
   * `executionMs` then reports the time the seat was held on this clock.
   */
  measureExecution?: boolean;
}

/** The counters the kit keeps, in the client's live stats object. */
export interface SeatClientStats {
  /** Acquires answered by the policy. */
  fallbacks: number;
  /** Seats granted after their acquire had been answered, or kept for a seat released: given back. */
  lateReleases: number;
  /** Held seats the server took back (lease expired, session not resumed, server restarted). */
  lost: number;
}

/**
 * An acquire waiting for its decision. Its deadline (queue wait limit plus
 * the margin) is an entry of the kit's deadline set, which keeps one timer
 * for all of them (`src/fairqueuing/deadlines.ts`).
 */
class Pending implements Deadline {
  /** What the caller awaits. */
  readonly promise: Promise<Admission>;
  resolve!: (admission: Admission) => void;
  reject!: (error: unknown) => void;
  /** Its signal's listener, while one is registered. */
  onAbort: (() => void) | null = null;
  /** Handed to the transport (on its current connection). */
  sent = false;
  /** Its signal was aborted before the acquire: the server decides (it may admit at once). */
  cancelOnSend = false;
  slot = -1;

  constructor(
    readonly id: number,
    readonly request: SeatRequest,
    /** When the kit answers it without the server: the wait limit plus the margin. */
    readonly endsAt: number,
    readonly signal: AbortSignal | undefined,
    readonly expire: (p: Pending) => void,
  ) {
    this.promise = new Promise<Admission>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  fire(): void {
    this.expire(this);
  }
}

const CANCELLED: Admission = { admitted: false, reason: "cancelled", retryAfterSeconds: 1 };

function readSignal(options: AcquireOptions | undefined): AbortSignal | undefined {
  const s = options?.signal;
  return typeof s === "function" ? s() : s;
}

/** The request's queue wait limit in ms, as the coordinator bounds it. */
function waitLimitOf(request: SeatRequest): number {
  return Math.min(request.waitLimitMs ?? DEFAULT_QUEUE_WAIT_LIMIT_MS, MAX_QUEUE_WAIT_LIMIT_MS);
}

/** Seats from a transport, with deadlines, the unreachable policy, late releases and leases. */
export class SeatClient implements Coordinator, SeatOwner, TransportEvents {
  #transport: SeatTransport;
  #stats: SeatClientStats;
  #clock: Clock;
  #marginMs: number;
  #measure: boolean;
  #fallback: Fallback;
  #configuration: WireConfiguration | null = null;
  #listeners = new Set<(c: WireConfiguration) => void>();
  #nextId = 0;
  /**
   * Every acquire waiting for its decision and every seat held, by acquire
   * id (a seat keeps its acquire's id): one map, in which a grant takes its
   * acquire's place, so that a client whose seats come and go does not grow
   * and shrink two maps tick after tick.
   */
  #byId = new Map<number, Pending | RemoteSeat>();
  /** How many of {@linkcode #byId} are held seats. */
  #heldCount = 0;
  /** Every acquire's deadline and the next lease renewal, on one timer. */
  #deadlines: Deadlines;
  #expire = (p: Pending): void => this.#deadline(p);
  /** The next lease renewal, in the deadline set while seats are held. */
  #renewal: Deadline | null = null;
  /** Waiting for the transport's first outcome (reachable, unreachable, refused), or `null`. */
  #firstAttempt: Array<{ resolve(): void; reject(e: unknown): void }> | null;
  #refusal: Error | null = null;
  #closed = false;

  /**
   * Checks `options` (messages start with `what`), then makes the transport
   * with `connect`, handing it the kit's events. `stats` is the client's
   * live counters object.
   *
   * @throws {TypeError} for an unknown policy; {RangeError} for a fraction or
   * margin out of range ({TypeError} when not a number).
   */
  constructor(
    what: string,
    options: SeatClientOptions,
    stats: SeatClientStats,
    connect: (events: TransportEvents) => SeatTransport,
  ) {
    const policy = options.policy ?? "local";
    if (!["local", "open", "closed"].includes(policy)) {
      throw new TypeError(`${what}: policy must be local, open or closed, got ${String(policy)}`);
    }
    const fraction = options.fallback?.fraction ?? DEFAULT_FALLBACK_FRACTION;
    checkNumber(
      fraction,
      (f) => f > 0 && f <= 1,
      () => `${what}: fraction must be in (0, 1], got ${String(fraction)}`,
    );
    const margin = options.deadlineMarginMs ?? 1_000;
    checkNumber(
      margin,
      (m) => m >= 0 && m < Infinity,
      () => `${what}: deadlineMarginMs must be >= 0, got ${String(margin)}`,
    );
    this.#stats = stats;
    this.#clock = options.clock ?? systemClock;
    this.#deadlines = new Deadlines(this.#clock);
    this.#marginMs = margin;
    this.#measure = options.measureExecution ?? false;
    const given = options.fallback?.configuration ?? null;
    this.#fallback = new Fallback(policy, fraction, given, this.#clock);
    this.#transport = connect(this);
    this.#firstAttempt = this.#transport.state === "connecting" ? [] : null;
  }

  /** The configuration the coordinator sent last, or `null`. */
  get configuration(): WireConfiguration | null {
    return this.#configuration;
  }

  /** Calls `listener` with every configuration the coordinator sends; returns the unsubscriber. */
  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Resolves once the transport's first connection attempt ended (at once
   * for a transport without connections).
   *
   * @throws {Error} (rejects) the refusal, when the server refused the credential.
   */
  ready(): Promise<void> {
    if (this.#refusal !== null) return Promise.reject(this.#refusal);
    const waiting = this.#firstAttempt;
    if (waiting === null) return Promise.resolve();
    return new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
  }

  /** The `local` policy's limiter's state, or `null` while it was never needed. */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null {
    return this.#fallback.snapshot(options);
  }

  /** Asks for a seat; see the module's documentation for what answers it. */
  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    if (typeof request !== "object" || request === null) {
      return Promise.reject(
        new TypeError(`Cannot acquire a seat: request must be an object, got ${String(request)}`),
      );
    }
    const error = seatRequestError(request);
    if (error !== null) return Promise.reject(error);
    if (this.#refusal !== null) return Promise.reject(this.#refusal);
    const state = this.#transport.state;
    if (this.#closed || state === "closed") return Promise.resolve(unavailable());
    if (request.priorityLevel === EXEMPT) {
      return Promise.resolve({
        admitted: true,
        seat: new OpenSeat(request.priorityLevel),
        waitedMs: 0,
      });
    }
    const signal = readSignal(options);
    if (state === "disconnected") return this.#byPolicy(request, signal, false);
    const p = new Pending(
      this.#nextId++,
      request,
      this.#clock.now() + waitLimitOf(request) + this.#marginMs,
      signal,
      this.#expire,
    );
    this.#byId.set(p.id, p);
    this.#deadlines.add(p);
    if (signal?.aborted === true) {
      // An aborted request still runs if it need not wait (`docs/semantics.md` §4.10): the
      // server decides.
      p.cancelOnSend = true;
    } else if (signal !== undefined) {
      this.#watch(p, signal);
    }
    if (state === "connected") this.#send(p);
    return p.promise;
  }

  /** Answers `p` when `signal` aborts (in a method of its own: no closure for an acquire without one). */
  #watch(p: Pending, signal: AbortSignal): void {
    p.onAbort = () => this.#abort(p);
    signal.addEventListener("abort", p.onAbort, { once: true });
  }

  /**
   * Answers waiting requests `unavailable` (cancelling them on the server)
   * and stops the local limiter. Held seats are given back now when
   * `releaseHeld`; otherwise they stay held, and renewed, until their
   * holders release them (a transport whose releases outlive the client).
   * Later acquires get `unavailable`.
   */
  close(releaseHeld: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#attempted();
    const t = this.#transport;
    const connected = t.state === "connected";
    for (const p of this.#waiting()) {
      this.#settle(p);
      // Cancelled before the releases below, so that no freed seat goes to it.
      if (p.sent && connected) t.cancel?.(p.id);
      p.resolve(unavailable());
    }
    if (releaseHeld) {
      for (const seat of this.#seats()) {
        this.#drop(seat);
        seat.lose();
        if (connected) t.release(seat.id, this.#executionMs(seat, null));
      }
    }
    if (this.#heldCount === 0) this.#stopRenewals();
    this.#fallback.close();
  }

  // ---- transport events ---------------------------------------------------

  /** The coordinator's configuration: kept, handed to the local limiter and the listeners. */
  configure(configuration: WireConfiguration): void {
    this.#configuration = configuration;
    const effective = effectiveFromWire(configuration);
    if (effective !== null) this.#fallback.serverConfiguration(effective);
    for (const listener of [...this.#listeners]) {
      try {
        listener(configuration);
      } catch (e) {
        console.error("apf: an onConfiguration listener threw:", e);
      }
    }
  }

  /** Reconciles the seats held with those the server kept, then sends what waited. */
  reachable(kept: Iterable<number>): number {
    const keep = new Set(kept);
    let reclaimed = 0;
    for (const seat of this.#seats()) {
      if (keep.delete(seat.id)) {
        reclaimed++;
        continue;
      }
      seat.lose();
      this.#drop(seat);
      this.#stats.lost++;
    }
    // Held by the server, not by us: released while unreachable, or granted while the decision was lost.
    for (const id of keep) this.#lateRelease(id);
    for (const p of this.#waiting()) if (!p.sent) this.#send(p);
    const now = this.#clock.now();
    for (const seat of this.#seats()) seat.leasedAt = now;
    this.#stopRenewals();
    this.#armRenewals();
    this.#fallback.handOver();
    this.#attempted();
    return reclaimed;
  }

  /** The connection is gone: what waited on it gets the policy's answer. */
  unreachable(): void {
    this.#attempted();
    // The server cancels a closed connection's waiters; seats it granted late come back in `kept`.
    const now = this.#clock.now();
    for (const p of this.#waiting()) {
      this.#settle(p);
      // Only what is left of its wait limit: the deadline still holds.
      const waitLimitMs = Math.max(0, this.#waitEndsAt(p) - now);
      this.#byPolicy({ ...p.request, waitLimitMs }, p.signal, false).then(p.resolve, p.reject);
    }
  }

  /**
   * The credential was refused: a configuration error, reported to every
   * caller, never answered by the policy (which would admit past the shared
   * limit, once per such client).
   */
  refused(error: Error): void {
    this.#refusal = error;
    this.#attempted();
    for (const p of this.#waiting()) {
      this.#settle(p);
      p.reject(error);
    }
    for (const seat of this.#seats()) {
      this.#drop(seat);
      seat.lose();
    }
    this.#stopRenewals();
  }

  /** Acquire `id` is decided: its caller's answer, or a late seat given back. */
  decided(id: number, decision: TransportDecision): void {
    const p = this.#byId.get(id);
    if (!(p instanceof Pending) || !p.sent) {
      // Answered already (deadline, abort, lost connection): never keep its seat.
      if (decision.admitted) this.#lateRelease(id);
      return;
    }
    if (!decision.admitted) {
      this.#settle(p);
      const { reason, retryAfterSeconds } = decision;
      p.resolve({ admitted: false, reason, retryAfterSeconds });
      return;
    }
    // The seat takes the acquire's place in the map.
    this.#settle(p, false);
    const seat = new RemoteSeat(this, id, p.request.priorityLevel, this.#clock.now());
    this.#byId.set(id, seat);
    this.#heldCount++;
    this.#armRenewals();
    p.resolve({ admitted: true, seat, waitedMs: decision.waitedMs });
  }

  /** Acquire `id` failed: the caller's bug is rejected, anything else goes to the policy. */
  failed(id: number, error: unknown): boolean {
    const p = this.#byId.get(id);
    if (!(p instanceof Pending) || !p.sent) return false;
    this.#settle(p);
    const name = (error as { name?: unknown } | null)?.name;
    if (name === "TypeError" || name === "RangeError") {
      p.reject(error);
      return false;
    }
    const waitLimitMs = Math.max(0, this.#waitEndsAt(p) - this.#clock.now());
    this.#byPolicy({ ...p.request, waitLimitMs }, p.signal, false).then(p.resolve, p.reject);
    return true;
  }

  /** The server no longer holds seat `id`: lost; its release does nothing. */
  expired(id: number): void {
    const seat = this.#byId.get(id);
    if (!(seat instanceof RemoteSeat)) return;
    this.#drop(seat);
    seat.lose();
    this.#stats.lost++;
    if (this.#heldCount === 0) this.#stopRenewals();
  }

  // ---- seats --------------------------------------------------------------

  /** A seat ended (from {@linkcode RemoteSeat}): the transport gives it back, with its outcome. */
  ended(
    seat: RemoteSeat,
    executionMs: number | null,
    initialized: boolean,
    outcome?: SampleOutcome,
  ): void {
    if (this.#byId.get(seat.id) !== seat) return;
    this.#drop(seat);
    if (this.#heldCount === 0) this.#stopRenewals();
    // While unreachable the release cannot leave: after a resume, the server reports the seat
    // kept, and it goes back then (see reachable).
    if (this.#transport.state !== "connected") return;
    if (initialized) this.#transport.initialized(seat.id);
    else this.#transport.release(seat.id, this.#executionMs(seat, executionMs), outcome);
  }

  /** The acquires waiting for their decision, in the order they were made (a copy). */
  #waiting(): Pending[] {
    const out: Pending[] = [];
    for (const e of this.#byId.values()) if (e instanceof Pending) out.push(e);
    return out;
  }

  /** The seats held, in the order of their acquires (a copy). */
  #seats(): RemoteSeat[] {
    const out: RemoteSeat[] = [];
    for (const e of this.#byId.values()) if (e instanceof RemoteSeat) out.push(e);
    return out;
  }

  /** `seat` is no longer held. */
  #drop(seat: RemoteSeat): void {
    this.#byId.delete(seat.id);
    this.#heldCount--;
  }

  #executionMs(seat: RemoteSeat, measured: number | null): number | null {
    if (measured !== null || !this.#measure) return measured;
    return this.#clock.now() - seat.grantedAt;
  }

  /**
   * Gives back a seat nobody used here (granted after its acquire was
   * answered, or kept by the server for one released while disconnected)
   * as an early release: it frees the seat as a release does, and is no
   * sample of a learned limit (the time it was held says nothing of the
   * upstream's work, and a late grant's would pull minRTT down).
   */
  #lateRelease(id: number): void {
    this.#stats.lateReleases++;
    this.#transport.initialized(id);
  }

  /**
   * Renews, every half lease, the leases of seats held for a quarter lease
   * or more. The renewal is an entry of the deadline set, not a timer of its
   * own: a client whose seats come and go (held seats dropping to none and
   * back, tick after tick) then arms no timer for them while acquires wait.
   */
  #armRenewals(): void {
    if (this.#renewal !== null || this.#heldCount === 0) return;
    const leaseMs = this.#transport.leaseMs;
    const renewal: Deadline = {
      slot: -1,
      endsAt: this.#clock.now() + Math.max(1, leaseMs / 2),
      fire: () => {
        if (this.#renewal !== renewal) return;
        this.#renewal = null;
        if (this.#transport.state === "connected") {
          const now = this.#clock.now();
          for (const seat of this.#seats()) {
            if (now - seat.leasedAt >= leaseMs / 4) {
              seat.leasedAt = now;
              this.#transport.renew(seat.id);
            }
          }
        }
        this.#armRenewals();
      },
    };
    this.#renewal = renewal;
    this.#deadlines.add(renewal);
  }

  #stopRenewals(): void {
    if (this.#renewal !== null) this.#deadlines.remove(this.#renewal);
    this.#renewal = null;
  }

  // ---- acquires -----------------------------------------------------------

  #send(p: Pending): void {
    p.sent = true;
    this.#transport.acquire(p.id, p.request, p.signal);
    if (p.cancelOnSend) this.#transport.cancel?.(p.id);
  }

  #abort(p: Pending): void {
    if (this.#byId.get(p.id) !== p) return;
    const cancel = this.#transport.cancel;
    if (p.sent && cancel !== null) {
      // The server answers: `cancelled`, or the seat it had just granted.
      cancel(p.id);
      return;
    }
    this.#settle(p);
    p.resolve(CANCELLED);
  }

  /** When `p`'s queue wait limit ends, on the client's clock: its deadline less the margin. */
  #waitEndsAt(p: Pending): number {
    return p.endsAt - this.#marginMs;
  }

  /** Forgets `p`: its deadline and its signal listener go, and its entry unless `remove` is false. */
  #settle(p: Pending, remove = true): void {
    if (remove) this.#byId.delete(p.id);
    this.#deadlines.remove(p);
    if (p.onAbort !== null) p.signal?.removeEventListener("abort", p.onAbort);
    p.onAbort = null;
  }

  #deadline(p: Pending): void {
    if (this.#byId.get(p.id) !== p) return;
    this.#settle(p);
    if (p.sent) this.#transport.cancel?.(p.id);
    this.#byPolicy(p.request, p.signal, true).then(p.resolve, p.reject);
  }

  /** The policy's answer; `late` when the request already waited its wait limit. */
  #byPolicy(
    request: SeatRequest,
    signal: AbortSignal | undefined,
    late: boolean,
  ): Promise<Admission> {
    this.#stats.fallbacks++;
    if (late) return this.#fallback.answer(request, signal, true);
    return this.#fallback.answerUntilReachable(
      request,
      signal,
      (r, s) => this.acquire(r, s === undefined ? {} : { signal: s }),
    );
  }

  /** The first connection attempt ended (reached, lost, refused, or the client closed). */
  #attempted(): void {
    const waiting = this.#firstAttempt;
    this.#firstAttempt = null;
    for (const w of waiting ?? []) {
      if (this.#refusal !== null) w.reject(this.#refusal);
      else w.resolve();
    }
  }
}
