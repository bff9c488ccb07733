/**
 * The headers the gateway forwards, both ways: the end-to-end ones (RFC
 * 9110 §7.6.1: hop-by-hop headers stay on their hop), with
 * `X-Forwarded-For` extended on the way up.
 *
 * Headers are read with `forEach`, not iterated: on Deno a `Headers`
 * iterator costs about 2 µs for three headers, `forEach` a tenth of it; and
 * the headers for `fetch` are given as pairs, which it checks once, where a
 * `Headers` would be iterated and checked again.
 *
 * @module
 */

import { isToken } from "./_field_syntax.ts";
import { CheckedFields } from "./_http1_request.ts";
import { sameName } from "../_shared/field_names.ts";

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1,
 * plus the legacy `Keep-Alive` and `Proxy-Connection`): never forwarded.
 */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** Hop-by-hop names, for lookups. */
const HOP_BY_HOP = new Set(HOP_BY_HOP_HEADERS);
/** The hop-by-hop names by length (none is longer than 31). */
const HOP_BY_HOP_BY_LENGTH: readonly (readonly string[])[] = Array.from(
  { length: 32 },
  (_, n) => HOP_BY_HOP_HEADERS.filter((name) => name.length === n),
);

/**
 * The hop-by-hop name `raw` is, in lower case, or `null`: compared letter by
 * letter without lower-casing it (a call into the runtime per name).
 */
function hopByHopName(raw: string): string | null {
  const candidates = HOP_BY_HOP_BY_LENGTH[raw.length];
  if (candidates === undefined) return null;
  for (const name of candidates) if (sameName(raw, name)) return name;
  return null;
}

/**
 * The end-to-end headers of `headers` as pairs (lower-case names, the
 * values of a name joined, Set-Cookie apart: what iterating gives),
 * leaving out the hop-by-hop ones, those `Connection` names, and `skip`.
 */
export function endToEndPairs(headers: Headers, skip?: string): [string, string][] {
  const pairs: [string, string][] = [];
  let drop: Set<string> | null = null;
  headers.forEach((value, name) => {
    if (HOP_BY_HOP.has(name)) drop = addHopByHop(drop, name, value);
    else if (name !== skip) pairs.push([name, value]);
  });
  return drop === null ? pairs : pairs.filter(([name]) => !drop!.has(name));
}

/** Adds `name` (hop-by-hop) and, for `Connection`, the names it lists, to `drop`. */
function addHopByHop(drop: Set<string> | null, name: string, value: string): Set<string> {
  const out = drop ?? new Set<string>();
  out.add(name);
  if (name === "connection") {
    for (const listed of value.split(",")) {
      const trimmed = listed.trim();
      // A malformed token cannot name a header we could hold: skip it.
      if (isToken(trimmed)) out.add(trimmed.toLowerCase());
    }
  }
  return out;
}

/**
 * What to leave out of a message whose header fields are `fields` (names
 * and values alternating, as received), besides its hop-by-hop fields: the
 * names its `Connection` lists that are not hop-by-hop already, in lower
 * case, or `null` for none; `undefined` when it has no hop-by-hop field at
 * all. On the fields as they came this costs a lower-casing per name of a
 * hop-by-hop name's length, and no set for the usual `Connection:
 * keep-alive`.
 */
function connectionListed(fields: readonly string[]): Set<string> | null | undefined {
  let found = false;
  let listed: Set<string> | null = null;
  for (let i = 0; i < fields.length; i += 2) {
    const name = hopByHopName(fields[i]!);
    if (name === null) continue;
    found = true;
    if (name !== "connection") continue;
    const value = fields[i + 1]!;
    if (sameName(value, "keep-alive")) continue;
    for (const option of value.split(",")) {
      const trimmed = option.trim();
      // A malformed token cannot name a header we could hold: skip it.
      if (!isToken(trimmed)) continue;
      const lower = trimmed.toLowerCase();
      if (!HOP_BY_HOP.has(lower)) (listed ??= new Set()).add(lower);
    }
  }
  return found ? listed : undefined;
}

/** Whether the field `name` is hop-by-hop, or among the names `Connection` listed. */
function dropsField(listed: Set<string> | null, name: string): boolean {
  if (hopByHopName(name) !== null) return true;
  return listed !== null && listed.has(name.toLowerCase());
}

/**
 * Removes from `fields` the hop-by-hop ones and those `Connection` lists,
 * in place (the order of the rest kept); returns `fields`.
 */
export function endToEndFields(fields: string[]): string[] {
  const listed = connectionListed(fields);
  if (listed === undefined) return fields;
  let at = 0;
  for (let i = 0; i < fields.length; i += 2) {
    const raw = fields[i]!;
    if (dropsField(listed, raw)) continue;
    fields[at++] = raw;
    fields[at++] = fields[i + 1]!;
  }
  // Popping is far cheaper than setting `length` on V8 (a runtime call).
  while (fields.length > at) fields.pop();
  return fields;
}

/**
 * Makes `fields` carry the response's length once, as `length` (a body framed by its length), in
 * place; returns `fields`. The gateway frames the body it forwards itself: a `Content-Length` the
 * upstream's `Connection` listed (so {@linkcode endToEndFields} left it out), or one repeated
 * (RFC 9110 §8.6 lets a recipient accept equal values, and some clients refuse them repeated), is
 * written once, from the length the framing took. The usual single, canonical field costs a scan.
 */
export function withOneLength(fields: string[], length: number): string[] {
  const value = String(length);
  let found = 0;
  let canonical = true;
  for (let i = 0; i < fields.length; i += 2) {
    if (!sameName(fields[i]!, "content-length")) continue;
    found++;
    if (fields[i + 1] !== value) canonical = false;
  }
  if (found === 1 && canonical) return fields;
  let at = 0;
  for (let i = 0; i < fields.length; i += 2) {
    if (sameName(fields[i]!, "content-length")) continue;
    fields[at++] = fields[i]!;
    fields[at++] = fields[i + 1]!;
  }
  while (fields.length > at) fields.pop();
  fields.push("content-length", value);
  return fields;
}

/** A copy of `headers` without the hop-by-hop ones, including those `Connection` names. */
export function endToEndHeaders(headers: Headers): Headers {
  return new Headers(endToEndPairs(headers));
}

/**
 * Removes from `copy` (a copy of `original`) the hop-by-hop headers and
 * those `Connection` names of `original`.
 */
export function dropHopByHop(original: Headers, copy: Headers): void {
  let drop: Set<string> | null = null;
  original.forEach((value, name) => {
    if (HOP_BY_HOP.has(name)) drop = addHopByHop(drop, name, value);
  });
  if (drop !== null) { for (const name of drop as Set<string>) copy.delete(name); }
}

/**
 * The headers to send upstream, as pairs: the end-to-end ones but `Host`
 * (the upstream client sets it from the upstream URL; the client's names
 * us), `X-Forwarded-For` extended with the client's address, and, for an
 * upstream client that decodes bodies (`identity`, the default),
 * `Accept-Encoding: identity`.
 */
export function upstreamRequestPairs(
  headers: Headers,
  clientAddress: string | null,
  identity = true,
): [string, string][] {
  const pairs = endToEndPairs(headers, "host");
  let forwarded = clientAddress === null;
  for (const pair of pairs) {
    if (pair[0] === "x-forwarded-for" && clientAddress !== null) {
      pair[1] = `${pair[1]}, ${clientAddress}`;
      forwarded = true;
    } else if (pair[0] === "accept-encoding" && identity) {
      // Deno's fetch decompresses gzip and br bodies but keeps Content-Encoding, which would
      // mislabel what we pass on; only `identity` turns that off, so ask the upstream for it.
      pair[1] = "identity";
    }
  }
  if (!forwarded) pairs.push(["x-forwarded-for", clientAddress!]);
  if (identity && !pairs.some(([name]) => name === "accept-encoding")) {
    pairs.push(["accept-encoding", "identity"]);
  }
  return pairs;
}

/**
 * {@linkcode upstreamRequestPairs} for a request whose fields are at hand
 * as the gateway's own server read them (names and values alternating):
 * the end-to-end ones but `Host` and `Content-Length`, names as they came,
 * `X-Forwarded-For` extended with `clientAddress`, and one
 * `Content-Length: contentLength` (the length the request's framing
 * decided) when given. For a client that sends bodies as they are (no
 * `Accept-Encoding` rewrite).
 */
export function upstreamFields(
  fields: readonly string[],
  clientAddress: string | null,
  contentLength: number | null = null,
): CheckedFields {
  const listed = connectionListed(fields);
  const out: string[] = [];
  let forwarded = clientAddress === null;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    let value = fields[i + 1]!;
    // Most names are neither `Host` (4) nor `X-Forwarded-For` (15): compare lengths first.
    if (name.length === 4 && name.toLowerCase() === "host") continue;
    // RFC 9110 §8.6: repeated or listed values of one length go on as one field, added below.
    if (name.length === 14 && name.toLowerCase() === "content-length") continue;
    if (listed !== undefined && dropsField(listed, name)) continue;
    if (!forwarded && name.length === 15 && name.toLowerCase() === "x-forwarded-for") {
      value = `${value}, ${clientAddress}`;
      forwarded = true;
    }
    out.push(name, value);
  }
  if (!forwarded) out.push("x-forwarded-for", clientAddress!);
  return new CheckedFields(out, contentLength);
}

/** {@linkcode upstreamRequestPairs} as `Headers`. */
export function upstreamRequestHeaders(
  headers: Headers,
  clientAddress: string | null,
  identity = true,
): Headers {
  return new Headers(upstreamRequestPairs(headers, clientAddress, identity));
}

/** The address `X-Forwarded-For` names: an IP, `null` for a Unix socket. */
export function clientAddressOf(addr: Deno.Addr | undefined): string | null {
  return addr !== undefined && (addr.transport === "tcp" || addr.transport === "udp")
    ? addr.hostname
    : null;
}
