/**
 * Header field names compared without case and without lower-casing them:
 * on V8, `toLowerCase()` is a call into the runtime and a new string per
 * name, where a loop over a name's few letters is neither.
 *
 * @module
 */

/** Whether header name `name` is `lowerName` (lower case) in any case, without a lower-cased copy. */
export function sameName(name: string, lowerName: string): boolean {
  if (name.length !== lowerName.length) return false;
  if (name === lowerName) return true;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    // Header names are tokens (ASCII): only A-Z differ from their lower case.
    if (
      c !== lowerName.charCodeAt(i) && !(c >= 65 && c <= 90 && c + 32 === lowerName.charCodeAt(i))
    ) {
      return false;
    }
  }
  return true;
}
