/**
 * An index of FlowSchemas by what a request must have for them to match, so
 * that classifying a request examines the few schemas that could match
 * instead of all of them. Kubernetes walks every FlowSchema in matching order
 * (`startRequest` in k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go);
 * with hundreds of per-tenant schemas that walk dominated classification.
 *
 * A schema can match a request only if one of its rules of the request's
 * kind (resource or non-resource) names the user (by name, group or
 * service-account namespace, or `*`) and accepts the request's namespace,
 * resource, verb or path. For each such attribute, the index lists the
 * positions (in matching order) of the schemas whose rules accept each value
 * and of those that accept any value. A request looks up its values
 * attribute by attribute and keeps the smallest union of lists; every list is
 * a superset of the schemas that can match, so the smallest is too. The
 * classifier then runs the exact matcher (`matchFlowSchema`) on those
 * candidates in matching order: the first that matches is the one the full
 * walk would have found, with the same rule, subject and index.
 *
 * The keys here mirror the predicates of `matching.ts`; a property test
 * (tests/classify/classifier_index_test.ts) checks the two agree.
 *
 * @module
 */

import { Candidates } from "./_candidates.ts";
import { KeySet, type Positions, PositionsBuilder } from "./_positions.ts";
import type { UserInfo } from "./identity.ts";
import { type CompiledFlowSchema, type CompiledRules, SERVICE_ACCOUNT_PREFIX } from "./matching.ts";
import type { RequestInfo } from "./request_info.ts";

/** With this few candidates, another look-up would cost more than it could save. */
const ENOUGH = 4;

/** Schemas by subject: `byKey` holds user names (and full names of named service accounts). */
interface SubjectPositions extends Positions {
  /** Groups. */
  readonly groups: ReadonlyMap<string, Int32Array>;
  /** `system:serviceaccount:<ns>:` of `*` service accounts. */
  readonly heads: ReadonlyMap<string, Int32Array>;
}

interface ResourcePositions {
  readonly subjects: SubjectPositions;
  readonly namespaces: Positions;
  /** Schemas with a `clusterScope` rule: the only ones a namespace-less request can match. */
  readonly clusterScope: Int32Array | undefined;
  readonly resources: Positions;
  readonly verbs: Positions;
}

interface NonResourcePositions {
  readonly subjects: SubjectPositions;
  /** Exact URLs; `any` holds the schemas with a `*` URL. */
  readonly paths: Positions;
  /** URL prefixes, each ending in `/`. */
  readonly prefixes: ReadonlyMap<string, Int32Array>;
  /** The longest prefix: a path's slashes beyond it need no look-up. */
  readonly longestPrefix: number;
  readonly verbs: Positions;
}

/** The subjects of one schema's rules of one kind, as keys. */
class SubjectKeys {
  readonly users = new KeySet();
  readonly groups = new KeySet();
  readonly heads = new KeySet();

  /** Adds a rule's subjects, as `compiledSubjectMatches` in matching.ts decides them. */
  add(rules: CompiledRules): void {
    for (const { subject, head } of rules.subjects) {
      if (subject.kind === "User" && subject.user !== undefined) {
        if (subject.user.name === "*") this.users.any = true;
        else this.users.keys.add(subject.user.name);
      } else if (subject.kind === "Group" && subject.group !== undefined) {
        if (subject.group.name === "*") this.users.any = true;
        else this.groups.keys.add(subject.group.name);
      } else if (subject.kind === "ServiceAccount" && subject.serviceAccount !== undefined) {
        const name = subject.serviceAccount.name;
        // A named account matches exactly the user name `head + name`.
        if (name !== "*") this.users.keys.add(head + name);
        else if (head.startsWith(SERVICE_ACCOUNT_PREFIX)) this.heads.keys.add(head);
        else this.users.any = true; // no namespace: every name starts with the empty head
      }
    }
  }
}

class SubjectBuilder {
  readonly #users = new PositionsBuilder();
  readonly #groups = new PositionsBuilder();
  readonly #heads = new PositionsBuilder();

  add(position: number, keys: SubjectKeys): void {
    if (keys.users.any) {
      this.#users.addAny(position);
      return;
    }
    this.#users.add(position, keys.users);
    this.#groups.add(position, keys.groups);
    this.#heads.add(position, keys.heads);
  }

  build(): SubjectPositions {
    const users = this.#users.build();
    return {
      any: users.any,
      byKey: users.byKey,
      groups: this.#groups.build().byKey,
      heads: this.#heads.build().byKey,
    };
  }
}

function resourcePositions(schemas: readonly CompiledFlowSchema[]): ResourcePositions {
  const subjects = new SubjectBuilder(), clusterScope: number[] = [];
  const namespaces = new PositionsBuilder(), resources = new PositionsBuilder();
  const verbs = new PositionsBuilder();
  schemas.forEach((schema, position) => {
    const who = new SubjectKeys(), ns = new KeySet(), res = new KeySet(), verb = new KeySet();
    let cluster = false;
    for (const rules of schema.rules) {
      if (rules.resourceRules.length === 0) continue;
      who.add(rules);
      for (const rule of rules.resourceRules) {
        ns.addStrings(rule.namespaces);
        cluster ||= rule.clusterScope;
        res.addStrings(rule.resources);
        verb.addStrings(rule.verbs);
      }
    }
    subjects.add(position, who);
    namespaces.add(position, ns);
    if (cluster) clusterScope.push(position);
    resources.add(position, res);
    verbs.add(position, verb);
  });
  return {
    subjects: subjects.build(),
    namespaces: namespaces.build(),
    clusterScope: clusterScope.length === 0 ? undefined : Int32Array.from(clusterScope),
    resources: resources.build(),
    verbs: verbs.build(),
  };
}

function nonResourcePositions(schemas: readonly CompiledFlowSchema[]): NonResourcePositions {
  const subjects = new SubjectBuilder(), paths = new PositionsBuilder();
  const prefixes = new PositionsBuilder(), verbs = new PositionsBuilder();
  let longestPrefix = 0;
  schemas.forEach((schema, position) => {
    const who = new SubjectKeys(), exact = new KeySet(), prefix = new KeySet(), verb = new KeySet();
    for (const rules of schema.rules) {
      if (rules.nonResourceRules.length === 0) continue;
      who.add(rules);
      for (const rule of rules.nonResourceRules) {
        verb.addStrings(rule.verbs);
        if (rule.urls === undefined) exact.any = true;
        else {
          for (const url of rule.urls) {
            exact.keys.add(url.exact);
            // Compiled prefixes end in `/`; anything else is looked up by no path, so take it as `*`.
            if (url.prefix.endsWith("/")) prefix.keys.add(url.prefix);
            else exact.any = true;
          }
        }
      }
    }
    subjects.add(position, who);
    paths.add(position, exact);
    if (!exact.any) prefixes.add(position, prefix);
    for (const p of prefix.keys) longestPrefix = Math.max(longestPrefix, p.length);
    verbs.add(position, verb);
  });
  return {
    subjects: subjects.build(),
    paths: paths.build(),
    prefixes: prefixes.build().byKey,
    longestPrefix,
    verbs: verbs.build(),
  };
}

function addSubjects(index: SubjectPositions, user: UserInfo, out: Candidates): void {
  const name = user.name;
  out.add(index.any);
  out.add(index.byKey.get(name));
  const groups = user.groups;
  for (let i = 0; i < groups.length; i++) out.add(index.groups.get(groups[i]!));
  if (index.heads.size > 0 && name.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    // Every `…:` prefix of the name could be a head (namespaces hold no `:`, but need not).
    for (let i = name.indexOf(":", SERVICE_ACCOUNT_PREFIX.length); i !== -1;) {
      out.add(index.heads.get(name.slice(0, i + 1)));
      i = name.indexOf(":", i + 1);
    }
  }
}

function addValue(index: Positions, value: string, out: Candidates): void {
  out.add(index.any);
  out.add(index.byKey.get(value));
}

function addPath(index: NonResourcePositions, path: string, out: Candidates): void {
  addValue(index.paths, path, out);
  if (index.prefixes.size === 0) return;
  for (let i = path.indexOf("/"); i !== -1 && i < index.longestPrefix;) {
    out.add(index.prefixes.get(path.slice(0, i + 1)));
    i = path.indexOf("/", i + 1);
  }
}

/** The FlowSchemas of one configuration, indexed; one per classifier. */
export class SchemaIndex {
  readonly #resource: ResourcePositions;
  readonly #nonResource: NonResourcePositions;
  // Two scratch lists: the best attribute so far and the one being tried.
  readonly #first: Candidates;
  readonly #second: Candidates;

  /** Indexes `schemas`, given in matching order. */
  constructor(schemas: readonly CompiledFlowSchema[]) {
    this.#resource = resourcePositions(schemas);
    this.#nonResource = nonResourcePositions(schemas);
    this.#first = new Candidates(schemas.length);
    this.#second = new Candidates(schemas.length);
  }

  /**
   * The positions of the schemas that could match, started for a walk in
   * matching order. Valid until the next call (the lists are scratch).
   */
  candidates(user: UserInfo, ri: RequestInfo): Candidates {
    let best = this.#first, trial = this.#second;
    best.reset();
    if (ri.isResourceRequest) {
      const index = this.#resource;
      addSubjects(index.subjects, user, best);
      for (let attribute = 0; attribute < 3 && best.total > ENOUGH; attribute++) {
        trial.reset();
        if (attribute === 0) {
          if (ri.namespace === "") trial.add(index.clusterScope);
          else addValue(index.namespaces, ri.namespace, trial);
        } else if (attribute === 1) {
          const seek = ri.subresource === "" ? ri.resource : `${ri.resource}/${ri.subresource}`;
          addValue(index.resources, seek, trial);
        } else addValue(index.verbs, ri.verb, trial);
        if (trial.total < best.total) {
          const better = trial;
          trial = best;
          best = better;
        }
      }
    } else {
      const index = this.#nonResource;
      addSubjects(index.subjects, user, best);
      for (let attribute = 0; attribute < 2 && best.total > ENOUGH; attribute++) {
        trial.reset();
        if (attribute === 0) addPath(index, ri.path, trial);
        else addValue(index.verbs, ri.verb, trial);
        if (trial.total < best.total) {
          const better = trial;
          trial = best;
          best = better;
        }
      }
    }
    best.start();
    return best;
  }
}
