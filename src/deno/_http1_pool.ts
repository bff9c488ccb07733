/**
 * The kept-alive connections of one upstream origin. Idle ones form a
 * stack: the most recently used is taken first, so that under a steady load
 * a few connections stay warm and the rest age out. The number of idle
 * connections is bounded; the number in use is not: APF's seats already
 * bound the requests in flight, and a second queue here would wait behind
 * the fair one, unfairly.
 *
 * An idle connection expires after the idle timeout, or sooner when the
 * upstream's `Keep-Alive: timeout=N` says it will close it (one second
 * before, as undici does). From the moment it goes idle, a read watches it:
 * an upstream that closes it, or writes to it out of turn (the rest of a
 * body longer than its `Content-Length`, a response nobody asked for), has
 * it dropped before a request is sent on it, as nginx does with its cached
 * connections. Bytes read on an idle connection must never be taken for the
 * next request's response: that response would go to another client. One
 * timer on the injected clock serves the whole pool (the expiries): it is
 * set only when the earliest due time moves earlier, which a steady load
 * never does.
 *
 * @module
 */

import type { Clock, Timer } from "../fairqueuing/clock.ts";
import { dial, type Http1Connection, type Origin } from "./_http1_connection.ts";
import { addSlotted, removeSlotted } from "../_shared/slot_list.ts";

/** The bounds of a pool. */
export interface PoolBounds {
  /** The clock of the idle timeouts. */
  clock: Clock;
  /** Most idle connections kept; one more returning is closed. */
  maxIdle: number;
  /** How long a connection may idle, in ms. */
  idleTimeoutMs: number;
}

/** How much earlier than the upstream's announced keep-alive timeout we stop using a connection. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

/** The connections of one origin. */
export class Http1Pool {
  readonly origin: Origin;
  #bounds: PoolBounds;
  #idle: Http1Connection[] = [];
  /**
   * The connections in use, each knowing its slot: a `Set` of them cost a
   * native call per request on V8 (its table shrinks and grows as the
   * number in use moves).
   */
  #busy: Http1Connection[] = [];
  #timer: Timer | null = null;
  #timerAt = Infinity;
  #closed = false;
  #dialled = 0;

  constructor(origin: Origin, bounds: PoolBounds) {
    this.origin = origin;
    this.#bounds = bounds;
  }

  /** Connections opened so far. */
  get dialled(): number {
    return this.#dialled;
  }

  /** Idle connections now. */
  get idle(): number {
    return this.#idle.length;
  }

  /** The most recently used idle connection that has not expired, or `null`. */
  take(): Http1Connection | null {
    const now = this.#bounds.clock.now();
    for (let conn = this.#idle.pop(); conn !== undefined; conn = this.#idle.pop()) {
      if (conn.expiresAt > now && !conn.closed) {
        conn.busy();
        addSlotted(this.#busy, conn);
        return conn;
      }
      void conn.close();
    }
    return null;
  }

  /**
   * A new connection.
   *
   * @throws {Error} when the pool is closed, or what the dial throws.
   */
  async dial(signal: AbortSignal | undefined): Promise<Http1Connection> {
    if (this.#closed) throw new Error(`Cannot connect to ${this.origin.key}: the client is closed`);
    let conn: Http1Connection;
    try {
      conn = await dial(this.origin, signal);
    } catch (e) {
      if (signal?.aborted === true) throw e;
      throw new Error(`Cannot connect to ${this.origin.key}`, { cause: e });
    }
    this.#dialled++;
    conn.onGone = () => this.#drop(conn);
    if (this.#closed) {
      await conn.close();
      throw new Error(`Cannot connect to ${this.origin.key}: the client is closed`);
    }
    addSlotted(this.#busy, conn);
    return conn;
  }

  /** Where an exchange on a connection of this pool reports its end. */
  readonly done = (conn: Http1Connection, reusable: boolean, keepAliveMs: number | null): void => {
    removeSlotted(this.#busy, conn);
    const { clock, maxIdle, idleTimeoutMs } = this.#bounds;
    const timeoutMs = keepAliveMs === null
      ? idleTimeoutMs
      : Math.min(idleTimeoutMs, keepAliveMs - KEEP_ALIVE_MARGIN_MS);
    if (
      !reusable || this.#closed || conn.closed || this.#idle.length >= maxIdle || timeoutMs <= 0
    ) {
      void conn.close();
      return;
    }
    conn.expiresAt = clock.now() + timeoutMs;
    conn.park();
    conn.watch(conn.onGone);
    this.#idle.push(conn);
    if (conn.expiresAt < this.#timerAt) this.#arm(conn.expiresAt);
  };

  /** Closes every connection, idle or in use, and the timer; settles once their reads ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = null;
    const all = [...this.#idle, ...this.#busy];
    this.#idle = [];
    for (const conn of this.#busy) conn.slot = -1;
    this.#busy = [];
    await Promise.all(all.map((conn) => conn.close()));
  }

  /** An idle connection the upstream closed (or wrote to out of turn). */
  #drop(conn: Http1Connection): void {
    const at = this.#idle.indexOf(conn);
    if (at >= 0) this.#idle.splice(at, 1);
    void conn.close();
  }

  #arm(at: number): void {
    this.#timer?.cancel();
    this.#timerAt = at;
    const clock = this.#bounds.clock;
    this.#timer = clock.setTimer(at - clock.now(), () => this.#sweep());
  }

  /** Closes the expired idle connections; sets the timer for the next expiry. */
  #sweep(): void {
    this.#timer = null;
    this.#timerAt = Infinity;
    const now = this.#bounds.clock.now();
    let next = Infinity;
    const kept: Http1Connection[] = [];
    for (const conn of this.#idle) {
      if (conn.expiresAt <= now) {
        void conn.close();
        continue;
      }
      kept.push(conn);
      if (conn.expiresAt < next) next = conn.expiresAt;
    }
    this.#idle = kept;
    if (next < Infinity) this.#arm(next);
  }
}
