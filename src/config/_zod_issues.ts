/**
 * Turns zod issues into Kubernetes-style field errors.
 *
 * @module
 */

import type { z } from "zod";
import { type FieldErrorList, invalid, notSupported, required } from "./field_errors.ts";

/** Renders a zod path as a Kubernetes field path: `spec.rules[0].subjects`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/**
 * Adds one field error per problem of `issue`. The issue must come from a
 * parse with `reportInput: true` so that values can be quoted.
 */
export function addZodIssue(errs: FieldErrorList, issue: z.core.$ZodIssue): void {
  const path = fieldPath(issue.path);
  switch (issue.code) {
    case "unrecognized_keys":
      for (const key of issue.keys) {
        errs.add(fieldPath([...issue.path, key]), `unknown field ${JSON.stringify(key)}`);
      }
      return;
    case "invalid_type":
      errs.add(
        path,
        issue.input === undefined
          ? required()
          : invalid(issue.input, `must be ${article(issue.expected)}`),
      );
      return;
    case "invalid_value":
      errs.add(path, notSupported(issue.input ?? "", issue.values.map(String)));
      return;
    case "too_big":
    case "too_small":
      errs.add(path, invalid(issue.input, "must be a 32-bit integer"));
      return;
    default:
      errs.add(path, issue.message);
  }
}

function article(type: string): string {
  if (type === "int") return "an integer";
  if (type === "object" || type === "array") return `an ${type}`;
  return `a ${type}`;
}
