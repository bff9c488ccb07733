/**
 * One accepted connection under `serveGuarded()`'s timeouts: it must
 * complete its first request head within the header timeout, and may then
 * sit between requests for the idle timeout at most; either timeout closes
 * it. The HTTP itself is a {@linkcode ConnectionDriver}'s.
 *
 * Deno's HTTP servers parse the request head themselves and tell only when
 * a head is complete (the handler is called) and when its response is
 * handed over, not when the next request's first byte arrives: so after the
 * first request the idle timeout covers the wait for the whole next head,
 * where Go's `http.Server` (`IdleTimeout`, then `ReadHeaderTimeout`) splits
 * it. With the native driver the idle time counts from when the response
 * was handed over, its body maybe still streaming: the close then waits for
 * the body (hyper's graceful close), and the connection is not kept alive
 * after a response that streamed longer than the idle timeout.
 *
 * @module
 */

import type { Clock, Timer } from "../fairqueuing/clock.ts";
import type {
  ConnectionDriver,
  ConnectionHandler,
  ConnectionHooks,
  ConnectionServer,
} from "./_deno_http.ts";

/** Why a connection was closed by its guard. */
export type ExpiryReason = "header" | "idle";

/** What every connection of one server shares. */
export interface GuardSettings {
  driver: ConnectionDriver;
  handler: ConnectionHandler;
  onError: (error: unknown) => Response | Promise<Response>;
  clock: Clock;
  headerTimeoutMs: number;
  idleTimeoutMs: number;
  /** Told each time a timeout closes a connection. */
  onExpired: (reason: ExpiryReason) => void;
}

/** A connection served over HTTP and closed when it idles too long. */
export class GuardedConnection implements ConnectionHooks {
  #settings: GuardSettings;
  #server: ConnectionServer;
  #timer: Timer | null = null;
  #inFlight = 0;
  #requests = 0;
  #draining = false;
  #done = false;
  /** Settles once the connection closed or was upgraded; never rejects. */
  readonly finished: Promise<void>;

  /** Starts serving `conn`; the header timeout runs from now. */
  constructor(conn: Deno.TcpConn, settings: GuardSettings) {
    this.#settings = settings;
    this.#arm("header", settings.headerTimeoutMs);
    this.#server = settings.driver(conn, settings.handler, settings.onError, this);
    this.finished = this.#server.finished.then(() => {
      this.#done = true;
      this.#cancel();
    });
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** {@inheritDoc ConnectionHooks.requestStarted} */
  requestStarted(): void {
    this.#requests++;
    if (this.#inFlight++ === 0) this.#cancel();
  }

  /** {@inheritDoc ConnectionHooks.requestEnded} */
  requestEnded(): void {
    if (--this.#inFlight > 0 || this.#done) return;
    if (this.#draining) this.#server.close();
    else this.#arm("idle", this.#settings.idleTimeoutMs);
  }

  /** {@inheritDoc ConnectionHooks.upgraded} */
  upgraded(): void {
    // The socket is the handler's now (a WebSocket): no HTTP timeout applies.
    this.#inFlight--;
    this.#cancel();
  }

  /**
   * Graceful close: at once when no request is in flight (a partly received
   * head is dropped), else once the last in-flight response is delivered.
   */
  drain(): void {
    if (this.#draining || this.#done) return;
    this.#draining = true;
    if (this.#inFlight === 0) {
      this.#cancel();
      this.#server.close();
    }
  }

  #arm(reason: ExpiryReason, delayMs: number): void {
    this.#cancel();
    if (delayMs === Infinity) return;
    this.#timer = this.#settings.clock.setTimer(delayMs, () => {
      this.#timer = null;
      if (this.#done || this.#inFlight > 0) return;
      this.#settings.onExpired(this.#requests === 0 ? "header" : reason);
      this.#server.close();
    });
  }

  #cancel(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }
}
