/**
 * The classifier: from a user and a RequestInfo to the FlowSchema, the
 * priority level and the flow, as Kubernetes' `startRequest` in
 * k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go decides them: the
 * first FlowSchema in matching order (precedence, then name) that matches
 * wins, `catch-all` otherwise. An index (`_schema_index.ts`) narrows the
 * schemas a request has to be matched against, so that classifying costs
 * about the same with a thousand schemas as with ten. It does no I/O and,
 * for a warm flow, no hashing: flow hashes are cached per (schema,
 * distinguisher) in one bounded cache (`_flow_cache.ts`). Dealing the hand of
 * queues from the hash is the queue set's business (shuffle sharding).
 *
 * @module
 */

import {
  CATCH_ALL,
  type EffectiveConfiguration,
  type EffectiveFlowSchema,
  type EffectivePriorityLevel,
} from "../config/mod.ts";
import { FlowCache } from "./_flow_cache.ts";
import { SchemaIndex } from "./_schema_index.ts";
import type { FlowHash } from "./flow_hash.ts";
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
   * The flow hash as 32-bit halves, frozen, for queuing levels with more than
   * one queue; else `null`. Cached: a warm flow gets the same object again
   * (a flow evicted from the cache, or with a distinguisher longer than 256
   * characters, gets an equal new one).
   */
  flowHash: FlowHash | null;
  /** The rule that matched, or `null` when the request fell through to `catch-all`. */
  match: RuleMatch | null;
}

/**
 * The most flow hashes one {@linkcode Classifier} keeps, all its FlowSchemas
 * together (a flow is a schema and a distinguisher): the one bound of its
 * flow cache, whatever the number of schemas or users. Eviction is by two
 * generations of half this size each: a flow seen again within the last
 * 16,384 new flows stays cached; an older one is hashed again (SHA-256, about
 * 0.5 µs). Measured full (bench/RESULTS.md): about 210 bytes per entry
 * besides the distinguisher string it keeps, 7.6 MiB with 22-character
 * names; distinguishers longer than 256 characters are never kept, so even
 * the longest names cannot take a full cache past about 23 MiB.
 */
export const FLOW_CACHE_LIMIT = 32_768;

interface Entry {
  compiled: CompiledFlowSchema;
  schema: EffectiveFlowSchema;
  level: EffectivePriorityLevel;
  /** Whether the level needs a flow hash: Limited, Queue, queues > 1. */
  hashed: boolean;
  /** Its position in matching order: its key in the flow cache. */
  position: number;
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
  readonly #index: SchemaIndex;
  readonly #catchAll: Entry | undefined;
  readonly #flows: FlowCache;
  /** The last request classified, by what its classification depends on, and its result. */
  #last: Remembered | null = null;

  /** Compiles and indexes the configuration's FlowSchemas in matching order. */
  constructor(effective: EffectiveConfiguration) {
    const levels = new Map(effective.priorityLevels.map((l) => [l.name, l]));
    this.#entries = effective.flowSchemas.map((schema, position) => {
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
        position,
      };
    });
    this.#index = new SchemaIndex(this.#entries.map((e) => e.compiled));
    this.#catchAll = this.#entries.find((e) => e.schema.name === CATCH_ALL);
    this.#flows = new FlowCache(FLOW_CACHE_LIMIT);
  }

  /** Classifies one request: the first matching schema wins; `catch-all` is the fallback. */
  classify(user: UserInfo, requestInfo: RequestInfo): Classification {
    const last = this.#last;
    if (last !== null && last.matches(user, requestInfo)) return last.classification();
    const result = this.#classify(user, requestInfo);
    this.#last = new Remembered(user, requestInfo, result);
    return result;
  }

  #classify(user: UserInfo, requestInfo: RequestInfo): Classification {
    const candidates = this.#index.candidates(user, requestInfo);
    for (let position = candidates.next(); position !== -1; position = candidates.next()) {
      const entry = this.#entries[position]!;
      const match = matchFlowSchema(entry.compiled, user, requestInfo);
      if (match !== undefined) return this.#result(entry, match, user, requestInfo);
    }
    // Unreachable with the built-in catch-all (it matches every user with a
    // group); a user without groups falls back to it, as Kubernetes does.
    const catchAll = this.#catchAll;
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
    return {
      flowSchema: entry.schema,
      priorityLevel: entry.level,
      distinguisher,
      flowHash: this.#flows.get(entry.position, entry.schema.name, distinguisher),
      match,
    };
  }
}

/**
 * What a classification depends on, of one request, and its result: the
 * classifier keeps the last one, since requests in a row often come from
 * one user for one kind of thing (a client polling, a flood from one
 * flow), and the next one alike is answered without the index walk and the
 * matching (about 0.2 µs on a warm core, several times that in a busy
 * server, `bench/RESULTS.md`). Matching reads the user's name and groups
 * and, of the RequestInfo, the kind, the verb and the path (non-resource)
 * or the API group, resource, subresource and namespace (resource); a
 * distinguisher reads the name or the namespace: exactly these are
 * compared. They are kept as values (the strings, a copy of the groups),
 * never as the caller's objects, which may change after; and the result
 * too, so that each request gets objects of its own. Keeping them costs a
 * classification that misses about 650 instructions (cachegrind).
 */
class Remembered {
  readonly name: string;
  readonly groups: string[];
  readonly resource: boolean;
  readonly verb: string;
  readonly path: string;
  readonly apiGroup: string;
  readonly kind: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly flowSchema: EffectiveFlowSchema;
  readonly priorityLevel: EffectivePriorityLevel;
  readonly distinguisher: string;
  readonly flowHash: FlowHash | null;
  readonly matched: boolean;
  readonly rule: number;
  readonly subject: number;
  readonly ruleKind: RuleMatch["kind"];
  readonly index: number;

  constructor(user: UserInfo, ri: RequestInfo, result: Classification) {
    this.name = user.name;
    this.groups = user.groups.slice();
    this.resource = ri.isResourceRequest;
    this.verb = ri.verb;
    this.path = ri.path;
    this.apiGroup = ri.apiGroup;
    this.kind = ri.resource;
    this.subresource = ri.subresource;
    this.namespace = ri.namespace;
    this.flowSchema = result.flowSchema;
    this.priorityLevel = result.priorityLevel;
    this.distinguisher = result.distinguisher;
    this.flowHash = result.flowHash;
    const m = result.match;
    this.matched = m !== null;
    this.rule = m?.rule ?? 0;
    this.subject = m?.subject ?? 0;
    this.ruleKind = m?.kind ?? "resourceRules";
    this.index = m?.index ?? 0;
  }

  /** Whether `user` and `ri` classify as these did. */
  matches(user: UserInfo, ri: RequestInfo): boolean {
    if (
      user.name !== this.name || ri.verb !== this.verb ||
      ri.isResourceRequest !== this.resource || ri.namespace !== this.namespace
    ) return false;
    if (
      ri.isResourceRequest
        ? ri.resource !== this.kind || ri.apiGroup !== this.apiGroup ||
          ri.subresource !== this.subresource
        : ri.path !== this.path
    ) return false;
    const groups = user.groups, kept = this.groups;
    if (groups.length !== kept.length) return false;
    for (let i = 0; i < groups.length; i++) if (groups[i] !== kept[i]) return false;
    return true;
  }

  /** The result, as new objects. */
  classification(): Classification {
    return {
      flowSchema: this.flowSchema,
      priorityLevel: this.priorityLevel,
      distinguisher: this.distinguisher,
      flowHash: this.flowHash,
      match: this.matched
        ? { rule: this.rule, subject: this.subject, kind: this.ruleKind, index: this.index }
        : null,
    };
  }
}
