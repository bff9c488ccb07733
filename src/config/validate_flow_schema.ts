/**
 * FlowSchema validation: every rule of
 * `pkg/apis/flowcontrol/validation/validation.go` (kubernetes/kubernetes) for
 * FlowSchemas, with the kube-apiserver's field paths and messages. Runs on defaulted objects.
 *
 * @module
 */

import { mandatoryFlowSchemas } from "./bootstrap.ts";
import { EXEMPT, MAX_MATCHING_PRECEDENCE, SUPPORTED_VERBS } from "./constants.ts";
import {
  type FieldError,
  FieldErrorList,
  forbidden,
  invalid,
  notSupported,
  required,
} from "./field_errors.ts";
import { dns1123LabelErrors, dns1123SubdomainErrors } from "./names.ts";
import { validateObjectMeta } from "./object_meta.ts";
import { semanticallyEqual } from "./_semantic_equal.ts";
import type {
  FlowSchema,
  NonResourcePolicyRule,
  PolicyRulesWithSubjects,
  ResourcePolicyRule,
  Subject,
} from "./types.ts";

const NAMESPACE_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

/** Every problem with a defaulted FlowSchema; empty when it is valid. */
export function validateFlowSchema(fs: FlowSchema): FieldError[] {
  const errs = new FieldErrorList("FlowSchema", fs.metadata.name);
  validateObjectMeta(errs, fs.metadata);
  const spec = fs.spec;
  const precedence = spec.matchingPrecedence ?? 0;
  const p = "spec.matchingPrecedence";
  if (precedence <= 0) errs.add(p, invalid(precedence, "must be a positive value"));
  if (precedence > MAX_MATCHING_PRECEDENCE) {
    errs.add(p, invalid(precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  }
  if (precedence === 1 && fs.metadata.name !== EXEMPT) {
    errs.add(
      p,
      invalid(precedence, "only the schema named 'exempt' may have matchingPrecedence 1"),
    );
  }
  const level = spec.priorityLevelConfiguration.name;
  if (level === "") {
    errs.add("spec.priorityLevelConfiguration.name", required("must reference a priority level"));
  } else {
    for (const msg of dns1123SubdomainErrors(level)) {
      errs.add("spec.priorityLevelConfiguration.name", invalid(level, msg));
    }
  }
  (spec.rules ?? []).forEach((rule, i) => validateRules(errs, rule, `spec.rules[${i}]`));
  validateIfMandatory(errs, fs);
  return errs.errors;
}

function validateRules(errs: FieldErrorList, rule: PolicyRulesWithSubjects, path: string): void {
  if (rule.subjects.length === 0) {
    errs.add(`${path}.subjects`, required("subjects must contain at least one value"));
  }
  rule.subjects.forEach((s, i) => validateSubject(errs, s, `${path}.subjects[${i}]`));
  const resourceRules = rule.resourceRules ?? [];
  const nonResourceRules = rule.nonResourceRules ?? [];
  if (resourceRules.length === 0 && nonResourceRules.length === 0) {
    errs.add(
      path,
      required("at least one of resourceRules and nonResourceRules has to be non-empty"),
    );
  }
  resourceRules.forEach((r, i) => validateResourceRule(errs, r, `${path}.resourceRules[${i}]`));
  nonResourceRules.forEach((r, i) =>
    validateNonResourceRule(errs, r, `${path}.nonResourceRules[${i}]`)
  );
}

// In the order Kubernetes reports the members a kind forbids (`ValidateFlowSchemaSubject`).
const MEMBERS = [
  ["ServiceAccount", "serviceAccount"],
  ["User", "user"],
  ["Group", "group"],
] as const;

/** The subject's own member first, then the members its kind forbids, as Kubernetes reports them. */
function validateSubject(errs: FieldErrorList, subject: Subject, path: string): void {
  validateOwnMember(errs, subject, path);
  for (const [kind, member] of MEMBERS) {
    if (kind === subject.kind) continue;
    if (subject[member] !== undefined) {
      errs.add(
        `${path}.${member}`,
        forbidden(`${member} is forbidden when subject kind is not '${kind}'`),
      );
    }
  }
}

function validateOwnMember(errs: FieldErrorList, subject: Subject, path: string): void {
  if (subject.kind === "ServiceAccount") {
    const sa = subject.serviceAccount;
    const sap = `${path}.serviceAccount`;
    if (sa === undefined) {
      errs.add(sap, required("serviceAccount is required when subject kind is 'ServiceAccount'"));
      return;
    }
    if (sa.name === "") errs.add(`${sap}.name`, required());
    else if (sa.name !== "*") {
      for (const msg of dns1123SubdomainErrors(sa.name)) {
        errs.add(`${sap}.name`, invalid(sa.name, msg));
      }
    }
    if (sa.namespace === "") {
      errs.add(`${sap}.namespace`, required("must specify namespace for service account"));
    } else {
      for (const msg of dns1123LabelErrors(sa.namespace)) {
        errs.add(`${sap}.namespace`, invalid(sa.namespace, msg));
      }
    }
    return;
  }
  const member = subject.kind === "User" ? "user" : "group";
  const named = subject[member];
  if (named === undefined) {
    errs.add(
      `${path}.${member}`,
      required(`${member} is required when subject kind is '${subject.kind}'`),
    );
  } else if (named.name === "") {
    errs.add(`${path}.${member}.name`, required());
  }
}

/** Verbs: non-empty, `*` alone, otherwise only supported verbs. */
function validateVerbs(errs: FieldErrorList, verbs: string[], path: string): void {
  if (verbs.length === 0) {
    errs.add(path, required("verbs must contain at least one value"));
  } else if (verbs.includes("*")) {
    if (verbs.length > 1) {
      errs.add(path, invalid(verbs, "if '*' is present, must not specify other verbs"));
    }
  } else if (!verbs.every((v) => SUPPORTED_VERBS.includes(v))) {
    errs.add(path, notSupported(verbs, SUPPORTED_VERBS));
  }
}

function validateResourceRule(errs: FieldErrorList, rule: ResourcePolicyRule, path: string): void {
  validateVerbs(errs, rule.verbs, `${path}.verbs`);
  if (rule.apiGroups.length === 0) {
    errs.add(`${path}.apiGroups`, required("resource rules must supply at least one api group"));
  } else if (rule.apiGroups.length > 1 && rule.apiGroups.includes("*")) {
    errs.add(
      `${path}.apiGroups`,
      invalid(rule.apiGroups, "if '*' is present, must not specify other api groups"),
    );
  }
  if (rule.resources.length === 0) {
    errs.add(`${path}.resources`, required("resource rules must supply at least one resource"));
  } else if (rule.resources.length > 1 && rule.resources.includes("*")) {
    errs.add(
      `${path}.resources`,
      invalid(rule.resources, "if '*' is present, must not specify other resources"),
    );
  }
  const namespaces = rule.namespaces ?? [];
  if (namespaces.length === 0 && rule.clusterScope !== true) {
    errs.add(
      `${path}.namespaces`,
      required("resource rules that are not cluster scoped must supply at least one namespace"),
    );
  } else if (namespaces.includes("*")) {
    if (namespaces.length > 1) {
      errs.add(
        `${path}.namespaces`,
        invalid(namespaces, "if '*' is present, must not specify other namespaces"),
      );
    }
  } else {
    namespaces.forEach((ns, i) => {
      for (const msg of dns1123LabelErrors(ns)) {
        errs.add(`${path}.namespaces[${i}]`, invalid(ns, NAMESPACE_INTRO + msg));
      }
    });
  }
}

function validateNonResourceRule(
  errs: FieldErrorList,
  rule: NonResourcePolicyRule,
  path: string,
): void {
  validateVerbs(errs, rule.verbs, `${path}.verbs`);
  const urls = rule.nonResourceURLs;
  if (urls.length === 0) {
    errs.add(
      `${path}.nonResourceURLs`,
      required("nonResourceURLs must contain at least one value"),
    );
  } else if (urls.includes("*")) {
    if (urls.length > 1) {
      errs.add(
        `${path}.nonResourceURLs`,
        invalid(urls, "if '*' is present, must not specify other non-resource URLs"),
      );
    }
  } else {
    urls.forEach((url, i) => {
      const problem = nonResourceURLProblem(url);
      if (problem !== undefined) errs.add(`${path}.nonResourceURLs[${i}]`, invalid(url, problem));
    });
  }
}

/** Why `url` is not a valid non-resource URL pattern, or `undefined` when it is. */
export function nonResourceURLProblem(url: string): string | undefined {
  if (url === "") return "must not be empty";
  if (url === "/") return undefined;
  if (!url.startsWith("/")) return "must start with slash";
  if (url.includes(" ")) return "must not contain white-space";
  if (url.includes("//")) return "must not contain double slash";
  const wildcards = url.split("*").length - 1;
  if (wildcards > 1 || (wildcards === 1 && !url.endsWith("/*"))) {
    return "wildcard can only do suffix matching";
  }
  return undefined;
}

function validateIfMandatory(errs: FieldErrorList, fs: FlowSchema): void {
  const fixed = mandatoryFlowSchemas().find((m) => m.metadata.name === fs.metadata.name);
  if (fixed !== undefined && !semanticallyEqual(fs.spec, fixed.spec)) {
    errs.add(
      "spec",
      invalid(fs.spec, `spec of '${fs.metadata.name}' must equal the fixed value`),
    );
  }
}
