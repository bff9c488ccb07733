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
}

/** Deadlines sharing one timer of `clock`. */
export class Deadlines {
  #clock: Clock;
  #pending = new Set<Deadline>();
  #timer: Timer | null = null;
  #armedAt = Infinity;
  #closed = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Deadlines not yet passed nor removed. */
  get size(): number {
    return this.#pending.size;
  }

  /** Watches `deadline` until it passes or is removed (a closed set fires it at once). */
  add(deadline: Deadline): void {
    if (this.#closed) {
      deadline.fire();
      return;
    }
    this.#pending.add(deadline);
    if (deadline.endsAt < this.#armedAt) this.#arm(deadline.endsAt);
  }

  /** Stops watching `deadline`; a no-op when it passed or was removed already. */
  remove(deadline: Deadline): void {
    this.#pending.delete(deadline);
    // An empty set keeps no timer: nothing would hold the process (or a test) open for it.
    if (this.#pending.size === 0 && this.#timer !== null) this.#disarm();
  }

  /** Fires every pending deadline now and stops the timer: nothing is watched any more. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#disarm();
    const pending = [...this.#pending];
    this.#pending.clear();
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
    let next = Infinity;
    const passed: Deadline[] = [];
    for (const d of this.#pending) {
      if (d.endsAt <= now) passed.push(d);
      else if (d.endsAt < next) next = d.endsAt;
    }
    for (const d of passed) this.#pending.delete(d);
    if (next < Infinity && !this.#closed) this.#arm(next);
    for (const d of passed) d.fire();
  };
}
