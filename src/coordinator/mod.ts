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
export { Coalescer } from "./coalescer.ts";
export {
  type ClientMessage,
  decodeClientMessage,
  type Decoded,
  decodeServerMessage,
  encodeMessage,
  MAX_BATCH,
  MAX_FRAME_LENGTH,
  MAX_NAME_LENGTH,
  negotiateVersion,
  type ServerMessage,
  WIRE_VERSIONS,
  type WireConfiguration,
  type WireDecision,
  type WireError,
  type WireErrorCode,
  type WireOp,
} from "./wire.ts";
export {
  DEFAULT_GRACE_MS,
  DEFAULT_LEASE_MS,
  RECLAIMED_LOG_SIZE,
  type Session,
  SessionHost,
  type SessionHostOptions,
  type SessionOutput,
  type SessionStats,
} from "./sessions.ts";
export { constantTimeEqual } from "../_shared/secrets.ts";
export {
  CLOSE_PROTOCOL_ERROR,
  CLOSE_UNAUTHENTICATED,
  ServerConnection,
  type ServerConnectionOptions,
} from "./server_connection.ts";
export {
  type ClientState,
  connectCoordinator,
  type ConnectCoordinatorOptions,
  CoordinatorRefusedError,
  type CoordinatorSocket,
  DEFAULT_FALLBACK_FRACTION,
  type RemoteCoordinator,
  type RemoteCoordinatorStats,
  type UnreachablePolicy,
} from "./client.ts";
export { effectiveFromWire } from "./wire_configuration.ts";
export { BorrowingController, type SeatDemandReport } from "./borrowing_controller.ts";
export {
  connectPerLevel,
  type ConnectPerLevelOptions,
  type PerLevelCoordinator,
} from "./per_level_client.ts";
