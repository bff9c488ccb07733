/**
 * Validation errors in the Kubernetes `field.Error` style, each rendered as
 * `<Kind>/<name>: <field.path>: <reason>`.
 *
 * @module
 */

/** One problem with one field of one object. */
export interface FieldError {
  /** `FlowSchema` or `PriorityLevelConfiguration`. */
  kind: string;
  /** The object's name (`(unnamed)` when it has none). */
  name: string;
  /** Dotted field path, with `[i]` for list indices, for example `spec.rules[0].subjects`. */
  path: string;
  /** What is wrong, in Kubernetes' words, for example `Invalid value: 0: must be a positive value`. */
  reason: string;
}

/** Renders a field error as `<Kind>/<name>: <field.path>: <reason>`. */
export function formatFieldError(error: FieldError): string {
  return `${error.kind}/${error.name}: ${error.path}: ${error.reason}`;
}

/** Renders a value the way Kubernetes error messages quote it. */
export function quoteValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === undefined) return "null";
  return JSON.stringify(value);
}

/** `Invalid value: <value>: <detail>`. */
export function invalid(value: unknown, detail: string): string {
  return `Invalid value: ${quoteValue(value)}: ${detail}`;
}

/** `Required value[: <detail>]`. */
export function required(detail = ""): string {
  return detail === "" ? "Required value" : `Required value: ${detail}`;
}

/** `Forbidden: <detail>`. */
export function forbidden(detail: string): string {
  return `Forbidden: ${detail}`;
}

/** `Too long: may not be more than <max> bytes` (the value is not shown). */
export function tooLong(maxBytes: number): string {
  return `Too long: may not be more than ${maxBytes} ${maxBytes === 1 ? "byte" : "bytes"}`;
}

/** `Unsupported value: <value>: supported values: "a", "b"`. */
export function notSupported(value: unknown, supported: readonly string[]): string {
  const list = supported.map((s) => JSON.stringify(s)).join(", ");
  return `Unsupported value: ${quoteValue(value)}: supported values: ${list}`;
}

/** Collects the errors of one object under its kind and name. */
export class FieldErrorList {
  readonly #kind: string;
  readonly #name: string;
  /** The errors collected so far. */
  readonly errors: FieldError[] = [];

  /** Starts an empty list for the object `kind`/`name`. */
  constructor(kind: string, name: string) {
    this.#kind = kind;
    this.#name = name === "" ? "(unnamed)" : name;
  }

  /** Records that the field at `path` is wrong for `reason`. */
  add(path: string, reason: string): void {
    this.errors.push({ kind: this.#kind, name: this.#name, path, reason });
  }
}

/**
 * Thrown when a configuration is refused. Every problem found is listed in
 * {@linkcode ConfigurationError.errors}; nothing of the configuration was applied.
 */
export class ConfigurationError extends Error {
  /** Every problem, one rendered message each. */
  readonly errors: readonly string[];

  /** Builds the error from the rendered messages. */
  constructor(errors: readonly string[]) {
    const n = errors.length;
    super(
      `Cannot load configuration: ${n} error${n === 1 ? "" : "s"}:\n${errors.join("\n")}`,
    );
    this.name = "ConfigurationError";
    this.errors = errors;
  }
}
