/**
 * The connection limits of `serveGuarded()`, shared by the gateway's and
 * the coordinator's options: their defaults and their checks.
 *
 * @module
 */

import { checkNumber } from "../_shared/errors.ts";

/**
 * Longest wait for a new connection's first complete request head, in ms:
 * 10 s, Go's usual `ReadHeaderTimeout` advice, and far beyond what a client
 * that means to send a request needs.
 */
export const DEFAULT_HEADER_TIMEOUT_MS = 10_000;

/**
 * Longest wait between requests on a keep-alive connection, in ms: 75 s,
 * nginx's `keepalive_timeout` default. Longer than the 60 s idle timeout of
 * common load balancers, so that a balancer in front closes its idle
 * connections before this server does (else it may send a request on a
 * connection being closed).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 75_000;

/**
 * Most connections open at once: 10,000. Each holds a file descriptor;
 * keep it below the process's limit (`ulimit -n`) less what the process
 * needs besides (the upstream connections of a gateway, files).
 */
export const DEFAULT_MAX_CONNECTIONS = 10_000;

/** Limits on a server's connections. */
export interface ConnectionLimits {
  /**
   * A connection that has not completed its first request head within this
   * many ms is closed (default 10,000). `Infinity` turns it off.
   */
  headerTimeoutMs?: number;
  /**
   * A keep-alive connection with no request in flight is closed once it
   * waited this many ms for the next request's head (default 75,000).
   * `Infinity` turns it off.
   */
  idleTimeoutMs?: number;
  /**
   * Most connections open at once (default 10,000); a connection past it is
   * answered `503 Service Unavailable` with `Connection: close` and closed.
   */
  maxConnections?: number;
}

/**
 * `limits` with their defaults.
 *
 * @throws {RangeError} for a timeout that is not > 0, or a cap that is not an integer >= 1
 * ({TypeError}: not a number).
 */
export function checkLimits(what: string, limits: ConnectionLimits): Required<ConnectionLimits> {
  const headerTimeoutMs = limits.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  const idleTimeoutMs = limits.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxConnections = limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  for (
    const [name, value] of [["headerTimeoutMs", headerTimeoutMs], ["idleTimeoutMs", idleTimeoutMs]]
  ) {
    checkNumber(
      value,
      (ms) => ms > 0,
      () => `Cannot ${what}: ${name} must be a number > 0 (Infinity: none), got ${String(value)}`,
    );
  }
  checkNumber(
    maxConnections,
    (n) => Number.isSafeInteger(n) && n >= 1,
    () => `Cannot ${what}: maxConnections must be an integer >= 1, got ${String(maxConnections)}`,
  );
  return { headerTimeoutMs, idleTimeoutMs, maxConnections };
}
