/**
 * The three response fields `apf()` adds to the benches' request (`GET /`
 * from alice, group `dev`, built-in configuration), names and values as it
 * sends them: the header-setting no-op middlewares of `hono_wrk_server.ts`
 * and `hono_middleware_bench.ts` set exactly these, so that the comparison
 * with `apf()` counts the middleware's work, not bytes that only one of them
 * puts on the wire (the two UIDs are 36 characters each).
 *
 * @module
 */

import {
  bootstrapConfiguration,
  Classifier,
  describeRequest,
  effectiveConfiguration,
  normalizeUser,
} from "../mod.ts";

/** The benches' user. */
export const ALICE = { name: "alice", groups: ["dev"] };

const classification = new Classifier(effectiveConfiguration(bootstrapConfiguration()))
  .classify(normalizeUser(ALICE), describeRequest("GET", "/"));

type Field = readonly [name: string, value: string];

/** `[name, value]` of the fields `apf()` sets on the response to an admitted request that did not wait. */
export const APF_FIELDS: readonly [Field, Field, Field] = [
  ["X-Kubernetes-PF-FlowSchema-UID", classification.flowSchema.uid],
  ["X-Kubernetes-PF-PriorityLevel-UID", classification.priorityLevel.uid],
  ["Server-Timing", "apf;dur=0"],
];
