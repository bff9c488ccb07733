/**
 * Merging a user configuration with the built-in objects, the way a
 * kube-apiserver's bootstrap "config producer" maintains them
 * (kubernetes/kubernetes `pkg/registry/flowcontrol/ensurer/`;
 * `docs/semantics.md` §1.5):
 *
 * - mandatory objects are always present with their fixed spec (the exempt
 *   level's `spec.exempt` is the admin's to tune);
 * - a suggested object is present unless a same-named user object replaces it;
 *   the user's spec stands unless `apf.kubernetes.io/autoupdate-spec` parses as
 *   true, or the annotation is absent or unparseable and `metadata.generation`
 *   is 1 (an object nobody has edited). A hand-written manifest without
 *   `generation` counts as edited, so its spec stands;
 * - a user object that carries `autoupdate-spec: "true"` but is no longer a
 *   built-in object (for example `endpoint-controller` from a 1.33 cluster dump)
 *   is removed, as the producer deletes it.
 *
 * @module
 */

import {
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from "./bootstrap.ts";
import { AUTO_UPDATE_ANNOTATION, EXEMPT } from "./constants.ts";
import { defaultFlowSchema, defaultPriorityLevel } from "./defaults.ts";
import type {
  FlowControlConfiguration,
  FlowControlObject,
  FlowSchema,
  PriorityLevelConfiguration,
} from "./types.ts";

/** Options of {@linkcode mergeWithBootstrap}. */
export interface MergeOptions {
  /** Start from the mandatory objects alone: no suggested object is added or re-applied. */
  mandatoryOnly?: boolean;
}

/** The merged configuration and what the merge did that a user may not expect. */
export interface MergeResult {
  /** The effective set of objects, defaulted. */
  configuration: FlowControlConfiguration;
  /** One line per user object whose spec was replaced or that was removed. */
  notes: string[];
}

/** Go's `strconv.ParseBool`; `undefined` when the text is not a boolean. */
function parseBool(text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false;
  return undefined;
}

/** Whether the bootstrap maintainer would overwrite this object's spec. */
export function autoUpdates(object: FlowControlObject): boolean {
  const value = parseBool(object.metadata.annotations?.[AUTO_UPDATE_ANNOTATION]);
  return value ?? object.metadata.generation === 1;
}

function mergeKind<T extends FlowSchema | PriorityLevelConfiguration>(
  user: readonly T[],
  mandatory: readonly T[],
  suggested: readonly T[],
  fixMandatory: (user: T, fixed: T) => T,
  notes: string[],
): T[] {
  const byName = new Map(user.map((o) => [o.metadata.name, o]));
  const builtinNames = new Set([...mandatory, ...suggested].map((o) => o.metadata.name));
  const out: T[] = [];
  for (const fixed of mandatory) {
    const given = byName.get(fixed.metadata.name);
    out.push(given === undefined ? fixed : fixMandatory(given, fixed));
  }
  for (const builtin of suggested) {
    const given = byName.get(builtin.metadata.name);
    if (given === undefined) out.push(builtin);
    else if (autoUpdates(given)) {
      notes.push(
        `${given.kind}/${given.metadata.name}: spec replaced by the suggested spec (auto-update)`,
      );
      out.push({ ...given, spec: builtin.spec });
    } else out.push(given);
  }
  for (const given of user) {
    const name = given.metadata.name;
    if (builtinNames.has(name)) continue;
    if (suggested.length > 0 && parseBool(given.metadata.annotations?.[AUTO_UPDATE_ANNOTATION])) {
      notes.push(`${given.kind}/${name}: removed: auto-updated object that is no longer suggested`);
      continue;
    }
    out.push(given);
  }
  return out;
}

/**
 * Merges validated user objects with the built-in configuration. The input is
 * not changed.
 *
 * @example
 * ```ts
 * import { mergeWithBootstrap } from "./mod.ts";
 * const { configuration } = mergeWithBootstrap({ flowSchemas: [], priorityLevels: [] });
 * configuration.priorityLevels.length; // 8
 * ```
 */
export function mergeWithBootstrap(
  user: FlowControlConfiguration,
  options: MergeOptions = {},
): MergeResult {
  const notes: string[] = [];
  const suggest = options.mandatoryOnly !== true;
  const priorityLevels = mergeKind(
    user.priorityLevels,
    mandatoryPriorityLevels().map(defaultPriorityLevel),
    suggest ? suggestedPriorityLevels().map(defaultPriorityLevel) : [],
    (given, fixed) => {
      const spec = { ...fixed.spec };
      // The exempt level's shares and lendable percent are the admin's to set.
      if (given.metadata.name === EXEMPT && given.spec.exempt !== undefined) {
        spec.exempt = given.spec.exempt;
      }
      return { ...given, spec };
    },
    notes,
  );
  const flowSchemas = mergeKind(
    user.flowSchemas,
    mandatoryFlowSchemas().map(defaultFlowSchema),
    suggest ? suggestedFlowSchemas().map(defaultFlowSchema) : [],
    (given, fixed) => ({ ...given, spec: fixed.spec }),
    notes,
  );
  return { configuration: { flowSchemas, priorityLevels }, notes };
}
