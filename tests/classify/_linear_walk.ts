/**
 * The model the indexed classifier is checked against: a plain walk over
 * `effective.flowSchemas` in matching order with `matchFlowSchema`, as
 * Kubernetes' `startRequest` in k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go
 * walks them; `catch-all` without a rule match when nothing matches.
 */

import type { UserInfo } from "../../src/classify/identity.ts";
import { compileFlowSchema, matchFlowSchema, type RuleMatch } from "../../src/classify/matching.ts";
import type { RequestInfo } from "../../src/classify/request_info.ts";
import {
  CATCH_ALL,
  type EffectiveConfiguration,
  type EffectiveFlowSchema,
} from "../../src/config/mod.ts";

/** The model: every schema in matching order; `catch-all` without a match when none matches. */
export function linearClassify(
  effective: EffectiveConfiguration,
  user: UserInfo,
  ri: RequestInfo,
): { schema: EffectiveFlowSchema; match: RuleMatch | null } {
  for (const schema of effective.flowSchemas) {
    const match = matchFlowSchema(compileFlowSchema(schema.object), user, ri);
    if (match !== undefined) return { schema, match: match as RuleMatch | null };
  }
  return { schema: effective.flowSchemas.find((s) => s.name === CATCH_ALL)!, match: null };
}
