/**
 * The deadline of a call to the upstream, on the gateway's shared
 * {@linkcode Deadlines}: both data paths (`_proxy.ts` on Deno.serve and
 * `_gateway_exchange.ts` on the gateway's own HTTP/1.1 server) use it.
 *
 * @module
 */

import type { BodyDeadline } from "./_upstream_body.ts";
import type { CallCancel } from "./_call_cancel.ts";
import type { Deadline, Deadlines } from "../fairqueuing/deadlines.ts";
import type { Seat } from "../coordinator/types.ts";

/**
 * The request's seat was admitted on a budget lease that has lapsed since
 * ({@linkcode Seat.stillHeld}): it is not sent (see `docs/sharing-seats.md`).
 */
export class SeatLapsed extends Error {
  override name = "SeatLapsed";
  constructor() {
    super("the seat's budget lease lapsed before the request was sent");
  }
}

/**
 * The upstream call's deadline: aborts it when passed. It runs from the
 * dispatch until the response headers arrive ({@linkcode pause}), and again
 * while the body is read to its end for a client that left
 * ({@linkcode resume}). The HTTP/1.1 client watches it as a
 * {@linkcode CallCancel}; `fetch` gets its {@linkcode signal}, made when
 * first asked for.
 */
export class UpstreamDeadline implements Deadline, BodyDeadline, CallCancel {
  readonly endsAt: number;
  slot = -1;
  #deadlines: Deadlines;
  #controller: AbortController | null = null;
  #reason: DOMException | null = null;
  #onAbort: (() => void) | null = null;
  #done: (() => void) | null = null;
  #seat: Seat | null;

  /** `seat`, when given, is asked right before the request is sent whether it still holds. */
  constructor(deadlines: Deadlines, endsAt: number, seat: Seat | null = null) {
    this.endsAt = endsAt;
    this.#deadlines = deadlines;
    this.#seat = seat;
    deadlines.add(this);
  }

  /** @throws {SeatLapsed} when the seat's lease lapsed since it was admitted. */
  beforeSend(): void {
    if (this.#seat?.stillHeld?.() === false) throw new SeatLapsed();
  }

  /** Whether it passed (and aborted the call). */
  get passed(): boolean {
    return this.#reason !== null;
  }

  get aborted(): boolean {
    return this.#reason !== null;
  }

  get reason(): unknown {
    return this.#reason ?? undefined;
  }

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#reason !== null) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  watch(onAbort: () => void): void {
    this.#onAbort = onAbort;
  }

  unwatch(): void {
    this.#onAbort = null;
  }

  fire(): void {
    if (this.#reason !== null) return;
    this.#reason = new DOMException("upstream timed out", "TimeoutError");
    this.#controller?.abort(this.#reason);
    const onAbort = this.#onAbort;
    this.#onAbort = null;
    onAbort?.();
    this.#done?.();
  }

  /** Stops watching; {@linkcode resume} starts again for what was left. */
  pause(): void {
    this.#deadlines.remove(this);
  }

  /** Watches again; resolves once the deadline passes or is cancelled. */
  resume(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#done = resolve;
      if (this.#reason !== null) resolve();
      else this.#deadlines.add(this);
    });
  }

  cancel(): void {
    this.#deadlines.remove(this);
    this.#done?.();
  }
}
