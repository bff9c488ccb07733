/**
 * The server kit: sessions, leases, grace and batching of a coordinator server; no transport.
 *
 * @module
 */

export {
  DEFAULT_GRACE_MS,
  DEFAULT_LEASE_MS,
  RECLAIMED_LOG_SIZE,
  type Session,
  type SessionAdmission,
  SessionHost,
  type SessionHostOptions,
  type SessionOutput,
  type SessionStats,
} from "./sessions.ts";
export { ServerConnection, type ServerConnectionOptions } from "./server_connection.ts";
export { type ClientConnection, SeatServer, type SeatServerOptions } from "./seat_server.ts";
