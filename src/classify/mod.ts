/**
 * Classification: identity, request description, FlowSchema matching, the
 * classifier and the flow hash.
 *
 * @module
 */

export {
  ANONYMOUS_USER,
  anonymousUser,
  AUTHENTICATED_GROUP,
  IDENTITY_LIMITS,
  IdentityError,
  type IdentityInput,
  normalizeUser,
  UNAUTHENTICATED_GROUP,
  type UserInfo,
} from "./identity.ts";
export {
  type FrontProxyHeaderOptions,
  frontProxyIdentity,
  type IdentityResolver,
  type JwtClaimOptions,
  jwtIdentity,
  jwtPayloadIdentity,
} from "./identity_resolvers.ts";
export {
  describeRequest,
  type RequestInfo,
  type RequestInfoOptions,
  RequestInfoResolver,
  type ResourceRoute,
} from "./request_info.ts";
export { requestPathProblem } from "./request_path.ts";
export type { RuleMatch } from "./matching.ts";
export {
  type FlowHash,
  flowHash,
  flowHashToBigInt,
  flowHashToString,
  parseFlowHash,
} from "./flow_hash.ts";
export { type Classification, Classifier, FLOW_CACHE_LIMIT } from "./classifier.ts";
