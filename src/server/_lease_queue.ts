/**
 * Every lease of a coordinator server on one timer. All leases have the
 * same term, so they fall due in the order they were granted (or renewed):
 * a queue in grant order is also in due order, and one timer for its head
 * replaces a timer per seat (which cost about a fifth of the server's time).
 * Internal to the sessions.
 *
 * @module
 */

import type { Clock, Timer } from "../fairqueuing/clock.ts";

interface Lease extends Timer {
  due: number;
  expire: (() => void) | null;
  counts: { live: number };
}

function cancelLease(this: Lease): void {
  if (this.expire === null) return;
  this.expire = null;
  this.counts.live--;
}

/** Leases of one term, due in the order they were added. */
export class LeaseQueue {
  #clock: Clock;
  #term: number;
  #leases: Lease[] = [];
  #head = 0;
  #timer: Timer | null = null;
  #counts = { live: 0 };

  /** Leases last `termMs` on `clock`. */
  constructor(clock: Clock, termMs: number) {
    this.#clock = clock;
    this.#term = termMs;
  }

  /** Starts a lease: `expire` runs at its end unless the returned handle is cancelled first. */
  add(expire: () => void): Timer {
    const lease: Lease = {
      due: this.#clock.now() + this.#term,
      expire,
      cancel: cancelLease,
      counts: this.#counts,
    };
    this.#dropEnded();
    // A long-held lease at the head keeps the ended ones behind it: sweep them out once they
    // are the majority (amortized: the sweep costs what the adds since the last one did).
    if (this.kept > 2 * this.#counts.live + 1024) {
      this.#leases = this.#leases.slice(this.#head).filter((l) => l.expire !== null);
      this.#head = 0;
    }
    this.#counts.live++;
    this.#leases.push(lease);
    this.#arm();
    return lease;
  }

  /** Entries the queue keeps (ended ones not yet passed included): stays near the live count. */
  get kept(): number {
    return this.#leases.length - this.#head;
  }

  /** Ends every lease that is due now (what the timer does; for hosts with their own alarms). */
  expireDue(): void {
    this.#timer?.cancel();
    this.#fire();
  }

  /** Clock time the next live lease falls due, or `null` when there is none. */
  nextDue(): number | null {
    this.#dropEnded();
    return this.#leases[this.#head]?.due ?? null;
  }

  /**
   * Passes the ended (released) leases at the head, so that a busy server
   * with short-held seats keeps a short queue between two timer firings
   * (amortized: each lease is passed once). An armed timer may then fire
   * early; it finds nothing due and arms again.
   */
  #dropEnded(): void {
    const leases = this.#leases;
    while (this.#head < leases.length && leases[this.#head]!.expire === null) this.#head++;
    this.#compact();
  }

  /** Drops every lease and the timer. */
  close(): void {
    this.#timer?.cancel();
    this.#timer = null;
    this.#leases = [];
    this.#head = 0;
    this.#counts = { live: 0 }; // leases of before cancel into the old counts
  }

  #arm(): void {
    if (this.#timer !== null) return;
    const leases = this.#leases;
    while (this.#head < leases.length && leases[this.#head]!.expire === null) this.#head++;
    this.#compact();
    const next = leases[this.#head];
    if (next === undefined) return;
    this.#timer = this.#clock.setTimer(next.due - this.#clock.now(), this.#fire);
  }

  #fire = (): void => {
    this.#timer = null;
    const now = this.#clock.now();
    const leases = this.#leases;
    while (this.#head < leases.length && leases[this.#head]!.due <= now) {
      const lease = leases[this.#head++]!;
      const expire = lease.expire;
      if (expire === null) continue;
      lease.expire = null;
      this.#counts.live--;
      expire();
    }
    this.#arm();
  };

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#leases.length) {
      this.#leases = this.#leases.slice(this.#head);
      this.#head = 0;
    }
  }
}
