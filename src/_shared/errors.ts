/**
 * The error class for a caller's mistake, as the "Errors" section of docs/library.md
 * rules: a `RangeError` for a number out of range, a `TypeError` otherwise.
 *
 * @module
 */

/** The class of the error for a bad `value`: `RangeError` for a number or a bigint, else `TypeError`. */
export function errorClassOf(value: unknown): "RangeError" | "TypeError" {
  return typeof value === "number" || typeof value === "bigint" ? "RangeError" : "TypeError";
}

/** A `RangeError` when `value` is a number or a bigint, else a `TypeError`; same `message`. */
export function valueError(value: unknown, message: string): TypeError | RangeError {
  return errorClassOf(value) === "RangeError" ? new RangeError(message) : new TypeError(message);
}

/**
 * Throws {@linkcode valueError} unless `value` is a number that `holds`
 * accepts: a `TypeError` when it is not a number, a `RangeError` when it is
 * one out of range (NaN included). `message` is built only to throw.
 */
export function checkNumber(
  value: unknown,
  holds: (n: number) => boolean,
  message: () => string,
): asserts value is number {
  if (typeof value === "number" && holds(value)) return;
  throw valueError(value, message());
}
