/**
 * Adding headers to a response without the runtime's per-character checks,
 * where it is safe to: the UID headers are added to every response, and on
 * Deno `Headers.set()` checks each name and value character by character in
 * JavaScript (about 0.3 µs per header for the 30-character names and
 * 36-character UIDs, more than the rest of `apf()`'s response handling).
 *
 * @module
 */

import { sameName } from "../_shared/field_names.ts";

/**
 * Deno keeps a `Headers` object's header list (the Fetch standard's list of
 * name/value pairs, https://fetch.spec.whatwg.org/#concept-headers-header-list)
 * and its guard under own symbols; a response's `Headers` share the list
 * with the response, which is what the server sends. Found once, on a probe,
 * and checked there: a pair pushed onto the list must be what the headers
 * then hold. Where the runtime keeps no such list (not Deno), `null`, and
 * headers are set the standard way. Found on first use: Workers refuse to
 * make a Response at module scope.
 */
let keys: { list: symbol; guard: symbol } | null | undefined;

/** The guard of a response's own, mutable headers (the Fetch standard's "response"). */
const RESPONSE_GUARD = "response";

function findKeys(): { list: symbol; guard: symbol } | null {
  try {
    const headers = new Response(null, { headers: { "x-apf-probe": "1" } }).headers;
    // Builds the lower-case name cache the check below must see refreshed.
    if (headers.get("x-apf-probe") !== "1") return null;
    const own = headers as unknown as Record<symbol, unknown>;
    let list: symbol | null = null, guard: symbol | null = null;
    for (const key of Object.getOwnPropertySymbols(own)) {
      const value = own[key];
      if (value === RESPONSE_GUARD) guard = key;
      else if (isPairList(value) && value.length === 1 && value[0]![0] === "x-apf-probe") {
        list = key;
      }
    }
    if (list === null || guard === null) return null;
    (own[list] as [string, string][]).push(["X-Apf-Check", "2"]);
    if (headers.get("x-apf-check") !== "2" || [...headers].length !== 2) return null;
    return { list, guard };
  } catch {
    return null;
  }
}

function isPairList(value: unknown): value is [string, string][] {
  return Array.isArray(value) && value.every((p) => Array.isArray(p) && p.length === 2);
}

/**
 * The header list of a response's mutable `headers`, to push new pairs onto
 * (as `append()` would, without its checks), or `null` when it is not
 * reachable: other runtimes, immutable headers (a fetched response's), or
 * lazy ones.
 */
export function mutableHeaderList(headers: Headers): [string, string][] | null {
  if (keys === undefined) keys = findKeys();
  if (keys === null) return null;
  const own = headers as unknown as Record<symbol, unknown>;
  if (own[keys.guard] !== RESPONSE_GUARD) return null;
  const list = own[keys.list];
  return Array.isArray(list) ? list : null;
}

/** Whether `list` has a header named `lowerName` (lower case), in any case. */
export function listHas(list: readonly (readonly [string, string])[], lowerName: string): boolean {
  for (let i = 0; i < list.length; i++) if (sameName(list[i]![0], lowerName)) return true;
  return false;
}

/**
 * `headers.get(lowerName)` for a lower-case name, read from the list when it
 * is reachable (Deno lower-cases every name of the list on each `get()`).
 */
export function headerValue(headers: Headers, lowerName: string): string | null {
  const list = mutableHeaderList(headers);
  if (list === null) return headers.get(lowerName);
  let value: string | null = null;
  for (let i = 0; i < list.length; i++) {
    const pair = list[i]!;
    if (sameName(pair[0], lowerName)) value = value === null ? pair[1] : `${value}, ${pair[1]}`;
  }
  return value;
}

/** A header value `set()` would store as is: visible ASCII, inner spaces and tabs, no edge blanks. */
const PLAIN_VALUE = /^(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?$/;

/** Whether `value` is one `Headers.set()` would keep byte for byte (no trimming, nothing refused). */
export function isPlainValue(value: string): boolean {
  return PLAIN_VALUE.test(value);
}

/** The values found plain already (the UIDs of the configuration: a few dozen). */
const plain = new Set<string>();

/** {@linkcode isPlainValue}, remembered: for the few values set on every response. */
export function isPlainConstant(value: string): boolean {
  if (plain.has(value)) return true;
  if (!PLAIN_VALUE.test(value)) return false;
  // Bounded: reloads of the configuration may bring new UIDs.
  if (plain.size >= 4096) plain.clear();
  plain.add(value);
  return true;
}
