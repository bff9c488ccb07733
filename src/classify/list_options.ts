/**
 * Kubernetes ListOptions as RequestInfo reads them: the query parameters that decide list vs watch and a name from a field selector.
 *
 * @module
 */

import { isInt64, isLabelSelector } from "./label_selector.ts";
import { urlUnescape } from "./_path_segments.ts";

// Slots of the parameters in ListParams: their index in KEYS and LIST_OPTION_KEYS.
/** Slot of `watch`. */
export const WATCH = 0;
/** Slot of `fieldSelector`. */
export const FIELD_SELECTOR = 1;
/** Slot of `labelSelector`. */
export const LABEL_SELECTOR = 2;
/** Slot of `limit`. */
export const LIMIT = 3;
/** Slot of `timeoutSeconds`. */
export const TIMEOUT_SECONDS = 4;
/** Slot of `resourceVersion` (read by the list work estimator only). */
export const RESOURCE_VERSION = 5;
/** Slot of `resourceVersionMatch` (read by the list work estimator only). */
export const RESOURCE_VERSION_MATCH = 6;
/** Slot of `continue` (read by the list work estimator only). */
export const CONTINUE = 7;
/** Slot of `sendInitialEvents` (read by the list work estimator only). */
export const SEND_INITIAL_EVENTS = 8;
/** The parameters RequestInfo reads. */
export const KEYS: readonly string[] = [
  "watch",
  "fieldSelector",
  "labelSelector",
  "limit",
  "timeoutSeconds",
];
/** {@linkcode KEYS} and the parameters the list work estimator also reads, in slot order. */
export const LIST_OPTION_KEYS: readonly string[] = [
  ...KEYS,
  "resourceVersion",
  "resourceVersionMatch",
  "continue",
  "sendInitialEvents",
];

/** First values of the ListOptions parameters whose decoding can matter. */
export class ListParams {
  readonly #keys: readonly string[];
  readonly #values: (string | undefined)[];

  /** Reads the parameters in `keys` (default {@linkcode KEYS}); slots are indexes into it. */
  constructor(keys: readonly string[] = KEYS) {
    this.#keys = keys;
    this.#values = keys.map(() => undefined);
  }

  /** The first value of the parameter in `slot`, if present and well escaped. */
  value(slot: number): string | undefined {
    return this.#values[slot];
  }

  get watch(): string | undefined {
    return this.#values[WATCH];
  }
  get fieldSelector(): string | undefined {
    return this.#values[FIELD_SELECTOR];
  }
  get labelSelector(): string | undefined {
    return this.#values[LABEL_SELECTOR];
  }

  load(query: string | URLSearchParams | undefined): void {
    const values = this.#values;
    // A loop, not fill(): fill() leaves V8's fast path once the array holds strings (~100 ns).
    for (let k = 0; k < values.length; k++) values[k] = undefined;
    if (query === undefined) return;
    if (typeof query !== "string") {
      const keys = this.#keys;
      for (let k = 0; k < keys.length; k++) values[k] = query.get(keys[k]!) ?? undefined;
      return;
    }
    const n = query.length;
    for (let i = query.charCodeAt(0) === 0x3f ? 1 : 0; i < n;) {
      let amp = query.indexOf("&", i);
      if (amp < 0) amp = n;
      if (amp > i) this.#pair(query, i, amp);
      i = amp + 1;
    }
  }

  /** One `key=value` pair of query[from, to), kept if Go's ParseQuery keeps it. */
  #pair(query: string, from: number, to: number): void {
    let eq = to;
    for (let i = from; i < to; i++) {
      const c = query.charCodeAt(i);
      if (c === 0x3b) return; // Go 1.17+ drops pairs containing ";".
      if (c === 0x3d && eq === to) eq = i;
    }
    const slot = keySlot(this.#keys, query, from, eq);
    if (slot < 0 || this.#values[slot] !== undefined) return;
    const value = urlUnescape(eq < to ? query.slice(eq + 1, to) : "", true);
    if (value !== undefined) this.#values[slot] = value;
  }

  /** Whether limit, timeoutSeconds and labelSelector decode (Go's ParameterCodec). */
  otherOptionsDecode(): boolean {
    const v = this.#values;
    return (v[LIMIT] === undefined || isInt64(v[LIMIT])) &&
      (v[TIMEOUT_SECONDS] === undefined || isInt64(v[TIMEOUT_SECONDS])) &&
      (v[LABEL_SELECTOR] === undefined || isLabelSelector(v[LABEL_SELECTOR]));
  }
}

/** The index in `keys` of the query key query[from, to) once decoded, or -1. */
function keySlot(
  keys: readonly string[],
  query: string,
  from: number,
  to: number,
): number {
  let key: string | undefined;
  for (let i = from; i < to; i++) {
    const c = query.charCodeAt(i);
    if (c === 0x25 || c === 0x2b) {
      key = urlUnescape(query.slice(from, to), true);
      if (key === undefined) return -1;
      break;
    }
  }
  for (let k = 0; k < keys.length; k++) {
    const name = keys[k]!;
    if (
      key === undefined ? name.length === to - from && query.startsWith(name, from) : key === name
    ) {
      return k;
    }
  }
  return -1;
}

/**
 * Go's query bool (`Convert_Slice_string_To_bool`): absent, "0" or "false"
 * are false, anything else (including "") is true. The decoder compares with
 * `strings.EqualFold`, whose folding also takes U+017F (ſ) for "s"; the
 * fallback after a decode failure uses `strings.ToLower`, which does not.
 */
export function queryBool(value: string | undefined, decodeFailed: boolean): boolean {
  if (value === undefined || value === "0") return false;
  if (value.length !== 5) return true;
  const word = "false";
  for (let i = 0; i < 5; i++) {
    const c = value.charCodeAt(i);
    if ((c | 0x20) === word.charCodeAt(i) && c < 0x80) continue;
    if (i === 3 && c === 0x17f && !decodeFailed) continue;
    return true;
  }
  return false;
}

/** Whether `value` is "fal\u017fe": false to the decoder, true to the fallback after a failure. */
export function hasLongS(value: string | undefined): boolean {
  return value !== undefined && value.length === 5 && value.charCodeAt(3) === 0x17f;
}

/** Go's `path.IsValidPathSegmentName`. */
export function isPathSegmentName(name: string): boolean {
  return name !== "." && name !== ".." && !name.includes("/") && !name.includes("%");
}

// ---------------------------------------------------------------------------
// Field selectors (apimachinery fields.ParseSelector + RequiresExactMatch).

/**
 * The value the selector requires for `metadata.name`, `null` if none,
 * `false` if the selector does not parse.
 */
export function exactMetadataName(selector: string): string | null | false {
  return exactFieldValue(selector, "metadata.name");
}

/**
 * The value the selector requires for `field` (`RequiresExactMatch`), `null`
 * if none, `false` if the selector does not parse. Go sorts the raw terms and
 * takes the first equality on the field, so the byte-wise smallest term wins.
 */
export function exactFieldValue(selector: string, field: string): string | null | false {
  let best: string | null = null;
  let start = 0;
  let escaped = false;
  for (let i = 0; i <= selector.length; i++) {
    if (i < selector.length) {
      // Go's splitTerms: a backslash keeps the next character from separating terms.
      const c = selector.charCodeAt(i);
      if (escaped) {
        escaped = false;
        continue;
      }
      if (c === 0x5c) escaped = true;
      if (c !== 0x2c) continue;
    }
    if (i > start) {
      const at = operatorAt(selector, start, i);
      if (at < 0) return false;
      // "!=" (the scan stops at "!" only before "="), "==", or "=".
      const isEquality = selector.charCodeAt(at) === 0x3d;
      const valueFrom = at + (!isEquality || selector.charCodeAt(at + 1) === 0x3d ? 2 : 1);
      if (!isFieldValue(selector, valueFrom, i)) return false;
      if (isEquality && at - start === field.length && selector.startsWith(field, start)) {
        const term = selector.slice(start, i);
        if (best === null || goLess(term, best)) best = term;
      }
    }
    start = i + 1;
  }
  if (best === null) return null;
  const opEnd = field.length + (best.startsWith("==", field.length) ? 2 : 1);
  const value = best.slice(opEnd);
  return value.includes("\\") ? value.replace(/\\(.)/gs, "$1") : value;
}

/** Index of the first `!=`, `==` or `=` in s[from, to) (Go's splitTerm); -1 if none. */
function operatorAt(s: string, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3d || (c === 0x21 && i + 1 < to && s.charCodeAt(i + 1) === 0x3d)) return i;
  }
  return -1;
}

/** Go's `fields.UnescapeValue` accepts s[from, to): only `\\`, `\,`, `\=` escapes, no bare `,` or `=`. */
function isFieldValue(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) {
      const next = ++i < to ? s.charCodeAt(i) : -1;
      if (next !== 0x5c && next !== 0x2c && next !== 0x3d) return false;
    } else if (c === 0x2c || c === 0x3d) {
      return false;
    }
  }
  return true;
}

/** Go's string order: by UTF-8 bytes, i.e. by code point, not by UTF-16 unit. */
function goLess(a: string, b: string): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      // Surrogates (code points above U+FFFF) sort after U+E000..U+FFFF in UTF-8.
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y;
  }
  return a.length < b.length;
}
