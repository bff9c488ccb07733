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

/**
 * A connection served over HTTP and closed when it idles too long. Its
 * timer is not moved at each request (a timer set and cleared per request
 * took a hello world from 0.91x to 0.73x of `Deno.serve`'s throughput,
 * `bench/serve_wrk.sh`): a request only moves the deadline, and the timer,
 * when it fires early, sets itself again for the deadline.
 */
export class GuardedConnection implements ConnectionHooks {
  #settings: GuardSettings;
  #server: ConnectionServer;
  #timer: Timer | null = null;
  /** When {@linkcode #timer} fires. */
  #timerAt = 0;
  /** When the connection expires if no request is in flight by then. */
  #deadline: number;
  #inFlight = 0;
  #requests = 0;
  #draining = false;
  #upgraded = false;
  #done = false;
  /** Settles once the connection closed or was upgraded; never rejects. */
  readonly finished: Promise<void>;

  /** Starts serving `conn`; the header timeout runs from now. */
  constructor(conn: Deno.TcpConn, settings: GuardSettings) {
    this.#settings = settings;
    this.#deadline = settings.clock.now() + settings.headerTimeoutMs;
    this.#arm();
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
    this.#inFlight++;
  }

  /** {@inheritDoc ConnectionHooks.requestEnded} */
  requestEnded(): void {
    if (--this.#inFlight > 0 || this.#done) return;
    if (this.#draining) {
      this.#server.close();
      return;
    }
    this.#deadline = this.#settings.clock.now() + this.#settings.idleTimeoutMs;
    // A timer due later (the header timeout, when longer than the idle one) is too late.
    if (this.#timer === null || this.#timerAt > this.#deadline) {
      this.#cancel();
      this.#arm();
    }
  }

  /** {@inheritDoc ConnectionHooks.upgraded} */
  upgraded(): void {
    // The socket is the handler's now (a WebSocket): no HTTP timeout applies.
    this.#inFlight--;
    this.#upgraded = true;
    this.#cancel();
  }

  /**
   * Graceful close: at once when no request is in flight (a partly received
   * head is dropped), else once the last in-flight response is handed over.
   */
  drain(): void {
    if (this.#draining || this.#done) return;
    this.#draining = true;
    if (this.#inFlight === 0) {
      this.#cancel();
      this.#server.close();
    }
  }

  #arm(): void {
    if (this.#deadline === Infinity) return;
    this.#timerAt = this.#deadline;
    this.#timer = this.#settings.clock.setTimer(
      this.#deadline - this.#settings.clock.now(),
      () => this.#expire(),
    );
  }

  #expire(): void {
    this.#timer = null;
    // In flight: the request's end sets the timer again.
    if (this.#done || this.#upgraded || this.#draining || this.#inFlight > 0) return;
    if (this.#settings.clock.now() < this.#deadline) {
      this.#arm();
      return;
    }
    this.#settings.onExpired(this.#requests === 0 ? "header" : "idle");
    this.#server.close();
  }

  #cancel(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }
}
