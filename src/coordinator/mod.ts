/**
 * The coordinator: seats for every priority level, borrowing, Retry-After.
 *
 * @module
 */

export {
  BORROWING_ADJUSTMENT_PERIOD_MS,
  type BorrowingAdjustment,
  EmbeddedCoordinator,
  type EmbeddedCoordinatorOptions,
  type LevelAdjustment,
  type LevelObservers,
} from "./embedded.ts";
export { DroppedRequestsTracker, MAX_RETRY_AFTER_SECONDS } from "./retry_after.ts";
export {
  DEFAULT_QUEUE_WAIT_LIMIT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_QUEUE_WAIT_LIMIT_MS,
  queueWaitLimitMs,
  requestDeadlineMs,
  requestDetails,
  seatRequestFor,
  type SeatRequestOptions,
} from "./seat_request.ts";
export type {
  AcquireOptions,
  Admission,
  AdmissionRejectReason,
  Admitted,
  Coordinator,
  Rejected,
  ReleaseOptions,
  Seat,
  SeatRequest,
} from "./types.ts";
export type { SampleOutcome } from "../adaptive/types.ts";
export { BorrowingController, type SeatDemandReport } from "./borrowing_controller.ts";
export {
  applyServerConcurrencyLimit,
  followLearnedLimit,
  type ReconfigurableCoordinator,
} from "./learned_limit.ts";
