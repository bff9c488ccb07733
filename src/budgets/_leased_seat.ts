/**
 * A seat a budget holder admitted on its lease of a level's share: it
 * tells whether that lease still holds ({@linkcode Seat.stillHeld}). Work
 * admitted just before a process froze may start only after it resumes,
 * past its lease, when the other holders have taken the share back (their
 * ledger counts a lapsed holder's claim for the drain time, then no more):
 * the data path asks the seat right before it starts the work, and gives
 * the seat back instead if the lease lapsed since
 * (`docs/sharing-seats.md`, bounded failure).
 *
 * @module
 */

import type { ReleaseOptions, Seat } from "../coordinator/types.ts";

/** Whether the lease `level` had when a seat was admitted (its `lapses` count) still holds. */
export type LeaseCheck<L> = (level: L, lapses: number) => boolean;

/** A seat admitted on a level's lease. */
export class LeasedSeat<L> implements Seat {
  #seat: Seat;
  #level: L;
  #lapses: number;
  #check: LeaseCheck<L>;

  constructor(seat: Seat, level: L, lapses: number, check: LeaseCheck<L>) {
    this.#seat = seat;
    this.#level = level;
    this.#lapses = lapses;
    this.#check = check;
  }

  get priorityLevel(): string {
    return this.#seat.priorityLevel;
  }

  stillHeld(): boolean {
    return this.#check(this.#level, this.#lapses);
  }

  release(options?: ReleaseOptions): boolean {
    return this.#seat.release(options);
  }

  initialized(): void {
    this.#seat.initialized();
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
