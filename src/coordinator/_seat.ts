/**
 * The embedded coordinator's seat: a queue-set request with release-once
 * semantics. Internal to the coordinator.
 *
 * @module
 */

import type { QueueSetRequest } from "../fairqueuing/types.ts";
import type { Level } from "./_level.ts";
import { releaseOutcomeOf } from "./release_outcome.ts";
import type { ReleaseOptions, Seat } from "./types.ts";

/** A seat backed by an executing queue-set request. */
export class EmbeddedSeat implements Seat {
  #level: Level;
  #request: QueueSetRequest | null;
  #reap: () => void;

  /** `reap` runs after a seat of a quiescing level went back (it may have emptied it). */
  constructor(level: Level, request: QueueSetRequest, reap: () => void) {
    this.#level = level;
    this.#request = request;
    this.#reap = reap;
  }

  get priorityLevel(): string {
    return this.#level.effective.name;
  }

  release(options?: ReleaseOptions): boolean {
    const request = this.#request;
    if (request === null) return false;
    // Validate before forgetting the request, so a bad argument changes nothing. The outcome is
    // for a learned limit (a seat that samples wraps this one): a static limit ignores it.
    releaseOutcomeOf(options);
    const done = request.finish(options);
    this.#request = null;
    if (this.#level.quiescing) this.#reap();
    return done;
  }

  initialized(): void {
    this.release();
  }

  [Symbol.dispose](): void {
    this.release();
  }
}
