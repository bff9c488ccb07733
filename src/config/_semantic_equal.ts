/**
 * Equality of defaulted specs as Kubernetes' `Semantic.DeepEqual` sees them:
 * an absent list equals an empty one and an absent non-pointer boolean equals
 * `false`. Absent numbers are not zero: `borrowingLimitPercent: 0` differs from
 * an unset one. List order matters.
 *
 * @module
 */

function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || v === false || (Array.isArray(v) && v.length === 0)) continue;
    out[key] = normalize(v);
  }
  return out;
}

/** Whether two defaulted specs are semantically equal. */
export function semanticallyEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalize(a)) === JSON.stringify(normalize(b));
}
