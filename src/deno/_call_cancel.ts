/**
 * What may end a call of the HTTP/1.1 upstream client early: the caller's
 * `AbortSignal`, or the gateway's upstream deadline itself. A call watches
 * it with one callback and stops watching when it is over. The deadline
 * plugs in without an `AbortSignal` made per request: on Deno an
 * `AbortController` and the listener a call adds to and removes from its
 * signal cost about as much as parsing a response head (`bench/RESULTS.md`,
 * the gateway's data path).
 *
 * @module
 */

/** What may cancel one call to the upstream. */
export interface CallCancel {
  /** Whether it has cancelled the call. */
  readonly aborted: boolean;
  /** Why: what the call rejects with once cancelled. */
  readonly reason: unknown;
  /** Calls `onAbort` once when it cancels, until {@linkcode unwatch}. One watcher at a time. */
  watch(onAbort: () => void): void;
  unwatch(): void;
  /** An `AbortSignal` that aborts with it, for what needs one (dialling a connection). */
  readonly signal: AbortSignal;
  /** Called right before the request is written: throws to stop it there. */
  beforeSend?(): void;
}

/** A caller's `AbortSignal` as a {@linkcode CallCancel}. */
export class SignalCancel implements CallCancel {
  readonly signal: AbortSignal;
  #onAbort: (() => void) | null = null;

  constructor(signal: AbortSignal) {
    this.signal = signal;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  get reason(): unknown {
    return this.signal.reason;
  }

  watch(onAbort: () => void): void {
    this.unwatch();
    this.#onAbort = onAbort;
    this.signal.addEventListener("abort", onAbort, { once: true });
  }

  unwatch(): void {
    if (this.#onAbort === null) return;
    this.signal.removeEventListener("abort", this.#onAbort);
    this.#onAbort = null;
  }
}
