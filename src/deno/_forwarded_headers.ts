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

import { CheckedFields } from "./_http1_request.ts";

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
/** Their lengths: a name of another length is none of them. */
const HOP_BY_HOP_LENGTHS = new Set(HOP_BY_HOP_HEADERS.map((name) => name.length));

/** A header name, as `Connection` may list one (a token of RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

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
      if (TOKEN.test(trimmed)) out.add(trimmed.toLowerCase());
    }
  }
  return out;
}

/**
 * The lower-case names to leave out of a message whose header fields are
 * `fields` (names and values alternating, as received): its hop-by-hop
 * fields and those its `Connection` lists; `null` when there are none. On
 * the fields as they came, before any `Headers` holds them, this costs a
 * lower-casing per name, where reading a `Headers` back (`forEach`) sorts
 * and joins every field.
 */
export function hopByHopFieldNames(fields: readonly string[]): Set<string> | null {
  let drop: Set<string> | null = null;
  for (let i = 0; i < fields.length; i += 2) {
    const raw = fields[i]!;
    // Lower-cased only when its length is a hop-by-hop name's: most fields are not.
    if (!HOP_BY_HOP_LENGTHS.has(raw.length)) continue;
    const name = raw.toLowerCase();
    if (HOP_BY_HOP.has(name)) drop = addHopByHop(drop, name, fields[i + 1]!);
  }
  return drop;
}

/**
 * `fields` without the hop-by-hop ones and those `Connection` lists (see
 * {@linkcode hopByHopFieldNames}): the same array when there are none to
 * drop, else a copy.
 */
export function endToEndFields(fields: string[]): string[] {
  const drop = hopByHopFieldNames(fields);
  if (drop === null) return fields;
  // Names `Connection` listed may have any length; the fixed ones only theirs.
  let anyLength = false;
  for (const name of drop) if (!HOP_BY_HOP.has(name)) anyLength = true;
  const kept: string[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const raw = fields[i]!;
    if (
      (anyLength || HOP_BY_HOP_LENGTHS.has(raw.length)) && drop.has(raw.toLowerCase())
    ) continue;
    kept.push(raw, fields[i + 1]!);
  }
  return kept;
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
  const drop = hopByHopFieldNames(fields);
  const out: string[] = [];
  let forwarded = clientAddress === null;
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i]!;
    let value = fields[i + 1]!;
    // Most names are neither `Host` (4) nor `X-Forwarded-For` (15): compare lengths first.
    if (name.length === 4 && name.toLowerCase() === "host") continue;
    // RFC 9110 §8.6: repeated or listed values of one length go on as one field, added below.
    if (name.length === 14 && name.toLowerCase() === "content-length") continue;
    if (drop !== null && dropsField(drop, name)) continue;
    if (!forwarded && name.length === 15 && name.toLowerCase() === "x-forwarded-for") {
      value = `${value}, ${clientAddress}`;
      forwarded = true;
    }
    out.push(name, value);
  }
  if (!forwarded) out.push("x-forwarded-for", clientAddress!);
  return new CheckedFields(out, contentLength);
}

/** Whether `drop` (lower-case names) holds the field `name`. */
function dropsField(drop: Set<string>, name: string): boolean {
  return drop.has(name.toLowerCase());
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
