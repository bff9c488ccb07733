/**
 * The client's opening handshake (RFC 6455 §4.1): the upgrade request with
 * a fresh random key, and the checks of the server's answer. Internal to
 * `noDelayWebSocket`.
 *
 * @module
 */

/** §1.3: the GUID the server appends to the key before hashing. */
const WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** Longest response head read before giving up (bytes). */
export const MAX_HEAD_BYTES = 16 * 1024;

/** The handshake failed: the server is not a WebSocket server, or not a correct one. */
export class HandshakeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HandshakeError";
  }
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** §4.1: a base64 nonce of 16 random bytes. */
export function randomKey(): string {
  return base64(crypto.getRandomValues(new Uint8Array(16)));
}

/** The `Sec-WebSocket-Accept` a server must answer to `key`: base64(SHA-1(key + GUID)). */
export async function acceptFor(key: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-1",
    new TextEncoder().encode(key + WEBSOCKET_GUID),
  );
  return base64(new Uint8Array(digest));
}

/** The upgrade request for `url` (`ws:` or `wss:`) with `key`. */
export function upgradeRequest(url: URL, key: string): Uint8Array {
  const target = (url.pathname || "/") + url.search;
  return new TextEncoder().encode(
    `GET ${target} HTTP/1.1\r\n` +
      `Host: ${url.host}\r\n` +
      "Upgrade: websocket\r\n" +
      "Connection: Upgrade\r\n" +
      `Sec-WebSocket-Key: ${key}\r\n` +
      "Sec-WebSocket-Version: 13\r\n" +
      "\r\n",
  );
}

/**
 * Checks the server's response head (status line and headers, up to the
 * blank line) against §4.1's list: status 101, `Upgrade: websocket`,
 * `Connection: Upgrade`, the expected `Sec-WebSocket-Accept`, and no
 * extension or subprotocol, since none was offered.
 *
 * @throws {HandshakeError} naming the first check that failed.
 */
export function checkUpgradeResponse(head: string, expectedAccept: string): void {
  const lines = head.split("\r\n");
  const status = /^HTTP\/1\.1 (\d{3})(?: |$)/.exec(lines[0] ?? "");
  if (status === null) {
    throw new HandshakeError(`not an HTTP/1.1 response: ${JSON.stringify(lines[0])}`);
  }
  if (status[1] !== "101") throw new HandshakeError(`expected status 101, got ${lines[0]}`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new HandshakeError(`malformed header line ${JSON.stringify(line)}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    // Repeated headers combine as a list (RFC 9110 §5.3).
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  if (headers.get("upgrade")?.toLowerCase() !== "websocket") {
    throw new HandshakeError(`expected Upgrade: websocket, got ${headers.get("upgrade")}`);
  }
  const connection = (headers.get("connection") ?? "").toLowerCase().split(",").map((t) =>
    t.trim()
  );
  if (!connection.includes("upgrade")) {
    throw new HandshakeError(`expected Connection: Upgrade, got ${headers.get("connection")}`);
  }
  if (headers.get("sec-websocket-accept") !== expectedAccept) {
    throw new HandshakeError(
      `Sec-WebSocket-Accept ${headers.get("sec-websocket-accept")} does not match the key`,
    );
  }
  if (headers.has("sec-websocket-extensions")) {
    throw new HandshakeError("the server chose an extension that was not offered");
  }
  if (headers.has("sec-websocket-protocol")) {
    throw new HandshakeError("the server chose a subprotocol that was not offered");
  }
}
