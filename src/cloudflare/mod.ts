/**
 * The Cloudflare Workers adapter (`docs/semantics.md` §11.1): one Durable
 * Object per priority level ({@linkcode PriorityLevelObject}), a controller
 * object that moves seats between levels ({@linkcode ControllerObject}), and
 * the Worker-side coordinator for `apf({ coordinator })`
 * ({@linkcode cloudflareCoordinator}), or, with seat budgets, a holder
 * object per region deciding on its share of every level
 * ({@linkcode BudgetHolderObject}, {@linkcode cloudflareBudgetCoordinator}).
 * Export both classes from the Worker's
 * entry module and bind them as `APF_LEVELS` and `APF_CONTROLLER`.
 *
 * @module
 */

export { type CloudflareAdminOptions, cloudflareAdminRoutes } from "./admin.ts";
export { type BudgetCoordinatorOptions, cloudflareBudgetCoordinator } from "./budgets.ts";
export { BudgetHolderObject, type HeldAdmission, HeldSeatTarget } from "./holder_object.ts";
export {
  CallerLiveness,
  cloudflareCoordinator,
  type WorkerCoordinator,
  type WorkerCoordinatorOptions,
  type WorkerCoordinatorStats,
} from "./coordinator.ts";
export { configurationFromEnv } from "./_controller_configuration.ts";
export { ControllerObject } from "./controller_object.ts";
export type { ApfBindings } from "./env.ts";
export { type LevelAdmission, PriorityLevelObject, SeatTarget } from "./level_object.ts";
export type {
  ControllerConfigurationInput,
  StoredConfiguration,
} from "./_controller_configuration.ts";
export type { SessionAdmission } from "../server/sessions.ts";
export type {
  LevelHost,
  LevelHostOptions,
  LevelHostStats,
  LevelUpdate,
  Liveness,
} from "./_level_host.ts";
