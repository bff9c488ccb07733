/**
 * What a new configuration changes, object by object: for the log line of
 * a reload, so that an operator can tell a deliberate change from a file
 * that was cut short.
 *
 * @module
 */

import { semanticallyEqual } from "./_semantic_equal.ts";
import type { FlowControlConfiguration } from "./types.ts";

/** The names of the objects of one kind a new configuration adds, removes or changes. */
export interface KindDiff {
  /** Names new in the next configuration. */
  added: string[];
  /** Names gone from it. */
  removed: string[];
  /** Names in both whose spec differs. */
  changed: string[];
}

/** What goes from one configuration to the next, per kind. */
export interface ConfigurationDiff {
  /** FlowSchemas, by name. */
  flowSchemas: KindDiff;
  /** PriorityLevelConfigurations, by name. */
  priorityLevels: KindDiff;
}

/**
 * Compares two sets of user objects by name and spec (Kubernetes' semantic
 * equality: an absent list equals an empty one).
 */
export function diffConfigurations(
  before: FlowControlConfiguration,
  after: FlowControlConfiguration,
): ConfigurationDiff {
  return {
    flowSchemas: diffKind(before.flowSchemas, after.flowSchemas),
    priorityLevels: diffKind(before.priorityLevels, after.priorityLevels),
  };
}

function diffKind(
  before: readonly { metadata: { name: string }; spec: unknown }[],
  after: readonly { metadata: { name: string }; spec: unknown }[],
): KindDiff {
  const old = new Map(before.map((o) => [o.metadata.name, o.spec]));
  const diff: KindDiff = { added: [], removed: [], changed: [] };
  const seen = new Set<string>();
  for (const o of after) {
    const name = o.metadata.name;
    seen.add(name);
    if (!old.has(name)) diff.added.push(name);
    else if (!semanticallyEqual(old.get(name), o.spec)) diff.changed.push(name);
  }
  for (const name of old.keys()) if (!seen.has(name)) diff.removed.push(name);
  return diff;
}

/**
 * One line for a log: `FlowSchemas +a ~b -c; PriorityLevelConfigurations +d`
 * (added, changed, removed), or `no change`.
 */
export function formatConfigurationDiff(diff: ConfigurationDiff): string {
  const parts: string[] = [];
  for (
    const [kind, d] of [
      ["FlowSchemas", diff.flowSchemas],
      ["PriorityLevelConfigurations", diff.priorityLevels],
    ] as const
  ) {
    const names = [
      ...d.added.map((n) => `+${n}`),
      ...d.changed.map((n) => `~${n}`),
      ...d.removed.map((n) => `-${n}`),
    ];
    if (names.length > 0) parts.push(`${kind} ${names.join(" ")}`);
  }
  return parts.length === 0 ? "no change" : parts.join("; ");
}
