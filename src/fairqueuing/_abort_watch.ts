/**
 * Abort signals of waiting requests, with one listener per distinct signal.
 *
 * Adding or removing an event listener scans the signal's listener list, so
 * one listener per request makes a signal shared by many waiting requests
 * (a connection's, a shutdown signal) cost O(waiting) per request. Here a
 * signal gets a single listener, and the requests waiting on it are kept in
 * a set (or held directly while there is just one).
 *
 * @module
 */

import type { Req } from "./_queue.ts";

/** Tracks which waiting requests each signal cancels. */
export class AbortWatch {
  #waiting = new Map<AbortSignal, Req | Set<Req>>();
  #onAbort: (requests: Req[]) => void;
  #listener = (event: Event): void => {
    const signal = event.target as AbortSignal;
    const entry = this.#waiting.get(signal);
    if (entry === undefined) return;
    this.#onAbort(entry instanceof Set ? [...entry] : [entry]);
  };

  /** `onAbort` receives the requests still waiting on a signal when it aborts. */
  constructor(onAbort: (requests: Req[]) => void) {
    this.#onAbort = onAbort;
  }

  /** Starts watching `signal` for waiting request `r`. */
  watch(r: Req, signal: AbortSignal): void {
    r.signal = signal;
    const entry = this.#waiting.get(signal);
    if (entry === undefined) {
      this.#waiting.set(signal, r);
      signal.addEventListener("abort", this.#listener);
    } else if (entry instanceof Set) {
      entry.add(r);
    } else {
      this.#waiting.set(signal, new Set([entry, r]));
    }
  }

  /** Stops watching for `r` (a no-op when it has no signal). */
  unwatch(r: Req): void {
    const signal = r.signal;
    if (signal === null) return;
    r.signal = null;
    const entry = this.#waiting.get(signal);
    if (entry instanceof Set) {
      entry.delete(r);
      if (entry.size > 0) return;
    } else if (entry !== r) {
      return;
    }
    this.#waiting.delete(signal);
    signal.removeEventListener("abort", this.#listener);
  }
}
