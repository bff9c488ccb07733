/**
 * Fair queuing: the injected clock, shuffle sharding, seat-seconds, the
 * seat-demand integrator, and the queue set of one priority level.
 *
 * `requiredEntropyBits` and `MAX_HASH_BITS` are exported once, from the
 * configuration model, which must not import this room.
 *
 * @module
 */

export { type Clock, FakeEventClock, systemClock, type Timer } from "./clock.ts";
export { type DealCallback, Dealer, MAX_DECK_SIZE } from "./shuffle_shard.ts";
export {
  durationPerSeatMs,
  formatSeatSeconds,
  SEAT_SECONDS_SCALE,
  seatSecondsToFloat,
  seatsTimesDuration,
} from "../_shared/seat_seconds.ts";
export {
  Integrator,
  type IntegratorResults,
  SEAT_DEMAND_SMOOTHING,
  SeatDemandStats,
} from "./integrator.ts";
export {
  ESTIMATED_SERVICE_DURATION_MS,
  QueueSet,
  type QueueSetConfigChange,
  type QueueSetOptions,
  REBASE_THRESHOLD,
} from "./queue_set.ts";
export type {
  Decision,
  ExemptQueueSetConfig,
  FinishOptions,
  FlowHash,
  LimitedQueueSetConfig,
  QueueSetConfig,
  QueueSetObserver,
  QueueSetQueuing,
  QueueSetRequest,
  QueueSetSnapshot,
  QueueSnapshot,
  RejectReason,
  RequestDescriptor,
  RequestDetails,
  RequestSnapshot,
  SnapshotOptions,
  StartRequestInit,
  WorkEstimate,
} from "./types.ts";
