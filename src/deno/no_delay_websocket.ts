/**
 * `noDelayWebSocket()`: the remote coordinator's transport on Deno, a
 * WebSocket client on `Deno.connect` with `TCP_NODELAY` set.
 *
 * Why: Deno's `WebSocket` client leaves Nagle's algorithm on. A client of
 * the coordinator protocol often writes a frame the server does not answer
 * (releases only) and then, before its ACK came back, another one (the next
 * acquire): Nagle holds the second until the server's delayed ACK, about
 * 40 ms on Linux. Measured with `bench/coordinator_latency.ts`: every
 * acquire then takes about 41 ms instead of 0.3 to 0.9 ms (`bench/RESULTS.md`).
 *
 * @module
 */

import type { CoordinatorSocket } from "../remote/client_types.ts";
import { systemClock } from "../fairqueuing/clock.ts";
import { dialNoDelay, WebSocketClient } from "./_websocket_client.ts";
import { checkNumber } from "../_shared/errors.ts";

/** Options of {@linkcode noDelayWebSocket}. */
export interface NoDelayWebSocketOptions {
  /**
   * Root certificates (PEM) trusted for `wss:` in addition to the system's,
   * for a coordinator with a private CA (default: none).
   */
  caCerts?: string[];
  /**
   * Largest message accepted from the server, in bytes (default 4 MiB, room
   * for the protocol's largest frame of 1,048,576 characters in UTF-8). A
   * larger one fails the connection with close code 1009.
   */
  maxMessageBytes?: number;
  /**
   * How long a closing handshake may take before the connection is cut, in
   * ms (default 1,000).
   */
  closeTimeoutMs?: number;
}

/** Default of {@linkcode NoDelayWebSocketOptions.maxMessageBytes}. */
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Returns a WebSocket factory for `connectCoordinator`'s `webSocket` option
 * whose connections disable Nagle's algorithm (`TCP_NODELAY`), for `ws:` and
 * `wss:` URLs alike: for `wss:` the option is set on the TCP connection and
 * TLS is started over it (`Deno.startTls`), since a `Deno.TlsConn` has no
 * `setNoDelay`.
 *
 * The connections speak RFC 6455 as a client: a random key checked against
 * the server's `Sec-WebSocket-Accept`, every frame masked with a fresh
 * random key, fragmented messages reassembled, pings answered, the closing
 * handshake in both directions. A server that breaks the protocol (masked
 * frames, reserved bits, unknown opcodes, invalid UTF-8, a message over
 * `maxMessageBytes`) gets a close frame with 1002, 1007 or 1009 and the
 * connection is cut. No extensions (no compression) and no subprotocols.
 * Needs `--allow-net` for the coordinator's host.
 *
 * @example
 * ```ts ignore
 * import { connectCoordinator } from "@apf/edge";
 * import { noDelayWebSocket } from "@apf/edge/deno";
 * const coordinator = connectCoordinator("ws://127.0.0.1:7070", {
 *   webSocket: noDelayWebSocket(),
 * });
 * ```
 *
 * @param options Trusted CA certificates, the message size limit, the close timeout.
 * @returns A function opening one connection to a `ws:` or `wss:` URL per call.
 * @throws {RangeError} when `maxMessageBytes` or `closeTimeoutMs` is not positive;
 * {TypeError} when one is not a number, or `caCerts` is not an array of strings.
 */
export function noDelayWebSocket(
  options: NoDelayWebSocketOptions = {},
): (url: string) => CoordinatorSocket {
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  checkNumber(
    maxMessageBytes,
    (n) => Number.isSafeInteger(n) && n > 0,
    () =>
      `Cannot create a WebSocket factory: maxMessageBytes must be an integer > 0, got ${maxMessageBytes}`,
  );
  const closeTimeoutMs = options.closeTimeoutMs ?? 1_000;
  checkNumber(
    closeTimeoutMs,
    (ms) => ms > 0 && ms < Infinity,
    () =>
      `Cannot create a WebSocket factory: closeTimeoutMs must be a number > 0, got ${closeTimeoutMs}`,
  );
  const caCerts = options.caCerts;
  if (caCerts !== undefined && !(Array.isArray(caCerts) && caCerts.every(isString))) {
    throw new TypeError(
      `Cannot create a WebSocket factory: caCerts must be an array of PEM strings, got ${
        String(caCerts)
      }`,
    );
  }
  const settings = {
    dial: (url: URL, signal: AbortSignal) => dialNoDelay(url, signal, caCerts),
    maxMessageBytes,
    closeTimeoutMs,
    clock: systemClock,
  };
  return function openNoDelayWebSocket(url: string): CoordinatorSocket {
    return new WebSocketClient(parseUrl(url), settings);
  };
}

function isString(value: unknown): value is string {
  return typeof value === "string";
}

/** The URL, as the `WebSocket` constructor takes it: `ws:` or `wss:`, no fragment. */
function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SyntaxError(`Cannot open a WebSocket: invalid URL ${url}`);
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:") {
    throw new SyntaxError(`Cannot open a WebSocket: expected a ws: or wss: URL, got ${url}`);
  }
  if (parsed.hash !== "") {
    throw new SyntaxError(`Cannot open a WebSocket: a URL with a fragment, got ${url}`);
  }
  return parsed;
}
