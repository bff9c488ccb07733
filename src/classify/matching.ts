/**
 * FlowSchema matching, as Kubernetes' `matchesFlowSchema` in
 * k8s.io/apiserver/pkg/util/flowcontrol/rule.go: subjects, resource rules and
 * non-resource rules, compiled once per configuration so that matching a
 * request does no allocation. The classifier's index (`_schema_index.ts`)
 * derives its keys from these compiled forms and must stay in step with the
 * predicates here.
 *
 * @module
 */

import type {
  FlowSchema,
  NonResourcePolicyRule,
  ResourcePolicyRule,
  Subject,
} from "../config/mod.ts";
import type { UserInfo } from "./identity.ts";
import type { RequestInfo } from "./request_info.ts";

/** Which part of a FlowSchema matched a request, for explanations. */
export interface RuleMatch {
  /** Index in `spec.rules`. */
  rule: number;
  /** Index of the first matching subject in the rule's `subjects`. */
  subject: number;
  /** Whether a resource or a non-resource rule matched. */
  kind: "resourceRules" | "nonResourceRules";
  /** Index of the first matching entry in that list. */
  index: number;
}

/**
 * Kubernetes' `containsString`: the wildcard counts only when it is the list's
 * sole member (validation guarantees it then stands alone).
 */
export interface StringSet {
  /** The list is exactly `["*"]`. */
  all: boolean;
  /** The listed values (a `*` among others is a literal). */
  values: ReadonlySet<string>;
}

function stringSet(list: readonly string[] | undefined): StringSet {
  const values = list ?? [];
  return { all: values.length === 1 && values[0] === "*", values: new Set(values) };
}

function contains(set: StringSet, value: string): boolean {
  return set.all || set.values.has(value);
}

/** A resource rule prepared for matching. */
export interface CompiledResourceRule {
  /** Verbs. */
  verbs: StringSet;
  /** API groups. */
  apiGroups: StringSet;
  /** Resources and `resource/subresource` forms. */
  resources: StringSet;
  /** Namespaces a namespaced request may be in. */
  namespaces: StringSet;
  /** Whether namespace-less requests match. */
  clusterScope: boolean;
}

/** A non-resource rule prepared for matching. */
export interface CompiledNonResourceRule {
  /** Verbs. */
  verbs: StringSet;
  /** `undefined` for `*`; otherwise the exact URL and the prefix (ending in `/`) it also matches. */
  urls: { exact: string; prefix: string }[] | undefined;
}

/** A subject with its service-account prefix precomputed. */
export interface CompiledSubject {
  /** The subject. */
  subject: Subject;
  /** `system:serviceaccount:<ns>:` for service-account subjects. */
  head: string;
  /**
   * What the subject names, read without the subject's own objects (whose
   * shapes differ by kind): {@linkcode USER}, {@linkcode GROUP},
   * {@linkcode SERVICE_ACCOUNT}, or {@linkcode NOBODY} for a subject that
   * names nobody (a kind without its member).
   */
  kind: number;
  /** The user, group or service-account name (`*` for any). */
  name: string;
}

const USER = 0, GROUP = 1, SERVICE_ACCOUNT = 2, NOBODY = 3;

/** One `PolicyRulesWithSubjects`, prepared for matching. */
export interface CompiledRules {
  /** Who the rules apply to. */
  subjects: CompiledSubject[];
  /** Rules for resource requests. */
  resourceRules: CompiledResourceRule[];
  /** Rules for non-resource requests. */
  nonResourceRules: CompiledNonResourceRule[];
}

/** A FlowSchema prepared for matching. */
export interface CompiledFlowSchema {
  /** The schema. */
  readonly flowSchema: FlowSchema;
  /** Its rules, compiled. */
  readonly rules: readonly CompiledRules[];
}

/** The user-name prefix of service accounts (k8s.io/apiserver/pkg/authentication/serviceaccount). */
export const SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

/** Whether `subject` names `user` (service accounts match on the user name only, as in Kubernetes). */
export function subjectMatches(subject: Subject, user: UserInfo): boolean {
  return compiledSubjectMatches(compileSubject(subject), user);
}

function compileSubject(subject: Subject): CompiledSubject {
  const ns = subject.serviceAccount?.namespace;
  const head = ns === undefined ? "" : `${SERVICE_ACCOUNT_PREFIX}${ns}:`;
  switch (subject.kind) {
    case "User":
      if (subject.user !== undefined) {
        return { subject, head, kind: USER, name: subject.user.name };
      }
      break;
    case "Group":
      if (subject.group !== undefined) {
        return { subject, head, kind: GROUP, name: subject.group.name };
      }
      break;
    case "ServiceAccount":
      if (subject.serviceAccount !== undefined) {
        return { subject, head, kind: SERVICE_ACCOUNT, name: subject.serviceAccount.name };
      }
      break;
  }
  return { subject, head, kind: NOBODY, name: "" };
}

function compiledSubjectMatches({ kind, name, head }: CompiledSubject, user: UserInfo): boolean {
  switch (kind) {
    case USER:
      return name === "*" || name === user.name;
    case GROUP:
      return name === "*" || user.groups.includes(name);
    case SERVICE_ACCOUNT: {
      const userName = user.name;
      if (!userName.startsWith(head)) return false;
      // Name `*` matches any remainder, even an empty one.
      return name === "*" ||
        (userName.length - head.length === name.length && userName.endsWith(name));
    }
    default:
      return false;
  }
}

function compileResourceRule(rule: ResourcePolicyRule): CompiledResourceRule {
  return {
    verbs: stringSet(rule.verbs),
    apiGroups: stringSet(rule.apiGroups),
    resources: stringSet(rule.resources),
    namespaces: stringSet(rule.namespaces),
    clusterScope: rule.clusterScope === true,
  };
}

function compileNonResourceRule(rule: NonResourcePolicyRule): CompiledNonResourceRule {
  const all = rule.nonResourceURLs.length === 1 && rule.nonResourceURLs[0] === "*";
  return {
    verbs: stringSet(rule.verbs),
    urls: all ? undefined : rule.nonResourceURLs.map((url) => {
      // `/x` matches `/x` and `/x/...`; `/x/*` matches `/x/...` but not `/x`.
      let prefix = url.endsWith("*") ? url.slice(0, -1) : url;
      if (!prefix.endsWith("/")) prefix += "/";
      return { exact: url, prefix };
    }),
  };
}

/** Prepares a FlowSchema for matching. */
export function compileFlowSchema(flowSchema: FlowSchema): CompiledFlowSchema {
  return {
    flowSchema,
    rules: (flowSchema.spec.rules ?? []).map((r) => ({
      subjects: r.subjects.map(compileSubject),
      resourceRules: (r.resourceRules ?? []).map(compileResourceRule),
      nonResourceRules: (r.nonResourceRules ?? []).map(compileNonResourceRule),
    })),
  };
}

function resourceRuleMatches(rule: CompiledResourceRule, ri: RequestInfo): boolean {
  if (!contains(rule.verbs, ri.verb)) return false;
  if (!contains(rule.apiGroups, ri.apiGroup)) return false;
  if (!rule.resources.all) {
    // A rule for `pods` does not match `pods/status`, and vice versa.
    const seek = ri.subresource === "" ? ri.resource : `${ri.resource}/${ri.subresource}`;
    if (!rule.resources.values.has(seek)) return false;
  }
  // A namespace-less request (cluster-scoped, or a cluster-wide list) needs clusterScope.
  return ri.namespace === "" ? rule.clusterScope : contains(rule.namespaces, ri.namespace);
}

function nonResourceRuleMatches(rule: CompiledNonResourceRule, ri: RequestInfo): boolean {
  if (!contains(rule.verbs, ri.verb)) return false;
  if (rule.urls === undefined) return true;
  const path = ri.path;
  for (const url of rule.urls) {
    if (url.exact === path || path.startsWith(url.prefix)) return true;
  }
  return false;
}

/** The first rule of `fs` that matches, or `undefined` when the schema does not match. */
export function matchFlowSchema(
  fs: CompiledFlowSchema,
  user: UserInfo,
  ri: RequestInfo,
): RuleMatch | undefined {
  for (let r = 0; r < fs.rules.length; r++) {
    const rules = fs.rules[r]!;
    let subject = -1;
    for (let i = 0; i < rules.subjects.length; i++) {
      if (compiledSubjectMatches(rules.subjects[i]!, user)) {
        subject = i;
        break;
      }
    }
    if (subject === -1) continue;
    if (ri.isResourceRequest) {
      for (let i = 0; i < rules.resourceRules.length; i++) {
        if (resourceRuleMatches(rules.resourceRules[i]!, ri)) {
          return { rule: r, subject, kind: "resourceRules", index: i };
        }
      }
    } else {
      for (let i = 0; i < rules.nonResourceRules.length; i++) {
        if (nonResourceRuleMatches(rules.nonResourceRules[i]!, ri)) {
          return { rule: r, subject, kind: "nonResourceRules", index: i };
        }
      }
    }
  }
  return undefined;
}
