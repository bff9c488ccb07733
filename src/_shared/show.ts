/**
 * How an error message shows the value it received: strings quoted, so
 * that an empty or blank string is visible, anything else as `String()`
 * gives it.
 *
 * @module
 */

/** `value` for an error message: a string as JSON, anything else as `String(value)`. */
export function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
