/**
 * The mutating work estimator (Kubernetes' `mutatingWorkEstimator`, in
 * `pkg/util/flowcontrol/request/mutating_work_estimator.go`):
 * a write occupies one seat while it executes, and afterwards final seats in
 * proportion to the watches its event must be sent to, for a short
 * additional latency.
 *
 * The write itself takes one seat whatever `minimumSeats` says, as in
 * Kubernetes (whose estimate ends in `InitialSeats: 1`); only a write that
 * produces no event (a service account token) takes the minimum.
 *
 * @module
 */

import { durationPerSeatMs, seatsTimesDuration } from "../_shared/seat_seconds.ts";
import type { EstimateInput, ResolvedWorkEstimate } from "./types.ts";
import type { WatchCountSource } from "./watch_tracker.ts";
import type { WorkEstimatorConfig } from "./work_estimator_config.ts";

/** The mutating estimator over `config`; `watches` absent means no watch is known. */
export function mutatingEstimator(
  config: WorkEstimatorConfig,
  watches: WatchCountSource | undefined,
): (input: EstimateInput) => ResolvedWorkEstimate {
  const minSeats = config.minimumSeats;
  const limitSeats = config.maximumMutatingSeatsLimit;
  const watchesPerSeat = config.watchesPerSeat;
  const threshold = Math.trunc(watchesPerSeat);
  const eventMs = config.eventAdditionalDurationMs;

  return function estimateMutating(input: EstimateInput): ResolvedWorkEstimate {
    const info = input.requestInfo;
    // Creating a service account token produces no event, however watched the accounts are.
    if (info.resource === "serviceaccounts" && info.subresource === "token") {
      return { initialSeats: minSeats, finalSeats: 0, additionalLatencyMs: 0 };
    }
    let count = 0;
    if (watches !== undefined) {
      try {
        count = watches.interestedWatchCount(info);
      } catch {
        count = 0;
      }
    }
    // Below one seat-worth of watchers the cost is ignored: no latency for almost every write.
    if (!(count >= threshold)) {
      return { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };
    }
    const maxSeats = input.maxSeats > 0 && input.maxSeats <= limitSeats
      ? input.maxSeats
      : limitSeats;
    const wanted = Math.ceil(count / watchesPerSeat);
    // Capping the width keeps the final work: the seats are held longer instead.
    const work = seatsTimesDuration(wanted, eventMs);
    const finalSeats = wanted > maxSeats ? maxSeats : wanted;
    const additionalLatencyMs = durationPerSeatMs(work, finalSeats);
    return { initialSeats: 1, finalSeats, additionalLatencyMs };
  };
}
