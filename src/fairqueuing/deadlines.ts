/**
 * Deadlines on one clock timer: the reverse proxy's upstream deadlines
 * (`src/deno/_proxy.ts`) and the client kit's acquire deadlines
 * (`src/remote/seat_client.ts`). A timer per request (set when it starts,
 * cleared when it is answered, microseconds or milliseconds later) cost
 * about 2 µs a request on Deno; here a deadline is an entry in a set, and
 * one timer is armed at the earliest of them, re-armed when it fires for
 * those still pending.
 *
 * @module
 */

import type { Clock, Timer } from "./clock.ts";

/** One pending deadline: when it passes, and what it does then. */
export interface Deadline {
  /** Clock time it passes at. */
  readonly endsAt: number;
  /** Called once when it passes (unless removed before). */
  fire(): void;
  /**
   * The set's bookkeeping, not the owner's: where the deadline is in the
   * set that watches it, `-1` while none does. Start it at `-1`; a deadline
   * is in one set at a time.
   */
  deadlineSlot: number;
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

  constructor(clock: Clock) {
    this.#clock = clock;
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
    if (this.#pending[deadline.deadlineSlot] === deadline) return;
    deadline.deadlineSlot = this.#pending.length;
    this.#pending.push(deadline);
    if (deadline.endsAt < this.#armedAt) this.#arm(deadline.endsAt);
  }

  /** Stops watching `deadline`; a no-op when it passed or was removed already. */
  remove(deadline: Deadline): void {
    const pending = this.#pending;
    const slot = deadline.deadlineSlot;
    if (pending[slot] !== deadline) return;
    const last = pending.pop()!;
    if (last !== deadline) {
      pending[slot] = last;
      last.deadlineSlot = slot;
    }
    deadline.deadlineSlot = -1;
    // An empty set keeps no timer: nothing would hold the process (or a test) open for it.
    if (pending.length === 0 && this.#timer !== null) this.#disarm();
  }

  /** Fires every pending deadline now and stops the timer: nothing is watched any more. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#disarm();
    const pending = this.#pending;
    this.#pending = [];
    for (const d of pending) d.deadlineSlot = -1;
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
