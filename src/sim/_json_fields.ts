/**
 * Reading scenario JSON field by field: each check states its bound and
 * quotes the value it got, with the JSON path of the field. Shared by the
 * uniform and the whole-configuration scenarios.
 *
 * @module
 */

/** A scenario that cannot be used; the message starts with the field's JSON path. */
export class ScenarioError extends Error {
  /** JSON path of the offending field (`clients[1].threads`); empty for the whole document. */
  readonly path: string;

  /** Creates the error for `problem` at `path` (`""` for the whole document). */
  constructor(path: string, problem: string) {
    super(path === "" ? problem : `${path}: ${problem}`);
    this.name = "ScenarioError";
    this.path = path;
  }
}

export type Check<T> = (value: unknown, path: string) => T;

/** Reads `obj[key]` with `check`, or `check(fallback)` when the key is omitted. */
export function field<T>(
  obj: Record<string, unknown>,
  path: string,
  key: string,
  fallback: unknown,
  check: Check<T>,
): T {
  const value = Object.hasOwn(obj, key) ? obj[key] : undefined;
  return check(value === undefined ? fallback : value, join(path, key));
}

/** Checks that `value` is a JSON object with no keys outside `keys`. */
export function object(
  value: unknown,
  path: string,
  keys: readonly string[],
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const subject = path === "" ? "the scenario must" : "must";
    throw new ScenarioError(path, `${subject} be a JSON object, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) {
      throw new ScenarioError(
        join(path, key),
        `unknown field (expected one of ${keys.join(", ")})`,
      );
    }
  }
  return value as Record<string, unknown>;
}

export function integer(min: number, max: number = Number.MAX_SAFE_INTEGER): Check<number> {
  return (value, path) => {
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
      throw new ScenarioError(path, `must be an integer >= ${min}, got ${describe(value)}`);
    }
    if (value > max) throw new ScenarioError(path, `must be at most ${max}, got ${value}`);
    return value;
  };
}

export function finite(min?: number): Check<number> {
  return (value, path) => {
    if (
      typeof value !== "number" || !Number.isFinite(value) || (min !== undefined && value < min)
    ) {
      const bound = min === undefined ? "" : ` >= ${min}`;
      throw new ScenarioError(path, `must be a finite number${bound}, got ${describe(value)}`);
    }
    return value;
  };
}

export function positive(value: unknown, path: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  throw new ScenarioError(path, `must be a finite number > 0, got ${describe(value)}`);
}

export function text(nonEmpty: boolean): Check<string> {
  return (value, path) => {
    if (typeof value === "string" && (value !== "" || !nonEmpty)) return value;
    throw new ScenarioError(
      path,
      `must be a ${nonEmpty ? "non-empty " : ""}string, got ${describe(value)}`,
    );
  };
}

export function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** Names a received value for a message: JSON for scalars, the kind for the rest. */
export function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  if (typeof value === "number") return String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value === undefined) return "undefined";
  return JSON.stringify(value) ?? typeof value;
}

/** Checks that `value` is a non-empty array of at most `max` clients and reads each with `item`. */
export function clientList<T>(
  value: unknown,
  path: string,
  max: number,
  item: (value: unknown, path: string) => T,
): T[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ScenarioError(path, `must be a non-empty array of clients, got ${describe(value)}`);
  }
  if (value.length > max) {
    throw new ScenarioError(path, `must have at most ${max} clients, got ${value.length}`);
  }
  return value.map((c, i) => item(c, `${path}[${i}]`));
}
