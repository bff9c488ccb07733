/**
 * The embedded coordinator's seat: a queue-set request with release-once
 * semantics. Internal to the coordinator.
 *
 * @module
 */

import type { QueueSetRequest } from "../fairqueuing/types.ts";
import type { ReleaseOptions, Seat } from "./types.ts";

/** A seat backed by an executing queue-set request. */
export class EmbeddedSeat implements Seat {
  readonly priorityLevel: string;
  #request: QueueSetRequest | null;
  #released: (priorityLevel: string) => void;

  /** `released` runs after the seat went back (the coordinator's reaping hook). */
  constructor(
    priorityLevel: string,
    request: QueueSetRequest,
    released: (priorityLevel: string) => void,
  ) {
    this.priorityLevel = priorityLevel;
    this.#request = request;
    this.#released = released;
  }

  release(options?: ReleaseOptions): boolean {
    const request = this.#request;
    if (request === null) return false;
    // Validate before forgetting the request, so a bad argument changes nothing.
    const done = request.finish(options);
    this.#request = null;
    this.#released(this.priorityLevel);
    return done;
  }

  initialized(): void {
    this.release();
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
