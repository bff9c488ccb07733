/**
 * Deadlines on one clock timer: the reverse proxy's upstream deadlines
 * (`src/deno/_proxy.ts`) and the client kit's acquire deadlines
 * (`src/remote/seat_client.ts`). A timer per request (set when it starts,
 * cleared when it is answered, microseconds or milliseconds later) cost
 * about 2 µs a request on Deno; here a deadline is an entry in a set, and
 * one timer is armed at the earliest of them, re-armed when it fires for
 * those still pending. A set that is seldom empty for long (the gateway's:
 * at a few requests in flight it empties between two of them) keeps its
 * timer while empty ({@linkcode DeadlinesOptions.keepTimer}): otherwise
 * each first deadline after an empty moment sets a timer and each last one
 * clears it, which cost the gateway about 3% of its time per request.
 *
 * @module
 */

import type { Clock, Timer } from "./clock.ts";
import { addSlotted, removeSlotted, type Slotted } from "../_shared/slot_list.ts";

/** One pending deadline: when it passes, and what it does then. */
export interface Deadline extends Slotted {
  /** Clock time it passes at. */
  readonly endsAt: number;
  /** Called once when it passes (unless removed before). */
  fire(): void;
  /**
   * The set's bookkeeping, not the owner's: where the deadline is in the
   * set that watches it, `-1` while none does. Start it at `-1`; a deadline
   * is in one set at a time.
   */
  slot: number;
}

/** Options of {@linkcode Deadlines}. */
export interface DeadlinesOptions {
  /**
   * Keep the timer when the last pending deadline is removed, until it
   * fires: the owner must end that with {@linkcode Deadlines.stopKeepingTimer}
   * or {@linkcode Deadlines.close}.
   * Default `false`.
   */
  keepTimer?: boolean;
}

/**
 * Deadlines sharing one timer of `clock`. Adding and removing take constant
 * time and allocate nothing (an array, each deadline knowing its slot);
 * when the timer fires, it looks at every pending deadline once.
 */
export class Deadlines {
  #clock: Clock;
  #pending: Deadline[] = [];
  #timer: Timer | null = null;
  #armedAt = Infinity;
  #closed = false;
  #keepTimer: boolean;

  constructor(clock: Clock, options: DeadlinesOptions = {}) {
    this.#clock = clock;
    this.#keepTimer = options.keepTimer ?? false;
  }

  /** Deadlines not yet passed nor removed. */
  get size(): number {
    return this.#pending.length;
  }

  /** Watches `deadline` until it passes or is removed (a closed set fires it at once). */
  add(deadline: Deadline): void {
    if (this.#closed) {
      deadline.fire();
      return;
    }
    if (addSlotted(this.#pending, deadline) && deadline.endsAt < this.#armedAt) {
      this.#arm(deadline.endsAt);
    }
  }

  /** Stops watching `deadline`; a no-op when it passed or was removed already. */
  remove(deadline: Deadline): void {
    if (!removeSlotted(this.#pending, deadline)) return;
    // An empty set keeps no timer, unless told to: nothing would hold the process (or a test)
    // open for it. One that keeps it lets it run out (it then stops) or be closed.
    if (this.#pending.length === 0 && this.#timer !== null && !this.#keepTimer) this.#disarm();
  }

  /**
   * Stops keeping the timer while empty (see {@linkcode DeadlinesOptions.keepTimer}): it stops
   * now if nothing is pending, else once nothing is. What is pending still fires when due.
   */
  stopKeepingTimer(): void {
    this.#keepTimer = false;
    if (this.#pending.length === 0 && this.#timer !== null) this.#disarm();
  }

  /** Fires every pending deadline now and stops the timer: nothing is watched any more. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#disarm();
    const pending = this.#pending;
    this.#pending = [];
    for (const d of pending) d.slot = -1;
    for (const d of pending) d.fire();
  }

  #arm(at: number): void {
    this.#timer?.cancel();
    this.#armedAt = at;
    this.#timer = this.#clock.setTimer(at - this.#clock.now(), this.#onTimer);
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = null;
    this.#armedAt = Infinity;
  }

  #onTimer = (): void => {
    this.#timer = null;
    this.#armedAt = Infinity;
    const now = this.#clock.now();
    const passed: Deadline[] = [];
    for (const d of this.#pending) if (d.endsAt <= now) passed.push(d);
    for (const d of passed) this.remove(d);
    let next = Infinity;
    for (const d of this.#pending) if (d.endsAt < next) next = d.endsAt;
    if (next < Infinity && !this.#closed) this.#arm(next);
    // Earliest first (the array's order is not the order they were added in).
    passed.sort((a, b) => a.endsAt - b.endsAt);
    for (const d of passed) d.fire();
  };
}
