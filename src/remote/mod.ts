/**
 * The client kit: seats from a remote coordinator, with deadlines, reconnection, unreachable policies and late release.
 *
 * @module
 */

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
export {
  connectPerLevel,
  type ConnectPerLevelOptions,
  type PerLevelCoordinator,
} from "./per_level_client.ts";
