/**
 * Loading a configuration: decode every manifest, validate every object,
 * refuse duplicates, and accept the whole only when nothing is wrong.
 *
 * @module
 */

import { ConfigurationError, formatFieldError } from "./field_errors.ts";
import {
  type DecodedManifest,
  type DecodedObject,
  decodeManifest,
  decodeValues,
  formatLocation,
} from "./manifest.ts";
import type { FlowControlConfiguration } from "./types.ts";
import { validateFlowSchema } from "./validate_flow_schema.ts";
import { validatePriorityLevel } from "./validate_priority_level.ts";

/** A manifest's text and the name to use for it in messages. */
export interface ManifestSource {
  /** File name or label, used in error messages. */
  name: string;
  /** YAML (one or more documents) or JSON. */
  text: string;
}

/** What to load: manifest texts, already-parsed objects, or both. */
export interface ConfigurationInput {
  /** Manifests, in order. */
  manifests?: readonly ManifestSource[];
  /** Objects in manifest shape (for example built in code), after the manifests. */
  objects?: readonly unknown[];
}

/** The outcome of {@linkcode parseConfiguration}. */
export type ParseResult =
  | { ok: true; configuration: FlowControlConfiguration }
  | { ok: false; errors: string[] };

/**
 * Decodes, defaults and validates a configuration. Every problem is reported;
 * a configuration with any problem is refused whole.
 *
 * @example
 * ```ts
 * import { parseConfiguration } from "@apf/edge";
 * const result = parseConfiguration({ manifests: [{ name: "apf.yaml", text: "" }] });
 * if (!result.ok) console.error(result.errors.join("\n"));
 * ```
 */
export function parseConfiguration(input: ConfigurationInput): ParseResult {
  const decoded: DecodedManifest[] = (input.manifests ?? []).map((m) =>
    decodeManifest(m.text, m.name)
  );
  if (input.objects !== undefined) decoded.push(decodeValues(input.objects));
  const errors = decoded.flatMap((d) => d.errors);
  const objects = decoded.flatMap((d) => d.objects);
  const partial = decoded.flatMap((d) => d.partial ?? []);
  // Appended in loops: spreading a long list into push() overflows the stack.
  for (const e of duplicateErrors(objects)) errors.push(e);
  const configuration: FlowControlConfiguration = { flowSchemas: [], priorityLevels: [] };
  for (const { object, version, repaired } of [...objects, ...partial]) {
    const found = object.kind === "FlowSchema"
      ? validateFlowSchema(object)
      : validatePriorityLevel(object, version);
    for (const e of found) {
      // A repaired field's problem was reported as it was written.
      if (repaired?.some((p) => within(e.path, p)) !== true) errors.push(formatFieldError(e));
    }
    if (repaired !== undefined) continue;
    if (object.kind === "FlowSchema") configuration.flowSchemas.push(object);
    else configuration.priorityLevels.push(object);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, configuration };
}

/**
 * Like {@linkcode parseConfiguration}, but throws a {@linkcode ConfigurationError}
 * listing every problem when the configuration is refused.
 */
export function loadConfiguration(input: ConfigurationInput): FlowControlConfiguration {
  const result = parseConfiguration(input);
  if (!result.ok) throw new ConfigurationError(result.errors);
  return result.configuration;
}

/** Whether field path `path` is `at` or inside it. */
function within(path: string, at: string): boolean {
  return path === at || path.startsWith(`${at}.`) || path.startsWith(`${at}[`);
}

function duplicateErrors(objects: readonly DecodedObject[]): string[] {
  const seen = new Map<string, DecodedObject>();
  const errors: string[] = [];
  for (const d of objects) {
    const key = `${d.object.kind}/${d.object.metadata.name}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, d);
    else {
      errors.push(
        `${formatLocation(d.location)}: duplicate ${key}: already defined at ${
          formatLocation(first.location)
        }`,
      );
    }
  }
  return errors;
}
