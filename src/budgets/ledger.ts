/**
 * The ledger of one priority level's budgets, as a store keeps it, and the
 * step each holder takes on it every period (`settle`). The rule that keeps
 * the level within its limit: a holder's **claim** in the ledger is the most
 * seats it may have in use, and the claims of the live holders never sum to
 * more than the limit.
 *
 * - A holder grows its claim only into seats nobody claims, in a write that
 *   the store accepts only over the version it read (compare and set); it
 *   uses the new seats only once the write succeeded.
 * - A holder whose fair share fell lowers its capacity at once, and its
 *   claim only as its seats in use drain to the share: the seats go to
 *   another holder only once the ledger records them free.
 * - Each claim carries a lease, `expiresAt` on its holder's clock. Past it
 *   the holder stops admitting (its unreachable policy applies). The others
 *   take the claim back only once their own clock is past `expiresAt` plus
 *   the drain time (what a request admitted just before may still hold) plus
 *   the clock-skew bound: a holder cut off from the store, whose clock is
 *   behind theirs by up to that bound, has stopped admitting by then, and
 *   its requests that hold a seat for less than the drain time have ended.
 *   A dead holder's seats come back that long after its lease.
 *
 * The target shares are max-min fair over the holders' demands
 * (`allocate.ts`); every holder computes them from the same ledger, and
 * takes only its own.
 *
 * @module
 */

import { allocateBudgets } from "./allocate.ts";

/** One holder's line in a level's ledger. */
export interface LedgerEntry {
  /** The most seats it may have in use, counted against the level's limit. */
  claim: number;
  /** Seats it would use (in use and waiting, at their peak over its last period). */
  demand: number;
  /**
   * Its seat demand's average and standard deviation over its last period,
   * for the borrowing between levels (summed over the holders).
   */
  average?: number;
  /** See {@linkcode LedgerEntry.average}. */
  deviation?: number;
  /** The level's limit as this holder knows it: the smallest of the live holders' is used. */
  limit: number;
  /** When its lease ends, in ms on its own clock. */
  expiresAt: number;
}

/** A level's ledger: every holder's line, by holder id. */
export interface Ledger {
  /** The holders' lines. */
  holders: Record<string, LedgerEntry>;
}

/** What a holder knows of itself when it settles. */
export interface HolderState {
  /** Its id, unique among the level's holders. */
  id: string;
  /** Its clock's time, in ms. */
  now: number;
  /** Seats in use now. */
  inUse: number;
  /** Seats it would use (see {@linkcode LedgerEntry.demand}). */
  demand: number;
  /** See {@linkcode LedgerEntry.average}. */
  average?: number;
  /** See {@linkcode LedgerEntry.average}. */
  deviation?: number;
  /** The level's current limit as this holder computes it. */
  limit: number;
}

/** The lease term, the drain time and the clock-skew bound, in ms. */
export interface LeaseTerms {
  /** How long a holder admits on its claim without renewing it. */
  leaseMs: number;
  /**
   * How long after its lease a claim still counts: the longest a request
   * admitted just before the lease ended may hold its seat.
   */
  drainMs: number;
  /** How far two holders' clocks may disagree. */
  skewMs: number;
}

/** The outcome of a settle: the ledger to write, and what the holder may use once written. */
export interface Settlement {
  /** The ledger to write (compare and set over the version read). */
  ledger: Ledger;
  /** The holder's new claim. */
  claim: number;
  /**
   * Seats the holder may have in use from now on: apply a lower value at
   * once, a higher one only once the write succeeded.
   */
  capacity: number;
  /** The holder's fair share. */
  target: number;
  /** The limit the claims are held to: the smallest of the live holders'. */
  limit: number;
  /** The holder's lease end, in ms on its clock, once the write succeeded. */
  expiresAt: number;
  /** Holders whose claim had expired ({@linkcode isExpired}): left out of the ledger written. */
  expired: string[];
  /** The live holders' demand summed (this holder's included), for the borrowing. */
  total: { demand: number; average: number; deviation: number };
}

/**
 * True when `entry`'s claim no longer counts on a clock showing `now`: its
 * lease, the drain time and the skew bound have passed.
 */
export function isExpired(entry: LedgerEntry, now: number, terms: LeaseTerms): boolean {
  return now > entry.expiresAt + terms.drainMs + terms.skewMs;
}

/**
 * One holder's step on a level's ledger (`null`: none yet): drops the
 * holders whose lease ended, computes every live holder's fair share, and
 * sets this holder's line: its demand, its lease, and its claim, which
 * grows only into unclaimed seats and shrinks only as its seats drain.
 */
export function settle(ledger: Ledger | null, me: HolderState, terms: LeaseTerms): Settlement {
  const holders: Record<string, LedgerEntry> = {};
  const expired: string[] = [];
  for (const [id, entry] of Object.entries(ledger?.holders ?? {})) {
    if (id === me.id) continue;
    if (isExpired(entry, me.now, terms)) expired.push(id);
    else holders[id] = entry;
  }
  const others = Object.values(holders);
  const limit = Math.min(me.limit, ...others.map((e) => e.limit));
  const othersClaim = others.reduce((sum, e) => sum + e.claim, 0);
  const targets = allocateBudgets(limit, [
    { id: me.id, demand: me.demand },
    ...Object.entries(holders).map(([id, e]) => ({ id, demand: e.demand })),
  ]);
  const target = targets.get(me.id) ?? 0;
  // What this holder may use: its share, within what the others leave.
  const capacity = Math.max(0, Math.min(target, limit - othersClaim));
  // Its claim covers what it may use and what it uses now (seats draining to a lower share).
  const claim = Math.max(me.inUse, capacity);
  const expiresAt = me.now + terms.leaseMs;
  holders[me.id] = {
    claim,
    demand: me.demand,
    ...(me.average !== undefined && { average: me.average }),
    ...(me.deviation !== undefined && { deviation: me.deviation }),
    limit: me.limit,
    expiresAt,
  };
  const total = { demand: 0, average: 0, deviation: 0 };
  for (const e of Object.values(holders)) {
    total.demand += e.demand;
    total.average += e.average ?? e.demand;
    total.deviation += e.deviation ?? 0;
  }
  return { ledger: { holders }, claim, capacity, target, limit, expiresAt, expired, total };
}
