/**
 * The classifier (spec §2.4, §2.5, §2.7): from a user and a RequestInfo to the
 * FlowSchema, the priority level and the flow. It does no I/O and, for a warm
 * flow, no hashing: flow hashes are cached per (schema, distinguisher). Dealing
 * the hand of queues from the hash is the queue set's business (shuffle sharding).
 *
 * @module
 */

import {
  CATCH_ALL,
  type EffectiveConfiguration,
  type EffectiveFlowSchema,
  type EffectivePriorityLevel,
} from "../config/mod.ts";
import { type FlowHash, flowHash } from "./flow_hash.ts";
import type { UserInfo } from "./identity.ts";
import {
  type CompiledFlowSchema,
  compileFlowSchema,
  matchFlowSchema,
  type RuleMatch,
} from "./matching.ts";
import type { RequestInfo } from "./request_info.ts";

/** Where a request goes. */
export interface Classification {
  /** The matching FlowSchema. */
  flowSchema: EffectiveFlowSchema;
  /** Its priority level. */
  priorityLevel: EffectivePriorityLevel;
  /** The flow distinguisher (`""` unless the level queues with more than one queue). */
  distinguisher: string;
  /**
   * The flow hash as 32-bit halves (cached: the same object for every request
   * of a flow), for queuing levels with more than one queue; else `null`.
   */
  flowHash: FlowHash | null;
  /** The rule that matched, or `null` when the request fell through to `catch-all`. */
  match: RuleMatch | null;
}

/** Flows cached per FlowSchema before the cache is cleared (bounds memory under many users). */
export const FLOW_CACHE_LIMIT = 4096;

interface Entry {
  compiled: CompiledFlowSchema;
  schema: EffectiveFlowSchema;
  level: EffectivePriorityLevel;
  /** Whether the level needs a flow hash: Limited, Queue, queues > 1. */
  hashed: boolean;
  flows: Map<string, FlowHash>;
}

/**
 * Classifies requests against one effective configuration. Build a new
 * classifier when the configuration changes; classification itself is
 * synchronous and allocation-light.
 *
 * @example
 * ```ts
 * import { bootstrapConfiguration, Classifier, describeRequest, effectiveConfiguration, normalizeUser } from "@apf/edge";
 * const classifier = new Classifier(effectiveConfiguration(bootstrapConfiguration()));
 * const c = classifier.classify(normalizeUser({ name: "alice" }), describeRequest("GET", "/api/v1/pods"));
 * c.flowSchema.name; // "global-default"
 * ```
 */
export class Classifier {
  readonly #entries: Entry[];

  /** Compiles the configuration's FlowSchemas in matching order. */
  constructor(effective: EffectiveConfiguration) {
    const levels = new Map(effective.priorityLevels.map((l) => [l.name, l]));
    this.#entries = effective.flowSchemas.map((schema) => {
      const level = levels.get(schema.priorityLevel);
      if (level === undefined) {
        throw new TypeError(
          `Cannot classify: FlowSchema ${schema.name} references missing level ${schema.priorityLevel}`,
        );
      }
      return {
        compiled: compileFlowSchema(schema.object),
        schema,
        level,
        hashed: level.type === "Limited" && (level.queuing?.queues ?? 0) > 1,
        flows: new Map(),
      };
    });
  }

  /** Classifies one request: the first matching schema wins; `catch-all` is the fallback. */
  classify(user: UserInfo, requestInfo: RequestInfo): Classification {
    let catchAll: Entry | undefined;
    for (const entry of this.#entries) {
      const match = matchFlowSchema(entry.compiled, user, requestInfo);
      if (match !== undefined) return this.#result(entry, match, user, requestInfo);
      if (entry.schema.name === CATCH_ALL) catchAll = entry;
    }
    // Unreachable with the built-in catch-all (it matches every user with a
    // group); a user without groups falls back to it, as Kubernetes does.
    if (catchAll === undefined) throw new TypeError("Cannot classify: no catch-all FlowSchema");
    return this.#result(catchAll, null, user, requestInfo);
  }

  #result(entry: Entry, match: RuleMatch | null, user: UserInfo, ri: RequestInfo): Classification {
    if (!entry.hashed) {
      return {
        flowSchema: entry.schema,
        priorityLevel: entry.level,
        distinguisher: "",
        flowHash: null,
        match,
      };
    }
    const method = entry.schema.distinguisher;
    const distinguisher = method === "ByUser"
      ? user.name
      : method === "ByNamespace"
      ? ri.namespace
      : "";
    let hash = entry.flows.get(distinguisher);
    if (hash === undefined) {
      hash = Object.freeze(flowHash(entry.schema.name, distinguisher));
      if (entry.flows.size >= FLOW_CACHE_LIMIT) entry.flows.clear();
      entry.flows.set(distinguisher, hash);
    }
    return {
      flowSchema: entry.schema,
      priorityLevel: entry.level,
      distinguisher,
      flowHash: hash,
      match,
    };
  }
}
