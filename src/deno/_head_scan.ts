/**
 * The parsers' fast path for a plain head received whole: a status or
 * request line and header section all in one input, read in one pass over
 * the bytes and decoded once, where the line steps of
 * `_http1_parser_steps.ts` decode a window, cut a string per line and
 * split each line again (they cost the HTTP/1.1 client about 7 µs of its
 * 12 µs per response, `bench/RESULTS.md`).
 *
 * "Plain" is what both parsers' line steps read alike and accept: visible
 * ASCII, spaces and tabs, lines ended by LF or CRLF, every field a token
 * name, a colon and a value (RFC 9110 §5.1, §5.5). Anything else (a head
 * not yet all there or over its budget, a byte beyond ASCII or a control,
 * a bare CR, an obs-fold line, a name that is no token, an empty line
 * before the first) is left to the line steps, which read it or refuse it
 * as before: this path never decides a refusal. The client's and the
 * server's tests feed the same heads whole and byte by byte (which takes
 * the line steps) and compare.
 *
 * @module
 */

import { TCHAR } from "./_field_syntax.ts";

/** Decodes ASCII natively (UTF-8 and Latin-1 agree on it); the line steps' too. */
export const ascii = new TextDecoder("utf-8", { ignoreBOM: true });

/** A plain head read whole: its first line and where it ended. */
export interface ScannedHead {
  /** The status or request line, without its line end. */
  readonly first: string;
  /** The offset just past the empty line that ends the head. */
  readonly next: number;
}

/**
 * Reads the plain head at `bytes[start, end)` of at most `budget` bytes
 * (its empty line included), whose first line holds at most `firstLimit`
 * bytes; pushes its fields onto `fields` (names and values alternating,
 * values trimmed of spaces and tabs, as received). `null`, with `fields`
 * untouched, when the head is not plain or not all there.
 */
export function scanHead(
  bytes: Uint8Array,
  start: number,
  end: number,
  budget: number,
  firstLimit: number,
  fields: string[],
): ScannedHead | null {
  const stop = Math.min(end, start + budget);
  const firstEnd = lineEnd(bytes, start, stop);
  // An empty line first (skipped before a request line, by the line steps) is not plain either.
  if (
    firstEnd <= start || bytes[start] === 0x0d ||
    contentEnd(bytes, start, firstEnd) - start > firstLimit
  ) {
    return null;
  }
  // Offsets of each field: name start, colon, value start, value end.
  const spans = SPANS;
  let count = 0;
  let at = firstEnd + 1;
  for (;;) {
    if (at >= stop) return null;
    const c = bytes[at]!;
    if (c === 0x0a) {
      at += 1;
      break;
    }
    if (c === 0x0d) {
      if (at + 1 >= stop || bytes[at + 1] !== 0x0a) return null;
      at += 2;
      break;
    }
    let colon = at;
    for (; colon < stop; colon++) {
      const n = bytes[colon]!;
      if (n === 0x3a) break;
      if (n > 0x7f || TCHAR[n] === 0) return null;
    }
    if (colon === at || colon >= stop) return null;
    const lf = lineEnd(bytes, colon + 1, stop);
    if (lf < 0) return null;
    let from = colon + 1;
    let to = contentEnd(bytes, from, lf);
    while (from < to && (bytes[from] === 0x20 || bytes[from] === 0x09)) from++;
    while (to > from && (bytes[to - 1] === 0x20 || bytes[to - 1] === 0x09)) to--;
    if (count * 4 + 4 > spans.length) return null; // more fields than the scratch holds
    spans[count * 4] = at - start;
    spans[count * 4 + 1] = colon - start;
    spans[count * 4 + 2] = from - start;
    spans[count * 4 + 3] = to - start;
    count++;
    at = lf + 1;
  }
  // A request without a body is usually the whole input: no view of it to make.
  const text = ascii.decode(start === 0 && at === bytes.length ? bytes : bytes.subarray(start, at));
  for (let i = 0; i < count * 4; i += 4) {
    fields.push(text.slice(spans[i]!, spans[i + 1]!), text.slice(spans[i + 2]!, spans[i + 3]!));
  }
  return { first: text.slice(0, contentEnd(bytes, start, firstEnd) - start), next: at };
}

/** The most fields the fast path reads; a head with more takes the line steps. */
const MAX_FIELDS = 256;
const SPANS = new Int32Array(MAX_FIELDS * 4);

/**
 * The offset of the LF ending the line from `at`, every byte before it
 * visible ASCII, a space or a tab (a CR only right before it); else -1.
 */
function lineEnd(bytes: Uint8Array, at: number, stop: number): number {
  for (let i = at; i < stop; i++) {
    const c = bytes[i]!;
    if ((c >= 0x20 && c <= 0x7e) || c === 0x09) continue;
    if (c === 0x0a) return i;
    if (c === 0x0d && i + 1 < stop && bytes[i + 1] === 0x0a) return i + 1;
    return -1;
  }
  return -1;
}

/** Where the line ending at `lf` ends without its CR. */
function contentEnd(bytes: Uint8Array, from: number, lf: number): number {
  return lf > from && bytes[lf - 1] === 0x0d ? lf - 1 : lf;
}
