/**
 * The flowcontrol v1 configuration model: types, manifests, defaulting,
 * validation, the built-in objects and effective limits.
 *
 * @module
 */

export * from "./types.ts";
export * from "./constants.ts";
export * from "./defaults.ts";
export * from "./field_errors.ts";
export * from "./manifest.ts";
export * from "./load.ts";
export * from "./bootstrap.ts";
export * from "./merge.ts";
export * from "./limits.ts";
export * from "./fair_allocation.ts";
export * from "./borrowing.ts";
export * from "./effective.ts";
export { validateFlowSchema } from "./validate_flow_schema.ts";
export { validatePriorityLevel } from "./validate_priority_level.ts";
export { type FlowControlVersion, flowControlVersion } from "./versions.ts";
export { objectUid } from "./uid.ts";
