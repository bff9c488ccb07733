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
 * - Each claim is a lease. Its holder stops admitting on it a lease after
 *   the start of its last successful write, on its own monotonic clock. The
 *   others take the claim back only once they have seen the line unchanged
 *   (the same `beat`) for the lease, the drain time (what a request admitted
 *   just before may still hold) and a drift margin, on their own monotonic
 *   clock (`line_watch.ts`). Clocks need not agree, only run at nearly the
 *   same rate: `expiresAt` is for people reading the ledger, never for a
 *   decision.
 * - A line no holder of this configuration could write (a claim or limit
 *   above the level's most, a malformed one) holds its seats while it is in
 *   the ledger, for one window at most (`line_watch.ts`), and is never
 *   written back.
 * - A store that forgot (this holder's line missing or older than its last
 *   write while its lease runs, or no line a holder could write where it
 *   wrote one: no ledger at all, or forged lines only): the holder writes
 *   back the claim it remembers and a **recovery mark**. While a holder
 *   has known the mark for less than a window, it grows past the capacity
 *   its last write granted it (none, if its lease has ended) by no seat:
 *   every holder that still had seats in use has written them back, or
 *   stopped, by then. Not past its claim: a claim also covers seats in use
 *   that no write granted (admitted by the unreachable policy) or that drain
 *   to a lower share, and those are not the holder's to admit on. A holder
 *   that never wrote to the level cannot tell a store that forgot from a
 *   new one: one that starts in the period after a store forgot, before the
 *   holders that remember have written back, may take seats they still
 *   use, until their requests end (two faults at once).
 *
 * The target shares are max-min fair over the holders' demands
 * (`allocate.ts`); every holder computes them from the same ledger, and
 * takes only its own.
 *
 * @module
 */

import { allocateBudgets } from "./allocate.ts";
import type { LineWatch, SuspectLine, WindowTerms } from "./line_watch.ts";

/** The suspect that stands for a stored value that is no ledger at all. */
export const NO_LEDGER = "(ledger)";

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
  /** A number its holder changes at every write (one more each time): the others see it live. */
  beat: number;
  /** Its holder's lease term, in ms. */
  leaseMs: number;
  /** Its holder's drain time, in ms. */
  drainMs: number;
  /** When its lease ends on its holder's wall clock (ms since the epoch), for display only. */
  expiresAt: number;
}

/** A store forgot a level's ledger: nobody grows for a window from when they first see this. */
export interface RecoveryMark {
  /** The mark's id (a new one for each recovery). */
  id: string;
  /** The holder that found the ledger forgotten. */
  by: string;
  /** When, on its wall clock (ms since the epoch), for display only. */
  at: number;
}

/** A level's ledger: every holder's line, by holder id. */
export interface Ledger {
  /** The holders' lines. */
  holders: Record<string, LedgerEntry>;
  /** The recovery in progress, if any. */
  recovery?: RecoveryMark;
}

/** A ledger as read: its valid lines, and those that were not (`ledger_schema.ts`). */
export interface ReadLedger {
  /** The valid lines. */
  ledger: Ledger;
  /** The lines that are not (malformed), by id. */
  suspects?: readonly SuspectLine[];
}

/** What a holder knows of itself when it settles. */
export interface HolderState {
  /** Its id, unique among the level's holders. */
  id: string;
  /** Its monotonic clock's time, in ms, taken once the read has answered. */
  now: number;
  /** Its wall clock's time (ms since the epoch), for `expiresAt` (display only). */
  wallNow: number;
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
  /** The most the level's limit can be (MaxCL, borrowing included): a line above it is suspect. */
  maxLimit: number;
  /** The claim of its last successful write while that lease runs, else `null`. */
  remembered: number | null;
  /** The beat of its last successful write (0: none). */
  lastBeat: number;
}

/** The lease term, the drain time and the drift margin, in ms (see {@linkcode WindowTerms}). */
export type LeaseTerms = WindowTerms;

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
  /** The beat this write carries. */
  beat: number;
  /** Its lease end on its wall clock, for display. */
  expiresAt: number;
  /** Holders whose line had gone dead: left out of the ledger written. */
  expired: string[];
  /** Lines first seen as suspect now (report them once). */
  suspects: SuspectLine[];
  /** The recovery mark in force, or `null`. */
  recovery: RecoveryMark | null;
  /** This settle found the store had forgotten this holder's line, and writes it back. */
  forgotten: boolean;
  /** The recovery mark is new to this holder (written by it or first seen). */
  newRecovery: boolean;
  /** The live holders' demand summed (this holder's included), for the borrowing. */
  total: { demand: number; average: number; deviation: number };
}

/**
 * One holder's step on a level's ledger (`null`: none yet), with what it
 * remembers of the lines (`watch`): drops the lines that went dead,
 * computes every live holder's fair share, and sets this holder's line: its
 * demand, its beat, and its claim, which grows only into unclaimed seats
 * and shrinks only as its seats drain.
 */
export function settle(
  read: ReadLedger | null,
  me: HolderState,
  terms: LeaseTerms,
  watch: LineWatch,
): Settlement {
  const stored = read?.ledger ?? { holders: {} };
  // A line above what this configuration allows for the level is no holder's.
  const valid: Record<string, LedgerEntry> = {};
  const suspects: SuspectLine[] = (read?.suspects ?? []).map((s) => ({
    ...s,
    seats: Math.min(s.seats, me.maxLimit),
  }));
  for (const [id, line] of Object.entries(stored.holders)) {
    if (id === me.id) continue;
    const over = line.claim > me.maxLimit ? "claim" : line.limit > me.maxLimit ? "limit" : null;
    if (over === null) valid[id] = line;
    else {
      suspects.push({
        id,
        reason: `its ${over} (${line[over]}) is above the level's most (${me.maxLimit})`,
        seats: Math.min(line.claim, me.maxLimit),
      });
    }
  }
  const view = watch.observe(
    { holders: valid, recovery: stored.recovery },
    suspects.filter((s) => s.id !== me.id),
    me.id,
    me.now,
    terms,
  );
  const holders: Record<string, LedgerEntry> = { ...view.live };
  const others = Object.values(holders);
  const limit = Math.min(me.limit, ...others.map((e) => e.limit));
  const othersClaim = others.reduce((sum, e) => sum + e.claim, 0) + view.suspectSeats;
  const targets = allocateBudgets(limit, [
    { id: me.id, demand: me.demand },
    ...Object.entries(holders).map(([id, e]) => ({ id, demand: e.demand })),
  ]);
  const target = targets.get(me.id) ?? 0;

  // The store forgot: this holder's line is gone, or older than its last write, while its lease
  // runs (nobody may drop a live line); or this holder wrote to the level and finds no line a
  // holder could have written (no ledger, a value that is none, or forged lines only: a forger's
  // ledger over a store that forgot). Every write keeps its writer's line, so no holder has
  // written since the store lost the lines (this holder's lease may have ended: others' may not
  // have). It writes back what it remembers, under a mark.
  const mine = stored.holders[me.id];
  const forgotten = me.remembered !== null && (mine === undefined || mine.beat < me.lastBeat);
  const missing = me.lastBeat > 0 && mine === undefined && Object.keys(valid).length === 0;
  const beat = Math.max(me.lastBeat, mine?.beat ?? 0) + 1;
  let recovery = view.recovery;
  let newRecovery = view.newRecovery && recovery !== null;
  if ((forgotten || missing) && recovery === null) {
    recovery = { id: `${me.id}#${beat}`, by: me.id, at: me.wallNow };
    newRecovery = true;
  }

  // What this holder may use: its share, within what the others leave; in a recovery, no more
  // than its last write granted it (its claim, when this watch did not compute that write).
  let capacity = Math.max(0, Math.min(target, limit - othersClaim));
  if (recovery !== null) {
    const granted = me.remembered === null ? 0 : watch.granted(me.lastBeat) ?? me.remembered;
    capacity = Math.min(capacity, me.remembered ?? 0, granted);
  }
  // Its claim covers what it may use and what it uses now (seats draining to a lower share).
  const claim = Math.max(me.inUse, capacity);
  const expiresAt = me.wallNow + terms.leaseMs;
  watch.grant(beat, capacity, me.lastBeat);
  holders[me.id] = {
    claim,
    demand: me.demand,
    ...(me.average !== undefined && { average: me.average }),
    ...(me.deviation !== undefined && { deviation: me.deviation }),
    limit: me.limit,
    beat,
    leaseMs: terms.leaseMs,
    drainMs: terms.drainMs,
    expiresAt,
  };
  const total = { demand: 0, average: 0, deviation: 0 };
  for (const e of Object.values(holders)) {
    total.demand += e.demand;
    total.average += e.average ?? e.demand;
    total.deviation += e.deviation ?? 0;
  }
  const ledger: Ledger = recovery === null ? { holders } : { holders, recovery };
  return {
    ledger,
    claim,
    capacity,
    target,
    limit,
    beat,
    expiresAt,
    expired: view.dead,
    suspects: view.newSuspects,
    recovery,
    forgotten,
    newRecovery,
    total,
  };
}
