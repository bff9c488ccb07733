/**
 * A Redis URL, as `redis-cli -u` and the clients read it:
 * `redis://[[username]:password@]host[:port][/db]`, `rediss://` for TLS.
 * What names the server in a message is its address without the
 * credentials: a password never reaches a log.
 *
 * @module
 */

/** Where a Redis server is, and how to log in. */
export interface RedisAddress {
  /** `rediss:` */
  tls: boolean;
  /** The host name or IP address (an IPv6 address without its brackets). */
  host: string;
  /** The TCP port (default 6379). */
  port: number;
  /** The ACL user, when the URL names one. */
  username?: string;
  /** The password, when the URL has one. */
  password?: string;
  /** The logical database (default 0). */
  database: number;
  /** `redis://host:port` or `rediss://host:port`: the server, for messages. */
  where: string;
}

const DEFAULT_PORT = 6379;

/**
 * `url` for a message about it: everything up to its last `@` hidden (a
 * password with an unescaped `@` or `/` in it included).
 */
function redacted(url: string): string {
  const at = url.lastIndexOf("@");
  if (at === -1) return JSON.stringify(url);
  const start = url.indexOf("://");
  return JSON.stringify(`${start === -1 ? "" : url.slice(0, start + 3)}***${url.slice(at)}`);
}

function decode(part: string, what: string, url: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new TypeError(`Cannot read the Redis URL ${redacted(url)}: its ${what} is badly encoded`);
  }
}

/**
 * Reads a `redis://` or `rediss://` URL.
 *
 * @throws {TypeError} for anything else, naming the URL without its credentials.
 */
export function parseRedisUrl(url: string): RedisAddress {
  if (typeof url !== "string") {
    throw new TypeError(`Cannot read the Redis URL: expected a string, got ${typeof url}`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`Cannot read the Redis URL ${redacted(url)}: it is not a URL`);
  }
  const bad = (why: string) => new TypeError(`Cannot read the Redis URL ${redacted(url)}: ${why}`);
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw bad("it must start with redis:// or rediss://");
  }
  const tls = parsed.protocol === "rediss:";
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") throw bad("it names no host");
  const port = parsed.port === "" ? DEFAULT_PORT : Number(parsed.port);
  if (!(port >= 1 && port <= 65_535)) throw bad(`the port must be 1 to 65535`);
  const path = parsed.pathname;
  if (!/^(\/\d*)?$/.test(path)) throw bad("the path must be the database number, as in /0");
  const database = path.length > 1 ? Number(path.slice(1)) : 0;
  if (!Number.isSafeInteger(database)) throw bad("the database number is too large");
  if (parsed.search !== "" || parsed.hash !== "") {
    throw bad("it must have no query or fragment");
  }
  const address: RedisAddress = {
    tls,
    host,
    port,
    database,
    where: `${parsed.protocol}//${parsed.hostname}:${port}`,
  };
  if (parsed.username !== "") address.username = decode(parsed.username, "user name", url);
  if (parsed.password !== "") address.password = decode(parsed.password, "password", url);
  return address;
}
