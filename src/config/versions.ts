/**
 * Conversion of the older flowcontrol versions to v1. `v1beta3` differs from v1
 * in how a zero `nominalConcurrencyShares` is read; `v1beta1` and `v1beta2`
 * call the field `assuredConcurrencyShares`, and their defaulting turns zero
 * into 30 (so zero never reaches validation).
 *
 * @module
 */

import { FLOWCONTROL_GROUP, PRESERVE_ZERO_SHARES_ANNOTATION } from "./constants.ts";
import { DEFAULT_NOMINAL_CONCURRENCY_SHARES } from "./defaults.ts";
import type { PriorityLevelDocument } from "./_schema.ts";
import { FLOWCONTROL_V1, type PriorityLevelConfiguration } from "./types.ts";

/** The flowcontrol API versions this package reads. */
export type FlowControlVersion = "v1" | "v1beta3" | "v1beta2" | "v1beta1";

const VERSIONS: readonly FlowControlVersion[] = ["v1", "v1beta3", "v1beta2", "v1beta1"];

/** The flowcontrol version of `apiVersion`, or `undefined` when it is not one we read. */
export function flowControlVersion(apiVersion: unknown): FlowControlVersion | undefined {
  if (typeof apiVersion !== "string") return undefined;
  const [group, version] = apiVersion.split("/");
  if (group !== FLOWCONTROL_GROUP) return undefined;
  return VERSIONS.find((v) => v === version);
}

/** The name of the shares field in `version`, for error paths. */
export function sharesFieldName(version: FlowControlVersion): string {
  return version === "v1beta1" || version === "v1beta2"
    ? "assuredConcurrencyShares"
    : "nominalConcurrencyShares";
}

/**
 * Converts a PriorityLevelConfiguration document of any accepted version to v1,
 * applying the version's own defaulting of the shares field first.
 */
export function priorityLevelToV1(
  doc: PriorityLevelDocument,
  version: FlowControlVersion,
): PriorityLevelConfiguration {
  const metadata = { ...doc.metadata };
  const spec = { ...doc.spec };
  const limited = spec.limited;
  if (version !== "v1" && limited !== undefined) {
    const shares = limited.nominalConcurrencyShares ?? 0;
    // v1beta3 reads 0 as "unset" unless the round-trip annotation says it was
    // an explicit 0; v1beta1/v1beta2 always default 0 to 30.
    const keepZero = version === "v1beta3" &&
      metadata.annotations?.[PRESERVE_ZERO_SHARES_ANNOTATION] !== undefined;
    spec.limited = {
      ...limited,
      nominalConcurrencyShares: shares === 0 && !keepZero
        ? DEFAULT_NOMINAL_CONCURRENCY_SHARES
        : shares,
    };
  }
  if (version === "v1beta3" && metadata.annotations !== undefined) {
    // The round-trip annotation exists only on the v1beta3 wire form.
    const { [PRESERVE_ZERO_SHARES_ANNOTATION]: _dropped, ...rest } = metadata.annotations;
    if (Object.keys(rest).length === 0) delete metadata.annotations;
    else metadata.annotations = rest;
  }
  return { apiVersion: FLOWCONTROL_V1, kind: "PriorityLevelConfiguration", metadata, spec };
}
