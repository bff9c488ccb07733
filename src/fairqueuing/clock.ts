/**
 * Time, injected: the {@linkcode Clock} every time-dependent part of APF
 * reads, with the real {@linkcode systemClock} and the
 * {@linkcode FakeEventClock} used by tests and the simulator.
 *
 * This is the only module of `src/` that reads real time or sets real
 * timers; everything else receives a `Clock`.
 *
 * @module
 */

import { IndexedHeap } from "./_indexed_heap.ts";
import { checkNumber } from "../_shared/errors.ts";

/** A pending timer; cancelling is idempotent and harmless after it fired. */
export interface Timer {
  /** Prevents the callback from running, if it has not run yet. */
  cancel(): void;
}

/** A source of monotonic time and of timers. */
export interface Clock {
  /** Milliseconds since an arbitrary origin, with sub-millisecond precision; never decreases. */
  now(): number;
  /**
   * Runs `callback` once, no earlier than `delayMs` milliseconds from now
   * (a negative or NaN delay counts as 0).
   */
  setTimer(delayMs: number, callback: () => void): Timer;
  /**
   * Wall-clock time in ms since the Unix epoch, for printing times (dumps)
   * and for anything Kubernetes counts in Unix seconds. Optional: without
   * it, {@linkcode now} is taken as wall-clock time.
   */
  wallNow?(): number;
}

/** Most milliseconds `setTimeout` accepts: larger delays (2^31 and up) overflow to about 0. */
export const MAX_TIMEOUT_MS: number = 2 ** 31 - 1;

/**
 * The delay to hand to `setTimeout` for a timer due in `remainingMs`: whole
 * milliseconds rounded up (a timer must not fire early), at most
 * {@linkcode MAX_TIMEOUT_MS} (the timer re-arms until its due time), and 0
 * for a negative or NaN delay.
 *
 * @example
 * ```ts
 * import { nextTimeoutDelay } from "./clock.ts";
 * nextTimeoutDelay(1.2); // 2
 * nextTimeoutDelay(30 * 86_400_000); // 2147483647
 * ```
 */
export function nextTimeoutDelay(remainingMs: number): number {
  if (!(remainingMs > 0)) return 0;
  return Math.min(Math.ceil(remainingMs), MAX_TIMEOUT_MS);
}

/** The real-time services a {@linkcode hostClock} runs on. */
export interface TimerHost {
  /** Monotonic milliseconds, like `performance.now()`. */
  now(): number;
  /** Like `setTimeout`; `delayMs` is a whole number in `[0, MAX_TIMEOUT_MS]`. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  /** Like `clearTimeout`, given what {@linkcode TimerHost.setTimeout} returned. */
  clearTimeout(handle: unknown): void;
  /** Wall-clock milliseconds since the Unix epoch, like `Date.now()` (optional). */
  wallNow?(): number;
}

/**
 * A {@linkcode Clock} on `host`'s time and timers. Each timer fires no earlier
 * than its due time on `host.now()`: fractional delays round up, and a delay
 * beyond `setTimeout`'s range is served by timers of at most
 * {@linkcode MAX_TIMEOUT_MS}, re-armed until the due time. An infinite delay
 * never fires. {@linkcode systemClock} is this clock on the real host.
 *
 * @example
 * ```ts
 * import { hostClock } from "./clock.ts";
 * const clock = hostClock({
 *   now: () => performance.now(),
 *   setTimeout: (callback, ms) => setTimeout(callback, ms),
 *   clearTimeout: (handle) => clearTimeout(handle as number),
 * });
 * clock.setTimer(10, () => {}).cancel();
 * ```
 */
export function hostClock(host: TimerHost): Clock {
  return clockOn(host, () => host.now());
}

/**
 * {@linkcode hostClock} with its `now` given apart, so that the system clock's reads
 * `performance.now()` without a call in between.
 */
function clockOn(host: TimerHost, now: () => number): Clock {
  const wallNow = host.wallNow;
  return {
    now,
    ...(wallNow !== undefined && { wallNow: () => wallNow.call(host) }),
    setTimer(delayMs: number, callback: () => void): Timer {
      const dueAt = host.now() + (delayMs > 0 ? delayMs : 0);
      if (dueAt === Infinity) return { cancel() {} };
      let handle: unknown;
      const fire = () => {
        const remainingMs = dueAt - host.now();
        if (remainingMs > 0) handle = host.setTimeout(fire, nextTimeoutDelay(remainingMs));
        else callback();
      };
      handle = host.setTimeout(fire, nextTimeoutDelay(delayMs));
      return { cancel: () => host.clearTimeout(handle) };
    },
  };
}

/** The real host: `performance.now()`, `Date.now()`, `setTimeout`. */
const systemHost: TimerHost = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The real clock: `performance.now()` and `setTimeout`. Timers keep the
 * process alive until they fire or are cancelled. Delays may be fractional
 * or longer than `setTimeout`'s 2^31−1 ms: a timer never fires early.
 *
 * @example
 * ```ts
 * import { systemClock } from "@apf/edge";
 * const started = systemClock.now();
 * const timer = systemClock.setTimer(10, () => console.log(systemClock.now() - started));
 * timer.cancel();
 * ```
 */
export const systemClock: Clock = clockOn(systemHost, systemHost.now);

/** One scheduled callback of the fake clock. */
class FakeTimer implements Timer {
  heapIndex = -1;
  constructor(
    readonly owner: FakeEventClock,
    readonly at: number,
    readonly seq: number,
    readonly callback: () => void,
  ) {}
  cancel(): void {
    this.owner.cancelTimer(this);
  }
}

function earlier(a: FakeTimer, b: FakeTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Resolves after `ms` on `clock`, or at once when `signal` aborts (or has
 * aborted, or `ms` is 0 or less); the timer is cancelled then, so nothing is
 * left behind.
 */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const timer = clock.setTimer(ms, done);
    function done() {
      signal.removeEventListener("abort", early);
      resolve();
    }
    function early() {
      timer.cancel();
      resolve();
    }
    signal.addEventListener("abort", early, { once: true });
  });
}

/**
 * A clock whose time moves only when told to, like the event clock of
 * Kubernetes' QueueSet tests (`fairqueuing/testing/eventclock/fake.go` in
 * `pkg/util/flowcontrol`): timers form a queue ordered by due time;
 * advancing runs every callback due up to the target, instant by instant,
 * and all callbacks due at an instant run (in the order they were set)
 * before time moves on, including ones set at that instant by the callbacks
 * themselves.
 *
 * @example
 * ```ts
 * import { FakeEventClock } from "@apf/edge";
 * const clock = new FakeEventClock();
 * const fired: number[] = [];
 * clock.setTimer(5, () => fired.push(clock.now()));
 * clock.advance(10);
 * fired; // [5]
 * clock.now(); // 10
 * ```
 */
export class FakeEventClock implements Clock {
  #now: number;
  #seq = 0;
  #heap = new IndexedHeap<FakeTimer>(earlier);

  /** Creates a fake clock reading `startMs` (default 0). */
  constructor(startMs = 0) {
    checkNumber(
      startMs,
      Number.isFinite,
      () => `Cannot create a FakeEventClock: start time must be finite, got ${startMs}`,
    );
    this.#now = startMs;
  }

  /** The current fake time in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** The fake time, read as milliseconds since the Unix epoch. */
  wallNow(): number {
    return this.#now;
  }

  /** Schedules `callback` at `now() + max(0, delayMs)`. */
  setTimer(delayMs: number, callback: () => void): Timer {
    if (typeof callback !== "function") {
      throw new TypeError(
        `Cannot set a timer: callback must be a function, got ${typeof callback}`,
      );
    }
    const at = delayMs > 0 ? this.#now + delayMs : this.#now;
    if (at === Infinity) return { cancel() {} };
    const timer = new FakeTimer(this, at, this.#seq++, callback);
    this.#heap.push(timer);
    return timer;
  }

  /** Number of timers that have not fired and were not cancelled. */
  get pendingTimers(): number {
    return this.#heap.size;
  }

  /** Due time of the earliest pending timer, or `undefined` when there is none. */
  nextTimerAt(): number | undefined {
    return this.#heap.peek()?.at;
  }

  /**
   * Moves time forward by `ms`, running every timer due on the way.
   * Returns the number of callbacks run.
   */
  advance(ms: number): number {
    checkNumber(
      ms,
      (n) => n >= 0 && n !== Infinity,
      () => `Cannot advance a FakeEventClock: ms must be finite and >= 0, got ${ms}`,
    );
    return this.advanceTo(this.#now + ms);
  }

  /**
   * Moves time forward to `t` (a no-op when `t` is not later than now),
   * running every timer due up to and including `t`, earliest first. Returns
   * the number of callbacks run.
   */
  advanceTo(t: number): number {
    checkNumber(
      t,
      (n) => !Number.isNaN(n) && n !== Infinity,
      () => `Cannot advance a FakeEventClock: target must be finite, got ${t}`,
    );
    const ran = this.#run(t, Infinity);
    if (t > this.#now) this.#now = t;
    return ran;
  }

  /**
   * Runs timers, earliest first, until none is pending or the next one is due
   * after `limitMs` (default: no limit). Time stops at the last timer run.
   * Returns the number of callbacks run.
   *
   * @throws {RangeError} after `maxCallbacks` callbacks (default 10,000,000),
   * which guards tests against timers that reschedule themselves forever.
   */
  runUntilIdle(limitMs = Infinity, maxCallbacks = 10_000_000): number {
    const message = () =>
      `Cannot run the FakeEventClock until idle: limitMs must be a number and maxCallbacks >= 0, got ${limitMs} and ${maxCallbacks}`;
    checkNumber(limitMs, (n) => !Number.isNaN(n), message);
    checkNumber(maxCallbacks, (n) => n >= 0, message);
    return this.#run(limitMs, maxCallbacks);
  }

  /** Runs the timers due up to `limit`, earliest first; time follows each one. */
  #run(limit: number, maxCallbacks: number): number {
    let ran = 0;
    for (;;) {
      const next = this.#heap.peek();
      if (next === undefined || next.at > limit) return ran;
      if (ran >= maxCallbacks) {
        throw new RangeError(
          `Cannot run the FakeEventClock until idle: still busy after ${maxCallbacks} callbacks at t=${this.#now}ms`,
        );
      }
      if (next.at > this.#now) this.#now = next.at;
      this.#heap.pop();
      ran++;
      next.callback();
    }
  }

  /** Removes `timer` from the queue (used by {@linkcode Timer.cancel}). */
  cancelTimer(timer: Timer): void {
    if (timer instanceof FakeTimer && timer.owner === this) this.#heap.delete(timer);
  }
}
