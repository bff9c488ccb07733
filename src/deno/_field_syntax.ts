/**
 * The syntax of HTTP/1.1 heads that the gateway's server, its HTTP/1.1
 * client and its proxy all check, in one place: each set of characters as
 * a regular expression, and as a table that a loop checks a string
 * against. The short strings of a head (a method, a Host, a length) are
 * checked by the table: on Deno a regular expression's call costs about
 * 500 instructions, a loop over a few characters a tenth of it.
 *
 * @module
 */

/** A token (RFC 9110 §5.6.2): a method, a field name, a name `Connection` lists. */
export const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * What no field value (RFC 9110 §5.5) or reason phrase may hold: it would
 * end the field, the line or the head.
 */
export const BREAKS_LINE = /[\0\r\n]/;

/** 1 for each ASCII character that `one` (a class of one character) matches, else 0. */
export function charSet(one: RegExp): Uint8Array {
  const set = new Uint8Array(128);
  for (let c = 0; c < 128; c++) set[c] = one.test(String.fromCharCode(c)) ? 1 : 0;
  return set;
}

/** The characters of a token ({@linkcode TOKEN}). */
export const TCHAR: Uint8Array = charSet(/^[!#$%&'*+.^_`|~0-9A-Za-z-]$/);
/** Visible ASCII (RFC 5234's VCHAR). */
export const VCHAR: Uint8Array = charSet(/^[\x21-\x7e]$/);
/** Decimal digits. */
export const DIGIT: Uint8Array = charSet(/^[0-9]$/);

/** Whether every character of `s` from `from` on is in `set` (true when there is none). */
export function onlyOf(set: Uint8Array, s: string, from = 0): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f || set[c] === 0) return false;
  }
  return true;
}

/** Whether `s` is a token ({@linkcode TOKEN}). */
export function isToken(s: string): boolean {
  return s.length > 0 && onlyOf(TCHAR, s);
}

/** Whether `s` is 1*DIGIT. */
export function isDigits(s: string): boolean {
  return s.length > 0 && onlyOf(DIGIT, s);
}
