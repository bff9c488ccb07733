/**
 * Path segment helpers and percent-decoding with Go's net/url rules, for RequestInfo.
 *
 * @module
 */

/** Character code of "/". */
export const SLASH = 0x2f;

/** The end of the segment starting at `from`: the next "/" or `end`. */
export function segmentEnd(path: string, from: number, end: number): number {
  const slash = path.indexOf("/", from);
  return slash < 0 || slash > end ? end : slash;
}

/** Whether path[from, to) is `word`, compared without slicing. */
export function isSegment(path: string, from: number, to: number, word: string): boolean {
  return to - from === word.length && path.startsWith(word, from);
}

/** The "/"-separated segments of path[from, end). */
export function splitSegments(path: string, from: number, end: number): string[] {
  const parts: string[] = [];
  for (let to = segmentEnd(path, from, end);; to = segmentEnd(path, from, end)) {
    parts.push(path.slice(from, to));
    if (to === end) return parts;
    from = to + 1;
  }
}

/** The entry of `list` equal to path[from, to), compared without slicing. */
export function findSegment(
  list: readonly string[],
  path: string,
  from: number,
  to: number,
): string | undefined {
  for (const s of list) if (s.length === to - from && path.startsWith(s, from)) return s;
  return undefined;
}

// ---------------------------------------------------------------------------
// Percent-decoding and query parsing with Go's net/url rules.

export const encoder = new TextEncoder();
export const decoder = new TextDecoder();

/** The value of a hex digit, or -1. */
export function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * Go's `url.PathUnescape` (`plusIsSpace` false) or `url.QueryUnescape`;
 * `undefined` for a malformed escape. Escaped ASCII is decoded by hand, three
 * times faster than `decodeURIComponent`, which handles everything else.
 */
export function urlUnescape(s: string, plusIsSpace: boolean): string | undefined {
  if (plusIsSpace && s.includes("+")) s = s.replaceAll("+", " ");
  let out = "";
  let last = 0;
  for (let i = s.indexOf("%"); i >= 0; i = s.indexOf("%", i)) {
    const high = hexValue(s.charCodeAt(i + 1));
    const low = hexValue(s.charCodeAt(i + 2));
    if (high < 0 || low < 0) return undefined;
    if (high >= 8) return unescapeUtf8(s);
    out += s.slice(last, i) + String.fromCharCode(high * 16 + low);
    last = i += 3;
  }
  return last === 0 ? s : out + s.slice(last);
}

/**
 * Decodes escapes of UTF-8 bytes. Bytes that are not UTF-8 become U+FFFD (Go
 * keeps them as raw bytes; no valid name or namespace contains them).
 */
export function unescapeUtf8(s: string): string | undefined {
  if (badEscape(s) !== "") return undefined;
  try {
    return decodeURIComponent(s);
  } catch {
    const bytes = encoder.encode(s);
    let n = 0;
    for (let i = 0; i < bytes.length; i++, n++) {
      if (bytes[i] === 0x25) {
        bytes[n] = hexValue(bytes[i + 1]!) * 16 + hexValue(bytes[i + 2]!);
        i += 2;
      } else {
        bytes[n] = bytes[i]!;
      }
    }
    return decoder.decode(bytes.subarray(0, n));
  }
}

/** The first malformed escape in `s`, or "". */
export function badEscape(s: string): string {
  for (let i = s.indexOf("%"); i >= 0; i = s.indexOf("%", i + 3)) {
    if (hexValue(s.charCodeAt(i + 1)) < 0 || hexValue(s.charCodeAt(i + 2)) < 0) {
      return s.slice(i, i + 3);
    }
  }
  return "";
}
