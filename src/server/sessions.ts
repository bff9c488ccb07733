/**
 * The coordinator server's sessions (`src/protocol/PROTOCOL.md`): every seat
 * granted over the wire belongs to a session and carries a lease. A seat
 * neither released nor renewed within `leaseMs` expires; a session whose
 * connection closed keeps its seats for `graceMs`, so that a reconnecting
 * client can resume it, then loses them. Portable: the Deno server and the
 * Durable Objects wrap the same logic; time comes from the injected clock.
 *
 * @module
 */

import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import { LeaseQueue } from "./_lease_queue.ts";
import { Coalescer } from "../protocol/coalescer.ts";
import type { ReclaimedSeatSnapshot, SessionSnapshot, SessionsSnapshot } from "../observe/types.ts";
import type { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import type { Admission, Coordinator, Rejected, Seat, SeatRequest } from "../coordinator/types.ts";
import type { WireDecision, WireError, WireOp } from "../protocol/wire.ts";
import { checkNumber } from "../_shared/errors.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { knownOutcome, releaseOptions } from "../coordinator/release_outcome.ts";

/** Default lease term of a granted seat: 30 s. */
export const DEFAULT_LEASE_MS = 30_000;
/** Default time a closed connection's session waits to be resumed: 5 s. */
export const DEFAULT_GRACE_MS = 5_000;
/** How many reclaimed seats {@linkcode SessionHost.snapshot} remembers. */
export const RECLAIMED_LOG_SIZE = 256;

/** Options of {@linkcode SessionHost}. */
export interface SessionHostOptions {
  /** Lease term in ms (default 30,000). */
  leaseMs?: number;
  /** Grace period of a closed connection's seats in ms (default 5,000). */
  graceMs?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
}

/** What a session's connection receives. */
export interface SessionOutput {
  /** A batch of decisions (coalesced per tick). */
  decisions(batch: WireDecision[]): void;
  /** A problem with an operation, for the client (with the acquire id when it has one). */
  error(error: WireError, id: number | null): void;
}

/**
 * A session's answer to a direct {@linkcode Session.acquire}: the seat is
 * addressed by its id within the session, and leased for `leaseMs`.
 */
export type SessionAdmission =
  | { admitted: true; seatId: number; waitedMs: number; leaseMs: number }
  | Rejected;

/** Where the decision of one acquire goes: the wire's batch, or a caller's promise. */
interface Answer {
  decided(id: number, admission: Admission): void;
  failed(id: number, error: WireError): void;
  /** The session ended before the decision: nothing to tell the client. */
  dropped(id: number): void;
}

/** Counts of seats the server took back. */
export interface SessionStats {
  /** Seats whose lease ran out. */
  expired: number;
  /** Seats released because their session's connection closed and did not come back. */
  lost: number;
  /** Sessions open or in their grace period. */
  sessions: number;
}

interface Entry {
  /** Set while the acquire waits: aborting it cancels the request. */
  waiting: AbortController | null;
  seat: Seat | null;
  lease: Timer | null;
  request: SeatRequest;
  /** Clock time of the grant. */
  grantedMs: number;
}

/** One client's seats and waiting requests. */
export interface Session {
  /** The session's name, for `resume`. */
  readonly id: string;
  /** The client's name, from its `hello`. */
  readonly client: string;
  /** Ids of the seats the session holds. */
  readonly held: number[];
  /** Requests of the session still waiting for a decision. */
  readonly waiting: number;
  /** True while acquire `id` waits in a queue for its decision. */
  isWaiting(id: number): boolean;
  /** True while the session holds seat `id`. */
  holds(id: number): boolean;
  /** Applies a batch of operations, in order (`src/protocol/PROTOCOL.md`, "Operations"). */
  apply(ops: readonly WireOp[]): void;
  /**
   * The direct form of an `acquire` operation, for a transport whose calls
   * return their answers (RPC): resolves with the decision. Rejects with a
   * `TypeError` when `id` is still live or the coordinator refuses the
   * request; resolves `unavailable` when the session ends first.
   */
  acquire(id: number, request: SeatRequest): Promise<SessionAdmission>;
  /**
   * Gives held seat `id` back (unknown or waiting ids are ignored), with how
   * its work ended when the client said (for a learned limit; an unknown
   * value is ignored, as an invalid `executionMs` is).
   */
  release(id: number, executionMs?: number | null, outcome?: SampleOutcome): void;
  /** Watch-style early release of held seat `id` (`docs/semantics.md` §5.5). */
  initialized(id: number): void;
  /** Cancels acquire `id` while it waits (it is then answered `cancelled`). */
  cancel(id: number): void;
  /** Starts held seat `id`'s lease again; false when the session no longer holds it. */
  renew(id: number): boolean;
  /**
   * The connection closed: waiting requests are cancelled at once, held
   * seats wait `graceMs` for the client to resume, then are released.
   */
  detach(): void;
  /** Ends the session: every seat goes back (counted as lost when `lost`), waiters are cancelled. */
  end(lost?: boolean): void;
}

/** What a session needs from its host. */
interface HostContext {
  coordinator: Coordinator;
  leaseMs: number;
  stats: SessionStats;
  now(): number;
  /** Records a seat taken back from `session`. */
  reclaimed(session: SessionImpl, seatId: number, entry: Entry, reason: "expired" | "lost"): void;
  lease(expire: () => void): Timer;
  grace(end: () => void): Timer;
  forget(session: SessionImpl): void;
}

/**
 * Gives back a seat its client did not release (its lease expired, its
 * session ended, or nobody was left to hand it to). No sample of a learned
 * limit: how long it was held says nothing of the upstream's work.
 * `initialized()` gives the seats back as `release()` does, and a sampled
 * seat (`src/coordinator/adaptive_limit.ts`) records nothing for it.
 */
function reclaim(seat: Seat): void {
  seat.initialized();
}

class SessionImpl implements Session {
  readonly id: string;
  readonly client: string;
  #host: HostContext;
  #entries = new Map<number, Entry>();
  #out: SessionOutput | null;
  #decisions: Coalescer<WireDecision>;
  /** Decisions of `acquire` operations go out in the next batch. */
  #wire: Answer = {
    decided: (id, a) =>
      this.#decisions.push(
        a.admitted ? [id, "admitted", a.waitedMs] : [id, "rejected", a.reason, a.retryAfterSeconds],
      ),
    failed: (id, error) => this.#out?.error(error, id),
    dropped: () => {},
  };
  #grace: Timer | null = null;
  #ended = false;
  /** Seats of this session whose lease ran out, and seats lost with it. */
  expired = 0;
  lost = 0;

  constructor(host: HostContext, id: string, client: string, out: SessionOutput) {
    this.#host = host;
    this.id = id;
    this.client = client;
    this.#out = out;
    this.#decisions = new Coalescer((batch) => this.#out?.decisions(batch));
  }

  get held(): number[] {
    const ids: number[] = [];
    for (const [id, e] of this.#entries) if (e.seat !== null) ids.push(id);
    return ids;
  }

  get waiting(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.waiting !== null) n++;
    return n;
  }

  /** Applies a batch of operations, in order. */
  apply(ops: readonly WireOp[]): void {
    if (this.#ended) return;
    for (const op of ops) {
      switch (op[0]) {
        case "acquire":
          this.#start(op[1], op[2], this.#wire);
          break;
        case "release":
          this.release(op[1], op[2], op[3]);
          break;
        case "initialized":
          this.initialized(op[1]);
          break;
        case "cancel":
          this.cancel(op[1]);
          break;
        case "renew":
          // The wire tells a client renewing a seat it no longer has.
          if (!this.renew(op[1]) && !this.#entries.has(op[1])) {
            this.#decisions.push([op[1], "expired"]);
          }
          break;
      }
    }
  }

  acquire(id: number, request: SeatRequest): Promise<SessionAdmission> {
    return new Promise((resolve, reject) => {
      if (this.#ended) {
        resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
        return;
      }
      const leaseMs = this.#host.leaseMs;
      this.#start(id, request, {
        decided: (seatId, a) =>
          resolve(a.admitted ? { admitted: true, seatId, waitedMs: a.waitedMs, leaseMs } : a),
        failed: (_, error) => reject(new TypeError(error.message)),
        dropped: () => resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 }),
      });
    });
  }

  release(id: number, executionMs?: number | null, outcome?: SampleOutcome): void {
    const ms = executionMs !== undefined && executionMs !== null && executionMs >= 0 &&
        executionMs < Infinity
      ? executionMs
      : undefined;
    const options = releaseOptions(ms, knownOutcome(outcome));
    this.#end(id, (seat) => seat.release(options));
  }

  initialized(id: number): void {
    this.#end(id, (seat) => seat.initialized());
  }

  cancel(id: number): void {
    this.#entries.get(id)?.waiting?.abort();
  }

  #start(id: number, request: SeatRequest, answer: Answer): void {
    if (this.#entries.has(id)) {
      answer.failed(id, { code: "duplicate-id", message: `acquire ${id} is still live` });
      return;
    }
    const controller = new AbortController();
    const entry: Entry = { waiting: controller, seat: null, lease: null, request, grantedMs: 0 };
    this.#entries.set(id, entry);
    const decided = (a: Admission): void => {
      entry.waiting = null;
      if (this.#entries.get(id) !== entry || (a.admitted && this.#ended)) {
        if (this.#entries.get(id) === entry) this.#entries.delete(id);
        if (a.admitted) reclaim(a.seat);
        answer.dropped(id);
        return;
      }
      if (!a.admitted) {
        this.#entries.delete(id);
        answer.decided(id, a);
        return;
      }
      entry.seat = a.seat;
      entry.grantedMs = this.#host.now();
      entry.lease = this.#host.lease(() => this.#expire(id, entry));
      answer.decided(id, a);
    };
    const failed = (e: unknown): void => {
      this.#entries.delete(id);
      answer.failed(id, {
        code: "invalid-request",
        message: e instanceof Error ? e.message : String(e),
      });
    };
    // A coordinator that can answer at once (the embedded one) does: only queued requests wait.
    const coordinator = this.#host.coordinator as Coordinator & Partial<EmbeddedCoordinator>;
    let result: Admission | Promise<Admission>;
    try {
      result = coordinator.begin !== undefined
        ? coordinator.begin(request, { signal: controller.signal })
        : coordinator.acquire(request, { signal: controller.signal });
    } catch (e) {
      failed(e);
      return;
    }
    if (result instanceof Promise) result.then(decided, failed);
    else decided(result);
  }

  /** True while the session holds seat `id`. */
  holds(id: number): boolean {
    return this.#entries.get(id)?.seat != null;
  }

  /** True while acquire `id` waits in a queue for its decision. */
  isWaiting(id: number): boolean {
    return this.#entries.get(id)?.waiting != null;
  }

  /** Ends a held seat with `how`; unknown or waiting ids are left alone (idempotent). */
  #end(id: number, how: (seat: Seat) => void): void {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.seat === null) return;
    this.#entries.delete(id);
    entry.lease?.cancel();
    how(entry.seat);
  }

  renew(id: number): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.seat === null) return false;
    entry.lease?.cancel();
    entry.lease = this.#host.lease(() => this.#expire(id, entry));
    return true;
  }

  #expire(id: number, entry: Entry): void {
    if (this.#entries.get(id) !== entry) return;
    this.#entries.delete(id);
    if (entry.seat !== null) reclaim(entry.seat);
    this.#host.stats.expired++;
    this.expired++;
    this.#host.reclaimed(this, id, entry, "expired");
    this.#decisions.push([id, "expired"]);
  }

  detach(): void {
    if (this.#ended || this.#out === null) return;
    this.#out = null;
    this.#decisions.clear();
    for (const e of this.#entries.values()) e.waiting?.abort();
    this.#grace = this.#host.grace(() => this.end(true));
  }

  /** The session's row of `dump_sessions`. */
  snapshot(): SessionSnapshot {
    return {
      id: this.id,
      client: this.client,
      state: this.detached ? "detached" : "connected",
      heldSeats: this.held.length,
      waitingRequests: this.waiting,
      expiredSeats: this.expired,
      lostSeats: this.lost,
    };
  }

  /** True while the session waits in its grace period for its client to resume it. */
  get detached(): boolean {
    return this.#out === null && !this.#ended;
  }

  /** A reconnecting client takes the session over; returns the ids it still holds. */
  attach(out: SessionOutput): number[] {
    this.#grace?.cancel();
    this.#grace = null;
    this.#out = out;
    return this.held;
  }

  end(lost = false): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#grace?.cancel();
    this.#decisions.flush();
    for (const [id, e] of this.#entries) {
      e.waiting?.abort();
      e.lease?.cancel();
      if (e.seat !== null) {
        reclaim(e.seat);
        if (lost) {
          this.#host.stats.lost++;
          this.lost++;
          this.#host.reclaimed(this, id, e, "lost");
        }
      }
    }
    this.#entries.clear();
    this.#host.forget(this);
  }
}

/**
 * The sessions of a coordinator server, over any {@linkcode Coordinator}
 * (the embedded one, usually).
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration, EmbeddedCoordinator, FakeEventClock } from "@apf/edge";
 * import { SessionHost } from "./mod.ts";
 * const clock = new FakeEventClock();
 * const coordinator = new EmbeddedCoordinator(effectiveConfiguration(bootstrapConfiguration()), { clock });
 * const host = new SessionHost(coordinator, { clock });
 * const session = host.open("gateway-a", { decisions: (batch) => console.log(batch), error: () => {} });
 * session.apply([["acquire", 1, { priorityLevel: "catch-all", flowSchema: "catch-all" }]]);
 * host.close();
 * coordinator.close();
 * ```
 */
export class SessionHost {
  /** Where seats come from. */
  readonly coordinator: Coordinator;
  /** Lease term in ms. */
  readonly leaseMs: number;
  /** Grace period in ms. */
  readonly graceMs: number;
  /** Seats taken back so far, and the sessions alive. */
  readonly stats: SessionStats = { expired: 0, lost: 0, sessions: 0 };
  #clock: Clock;
  #sessions = new Map<string, SessionImpl>();
  #context: HostContext;
  #leases: LeaseQueue;
  #reclaimed: ReclaimedSeatSnapshot[] = [];

  /**
   * Hosts sessions over `coordinator`.
   *
   * @throws {RangeError} when `leaseMs` is not > 0 or `graceMs` not >= 0 ({TypeError}: not a
   * number).
   */
  constructor(coordinator: Coordinator, options: SessionHostOptions = {}) {
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    checkNumber(
      leaseMs,
      (ms) => ms > 0 && ms < Infinity,
      () => `Cannot create a SessionHost: leaseMs must be > 0, got ${leaseMs}`,
    );
    checkNumber(
      graceMs,
      (ms) => ms >= 0 && ms < Infinity,
      () => `Cannot create a SessionHost: graceMs must be >= 0, got ${graceMs}`,
    );
    this.coordinator = coordinator;
    this.leaseMs = leaseMs;
    this.graceMs = graceMs;
    this.#clock = options.clock ?? systemClock;
    const clock = this.#clock;
    const leases = this.#leases = new LeaseQueue(clock, leaseMs);
    this.#context = {
      coordinator,
      leaseMs,
      stats: this.stats,
      now: () => clock.now(),
      reclaimed: (session, seatId, entry, reason) => {
        const atMs = clock.now();
        if (this.#reclaimed.length === RECLAIMED_LOG_SIZE) this.#reclaimed.shift();
        this.#reclaimed.push({
          atMs,
          reason,
          sessionId: session.id,
          client: session.client,
          seatId,
          priorityLevel: entry.request.priorityLevel,
          flowSchema: entry.request.flowSchema,
          heldMs: atMs - entry.grantedMs,
        });
      },
      lease: (expire) => leases.add(expire),
      grace: (end) => clock.setTimer(graceMs, end),
      forget: (session) => {
        this.#sessions.delete(session.id);
        this.stats.sessions = this.#sessions.size;
      },
    };
  }

  /** Opens a new session for `client`. */
  open(client: string, out: SessionOutput): Session {
    const session = new SessionImpl(this.#context, `s-${crypto.randomUUID()}`, client, out);
    this.#sessions.set(session.id, session);
    this.stats.sessions = this.#sessions.size;
    return session;
  }

  /**
   * Resumes session `id` (within its grace period) for a new connection, or
   * `null` when it is gone; `reclaimed` lists the seats it still holds.
   */
  resume(id: string, out: SessionOutput): { session: Session; reclaimed: number[] } | null {
    const session = this.#sessions.get(id);
    // Only a session whose connection closed can be taken over: a live one stays its own.
    if (session === undefined || !session.detached) return null;
    return { session, reclaimed: session.attach(out) };
  }

  /**
   * The sessions and the most recently reclaimed seats (`dump_sessions`),
   * for the debug routes.
   */
  snapshot(): SessionsSnapshot {
    const nowMs = this.#clock.now();
    return {
      nowMs,
      wallClockMs: this.#clock.wallNow?.() ?? nowMs,
      leaseMs: this.leaseMs,
      graceMs: this.graceMs,
      expiredSeats: this.stats.expired,
      lostSeats: this.stats.lost,
      sessions: [...this.#sessions.values()].map((s) => s.snapshot()),
      reclaimed: this.#reclaimed.map((r) => ({ ...r })),
    };
  }

  /** Takes back every seat whose lease is due now (for hosts with their own alarms). */
  expireDue(): void {
    this.#leases.expireDue();
  }

  /** Clock time of the next lease to fall due, or `null` when no seat is leased. */
  nextLeaseDue(): number | null {
    return this.#leases.nextDue();
  }

  /** Ends every session (shutdown): their seats go back, their waiters are cancelled. */
  close(): void {
    for (const session of [...this.#sessions.values()]) session.end();
    this.#leases.close();
  }
}
