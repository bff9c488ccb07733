/**
 * Seats handed out by the remote client: one granted by the coordinator
 * server (a lease the client renews), and the no-op seat of the `open`
 * policy. Internal to the coordinator.
 *
 * @module
 */

import type { ReleaseOptions, Seat } from "../coordinator/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";
import { releaseOutcomeOf } from "../coordinator/release_outcome.ts";
import { checkNumber } from "../_shared/errors.ts";

/** What a remote seat tells its client when it ends. */
export interface SeatOwner {
  /**
   * The seat went back (`executionMs` or `null`); `initialized` for an
   * early release; `outcome` as the release stated it (absent: none).
   */
  ended(
    seat: RemoteSeat,
    executionMs: number | null,
    initialized: boolean,
    outcome?: SampleOutcome,
  ): void;
}

function checkExecutionMs(options: ReleaseOptions | undefined): number | null {
  const ms = options?.executionMs;
  if (ms === undefined) return null;
  checkNumber(
    ms,
    (n) => n >= 0 && n < Infinity,
    () => `Cannot release a seat: executionMs must be a finite number >= 0, got ${String(ms)}`,
  );
  return ms;
}

/** A seat the coordinator server granted under acquire `id`. */
export class RemoteSeat implements Seat {
  readonly priorityLevel: string;
  /** The acquire id the server knows the seat by. */
  readonly id: number;
  /** When the seat was granted, on the client's clock. */
  readonly grantedAt: number;
  /** When the lease was last started or renewed, on the client's clock. */
  leasedAt: number;
  #owner: SeatOwner;
  #done = false;
  #lost = false;

  constructor(owner: SeatOwner, id: number, priorityLevel: string, now: number) {
    this.#owner = owner;
    this.id = id;
    this.priorityLevel = priorityLevel;
    this.grantedAt = now;
    this.leasedAt = now;
  }

  /** True once released, initialized or lost. */
  get done(): boolean {
    return this.#done;
  }

  /** True when the server took the seat back (lease expired, session gone). */
  get lost(): boolean {
    return this.#lost;
  }

  /** The server no longer holds the seat: later calls do nothing. */
  lose(): void {
    if (this.#done) return;
    this.#done = true;
    this.#lost = true;
  }

  /** @throws {TypeError} or {RangeError} for an invalid option (the seat stays held). */
  release(options?: ReleaseOptions): boolean {
    // Validate first, so that a bad argument changes nothing.
    const ms = checkExecutionMs(options);
    const outcome = releaseOutcomeOf(options);
    if (this.#done) return false;
    this.#done = true;
    this.#owner.ended(this, ms, false, outcome);
    return true;
  }

  initialized(): void {
    if (this.#done) return;
    this.#done = true;
    this.#owner.ended(this, null, true);
  }

  [Symbol.dispose](): void {
    this.release();
  }
}

/** The seat of the `open` policy: admitted without asking anyone; released once, for nothing. */
export class OpenSeat implements Seat {
  readonly priorityLevel: string;
  #done = false;

  constructor(priorityLevel: string) {
    this.priorityLevel = priorityLevel;
  }

  release(options?: ReleaseOptions): boolean {
    checkExecutionMs(options);
    releaseOutcomeOf(options);
    if (this.#done) return false;
    this.#done = true;
    return true;
  }

  initialized(): void {
    this.#done = true;
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
