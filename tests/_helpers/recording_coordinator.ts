/**
 * A coordinator of its own, as a remote one is to the front ends: its
 * seats are none of the library's (no `SampledSeat`), and each records how
 * it was given back: the options of its release, or `"initialized"`.
 */

import type { EffectiveConfiguration } from "../../src/config/effective.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Coordinator, ReleaseOptions, Seat } from "../../src/coordinator/types.ts";

/** How a seat went back: its release's options (`undefined`: none), or early. */
export type SeatEnd = ReleaseOptions | undefined | "initialized";

/** Seats of an embedded coordinator over `config`, wrapped to record how each went back. */
export function recordingCoordinator(config: EffectiveConfiguration): {
  coordinator: Coordinator;
  /** One entry per seat given back, in order. */
  ends: SeatEnd[];
  close(): void;
} {
  const inner = new EmbeddedCoordinator(config);
  const ends: SeatEnd[] = [];
  const coordinator: Coordinator = {
    async acquire(request, options) {
      const admission = await inner.acquire(request, options);
      if (!admission.admitted) return admission;
      const seat = admission.seat;
      let done = false;
      const recording: Seat = {
        priorityLevel: seat.priorityLevel,
        release: (o) => {
          const released = seat.release(o);
          if (released && !done) {
            done = true;
            ends.push(o);
          }
          return released;
        },
        initialized: () => {
          if (done) return;
          done = true;
          seat.initialized();
          ends.push("initialized");
        },
        [Symbol.dispose]: () => recording.release(),
      };
      return { ...admission, seat: recording };
    },
  };
  return { coordinator, ends, close: () => inner.close() };
}
