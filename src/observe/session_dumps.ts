/**
 * The coordinator server's own debug dump, `dump_sessions`: every client
 * session with its seats, and the seats the server took back (expired
 * leases, sessions lost after their grace period). Same text conventions as
 * Kubernetes' dumps (`",\t"`-joined cells through Go's tabwriter), and a
 * JSON form.
 *
 * @module
 */

import { formatGoDuration, formatRfc3339Nano, wallTimeNs } from "./_go_format.ts";
import { renderDumpRows } from "./_tabwriter.ts";
import type { ReclaimedSeatSnapshot, SessionSnapshot, SessionsSnapshot } from "./types.ts";

/** A reclaimed seat as `dump_sessions` shows it: times rendered. */
export interface ReclaimedSeatDumpRow extends Omit<ReclaimedSeatSnapshot, "atMs"> {
  /** When the seat was taken back (RFC 3339 with nanoseconds, UTC). */
  reclaimedAt: string;
}

/** `dump_sessions` as JSON. */
export interface SessionsDump {
  /** Lease term of a seat, in ms. */
  leaseMs: number;
  /** Grace period of a closed connection's seats, in ms. */
  graceMs: number;
  /** Seats whose lease ran out, since the start. */
  expiredSeats: number;
  /** Seats lost with their session, since the start. */
  lostSeats: number;
  /** One row per session. */
  sessions: SessionSnapshot[];
  /** The most recently reclaimed seats, oldest first. */
  reclaimed: ReclaimedSeatDumpRow[];
}

/** `dump_sessions` as a JSON-ready object. */
export function dumpSessionsJson(snapshot: SessionsSnapshot): SessionsDump {
  return {
    leaseMs: snapshot.leaseMs,
    graceMs: snapshot.graceMs,
    expiredSeats: snapshot.expiredSeats,
    lostSeats: snapshot.lostSeats,
    sessions: snapshot.sessions.map((s) => ({ ...s })),
    reclaimed: snapshot.reclaimed.map(({ atMs, ...rest }) => ({
      reclaimedAt: formatRfc3339Nano(wallTimeNs(snapshot.wallClockMs, snapshot.nowMs, atMs)),
      ...rest,
    })),
  };
}

/**
 * `dump_sessions` as text: a sessions table, a blank line, then the
 * reclaimed seats table.
 *
 * @example
 * ```ts ignore
 * dumpSessions(server.host.snapshot());
 * // SessionID,  Client,    State,     HeldSeats, WaitingRequests, ExpiredSeats, LostSeats
 * // s-4f…,      gateway-a, connected, 3,         0,               0,            0
 * ```
 */
export function dumpSessions(snapshot: SessionsSnapshot): string {
  const dump = dumpSessionsJson(snapshot);
  const sessions = renderDumpRows([
    // deno-fmt-ignore
    ["SessionID", "Client", "State", "HeldSeats", "WaitingRequests", "ExpiredSeats", "LostSeats"],
    ...dump.sessions.map((s) => [
      s.id,
      s.client,
      s.state,
      s.heldSeats,
      s.waitingRequests,
      s.expiredSeats,
      s.lostSeats,
    ]),
  ]);
  const reclaimed = renderDumpRows([
    // deno-fmt-ignore
    ["ReclaimedAt", "Reason", "SessionID", "Client", "SeatID", "PriorityLevelName", "FlowSchemaName", "HeldFor"],
    ...dump.reclaimed.map((r) => [
      r.reclaimedAt,
      r.reason,
      r.sessionId,
      r.client,
      r.seatId,
      r.priorityLevel,
      r.flowSchema,
      formatGoDuration(r.heldMs),
    ]),
  ]);
  return sessions + "\n" + reclaimed;
}
