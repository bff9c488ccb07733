/**
 * The plain snapshots that metrics and debug dumps are rendered from. The
 * coordinator produces them; this room only reads them (it imports nothing
 * but the queue set's and the gradient controller's types).
 *
 * @module
 */

import type { GradientSnapshot } from "../adaptive/types.ts";
import type { QueueSetSnapshot } from "../fairqueuing/types.ts";

/** Seat-demand statistics of a level at the last borrowing adjustment (`seatDemandStats`). */
export interface DemandSnapshot {
  /** Rounded highest demand (seats in use plus waiting) of the last period. */
  highWatermark: number;
  /** Time-weighted average demand of the last period. */
  average: number;
  /** Time-weighted standard deviation of the last period. */
  stdDev: number;
  /** Smoothed envelope (average + standard deviation). */
  smoothed: number;
  /** The allocation target derived from it. */
  target: number;
}

/** One priority level: its limits, demand, and queue set. */
export interface PriorityLevelSnapshot {
  /** The level's name. */
  name: string;
  /** `Exempt` or `Limited`. */
  type: "Exempt" | "Limited";
  /** True while a removed level drains (`docs/semantics.md` §2.6). */
  quiescing: boolean;
  /** NominalCL. */
  nominalLimit: number;
  /** MinCL = NominalCL − LendableCL (the `lower_limit_seats` metric). */
  lowerLimit: number;
  /** MaxCL = NominalCL + BorrowingCL (the `upper_limit_seats` metric). */
  upperLimit: number;
  /** The current limit (after borrowing). */
  currentLimit: number;
  /** Demand statistics used by the last adjustment. */
  demand: DemandSnapshot;
  /** The level's queue set (with requests when asked for). */
  queueSet: QueueSetSnapshot;
  /**
   * The Retry-After a rejection of this level answers now, in seconds
   * (`docs/semantics.md` §7.4), when the coordinator tracks it.
   */
  retryAfterSeconds?: number;
  /**
   * On a budget holder: its share of the level (its queue set's limit is
   * `budget.capacity`; the level's limit over every holder is `budget.limit`).
   */
  budget?: BudgetSnapshot;
}

/** A budget holder's share of a level (`src/budgets/`). */
export interface BudgetSnapshot {
  /** The level's limit that the claims of every holder are held to. */
  limit: number;
  /** This holder's fair share. */
  target: number;
  /** Seats this holder claims in the ledger. */
  claim: number;
  /** Seats this holder may have in use now. */
  capacity: number;
  /** When its lease ends (wall clock, ms), or `null` before the first settle. */
  leaseEndsAt: number | null;
  /** `budget` on a lease; otherwise the unreachable policy in force (`none` before the first settle). */
  mode: "budget" | "local" | "open" | "closed" | "none";
  /**
   * Every live holder's line in the level's ledger as this holder last
   * wrote it (its own included, `self`), by id.
   */
  holders?: BudgetHolderLine[];
}

/** A holder's line in a level's budget ledger, as a holder last wrote it. */
export interface BudgetHolderLine {
  /** The holder's id. */
  id: string;
  /** True for the holder this snapshot comes from. */
  self: boolean;
  /** Seats it claims: the most it may have in use. */
  claim: number;
  /** Seats it would use (in use and waiting, at their peak over its last period). */
  demand: number;
  /** When its lease ends, on its clock (ms since the Unix epoch). */
  expiresAt: number;
}

/** Everything a coordinator holds, at one instant. */
export interface CoordinatorSnapshot {
  /** Clock time of the snapshot (ms, monotonic). */
  nowMs: number;
  /** Wall-clock time of the snapshot (ms since the Unix epoch), to print times. */
  wallClockMs: number;
  /** The server concurrency limit. */
  serverConcurrencyLimit: number;
  /** `fairProp` of the last borrowing allocation (the `seat_fair_frac` metric). */
  seatFairFraction: number;
  /** Every level, sorted by name. */
  levels: PriorityLevelSnapshot[];
}

/**
 * A learned server concurrency limit (`serverConcurrencyLimit: "auto"`,
 * `src/adaptive/gradient_controller.ts`), as the admin routes show it: the
 * gradient controller's state, its bounds included.
 */
export type LearnedLimitSnapshot = GradientSnapshot;

/** One client session of a coordinator server. */
export interface SessionSnapshot {
  /** The session's name. */
  id: string;
  /** The client's name, from its `hello`. */
  client: string;
  /** `connected`, or `detached`: the connection closed and the seats wait for a resume. */
  state: "connected" | "detached";
  /** Seats the session holds. */
  heldSeats: number;
  /** Requests of the session waiting for a decision. */
  waitingRequests: number;
  /** The session's seats whose lease ran out, ever. */
  expiredSeats: number;
  /** The session's seats released because it never came back, ever. */
  lostSeats: number;
}

/** A seat the coordinator server took back from its holder. */
export interface ReclaimedSeatSnapshot {
  /** Clock time of the reclaim (ms, monotonic). */
  atMs: number;
  /** Why: its lease ran out, or its session's connection closed and did not come back. */
  reason: "expired" | "lost";
  /** The holding session. */
  sessionId: string;
  /** The holding client's name. */
  client: string;
  /** The seat's id within its session. */
  seatId: number;
  /** The seat's priority level. */
  priorityLevel: string;
  /** The flow schema its request matched. */
  flowSchema: string;
  /** How long it was held, in ms. */
  heldMs: number;
}

/** The sessions of a coordinator server and the seats it took back, at one instant. */
export interface SessionsSnapshot {
  /** Clock time of the snapshot (ms, monotonic). */
  nowMs: number;
  /** Wall-clock time of the snapshot (ms since the Unix epoch), to print times. */
  wallClockMs: number;
  /** Lease term of a seat, in ms. */
  leaseMs: number;
  /** Grace period of a closed connection's seats, in ms. */
  graceMs: number;
  /** Seats taken back because their lease ran out, since the start. */
  expiredSeats: number;
  /** Seats released because their session never came back, since the start. */
  lostSeats: number;
  /** Every session alive, connected or detached, in the order they opened. */
  sessions: SessionSnapshot[];
  /** The most recently reclaimed seats, oldest first (a bounded log). */
  reclaimed: ReclaimedSeatSnapshot[];
}
