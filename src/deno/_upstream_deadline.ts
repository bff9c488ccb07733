/**
 * The deadline of a call to the upstream, on the gateway's shared
 * {@linkcode Deadlines}: both data paths (`_proxy.ts` on Deno.serve and
 * `_gateway_exchange.ts` on the gateway's own HTTP/1.1 server) use it.
 *
 * @module
 */

import type { BodyDeadline } from "./_upstream_body.ts";
import type { Deadline, Deadlines } from "../fairqueuing/deadlines.ts";

/**
 * The upstream call's deadline: aborts it when passed. It runs from the
 * dispatch until the response headers arrive ({@linkcode pause}), and again
 * while the body is read to its end for a client that left
 * ({@linkcode resume}).
 */
export class UpstreamDeadline implements Deadline, BodyDeadline {
  readonly endsAt: number;
  deadlineSlot = -1;
  #deadlines: Deadlines;
  #controller: AbortController;
  #passed = false;
  #done: (() => void) | null = null;

  constructor(deadlines: Deadlines, endsAt: number, controller: AbortController) {
    this.endsAt = endsAt;
    this.#deadlines = deadlines;
    this.#controller = controller;
    deadlines.add(this);
  }

  /** Whether it passed (and aborted the call). */
  get passed(): boolean {
    return this.#passed;
  }

  fire(): void {
    this.#passed = true;
    this.#controller.abort(new DOMException("upstream timed out", "TimeoutError"));
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
      if (this.#passed) resolve();
      else this.#deadlines.add(this);
    });
  }

  cancel(): void {
    this.#deadlines.remove(this);
    this.#done?.();
  }
}
