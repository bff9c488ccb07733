/**
 * Classification: identity, request description, FlowSchema matching, the
 * classifier and the flow hash.
 *
 * @module
 */

export * from "./identity.ts";
export * from "./identity_resolvers.ts";
export * from "./request_info.ts";
export * from "./matching.ts";
export * from "./flow_hash.ts";
export * from "./classifier.ts";
