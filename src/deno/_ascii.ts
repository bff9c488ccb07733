/**
 * Field names compared without case and without lower-casing them: on V8,
 * `toLowerCase()` is a call into the runtime and a new string per name,
 * where a loop over a name's few letters is neither.
 *
 * @module
 */

/** Whether `raw` is `lower` (lower-case ASCII), ASCII letters compared without case. */
export function sameLetters(raw: string, lower: string): boolean {
  if (raw.length !== lower.length) return false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    // Upper-case ASCII letters are 0x41..0x5a; the lower-case one is 0x20 above.
    if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== lower.charCodeAt(i)) return false;
  }
  return true;
}
