/**
 * Parsing the command line's listen addresses and upstream URLs.
 *
 * @module
 */

/** A parsed `host:port`. */
export interface HostPort {
  /** Host name or IP address (IPv6 without brackets). */
  hostname: string;
  /** TCP port, 0 to let the system choose. */
  port: number;
}

/**
 * Parses `host:port`, `[ipv6]:port` or `:port` (every interface, as in Go);
 * `undefined` when it is none of them.
 */
export function parseHostPort(text: string): HostPort | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]/]*)):(\d{1,5})$/.exec(text);
  if (m === null) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { hostname: m[1] ?? (m[2] === "" ? "0.0.0.0" : m[2]!), port };
}

/**
 * The address option `--<name>`'s last value: its `fallback` when absent, or
 * the usage message to print when it is not `host:port`.
 */
export function addressOption(
  text: string | undefined,
  name: string,
  fallback: HostPort | null,
): HostPort | null | string {
  if (text === undefined) return fallback;
  return parseHostPort(text) ??
    `--${name} must be host:port (port 0..65535), got ${JSON.stringify(text)}`;
}

/**
 * A listener's error with the option names of the library (`listen`,
 * `adminListen`) turned into the flags they came from.
 */
export function withFlagNames(message: string): string {
  return message.replace("(adminListen)", "(--admin-listen)").replace("(listen)", "(--listen)");
}

/** `http://host:port` for printing where a listener is (IPv6 in brackets). */
export function httpUrlOf(addr: HostPort): string {
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  return `http://${host}:${addr.port}`;
}

/** An `http:` or `https:` URL without credentials, query or fragment; else `undefined`. */
export function parseUpstream(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const ok = (url.protocol === "http:" || url.protocol === "https:") && url.search === "" &&
    url.hash === "" && url.username === "" && url.password === "" && !text.includes("?");
  return ok ? url : undefined;
}
