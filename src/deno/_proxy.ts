/**
 * The reverse-proxy handler behind the gateway: forwards a request to the
 * upstream and streams both bodies, as RFC 9110 §7.6.1 asks of an
 * intermediary (hop-by-hop headers stay on their hop).
 *
 * @module
 */

import type { Context } from "hono";
import type { Clock } from "../fairqueuing/clock.ts";
import type { GatewayEnv } from "./gateway_types.ts";

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

/** A copy of `headers` without the hop-by-hop ones, including those `Connection` names. */
export function endToEndHeaders(headers: Headers): Headers {
  const out = new Headers(headers);
  const named = headers.get("connection");
  if (named !== null) {
    for (const name of named.split(",")) {
      const trimmed = name.trim();
      // A malformed token cannot name a header we could hold: skip it.
      if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(trimmed)) out.delete(trimmed);
    }
  }
  for (const name of HOP_BY_HOP_HEADERS) out.delete(name);
  return out;
}

/**
 * The headers to send upstream: end-to-end ones, `X-Forwarded-For`
 * extended with the client's address, and `Accept-Encoding: identity`.
 */
export function upstreamRequestHeaders(headers: Headers, clientAddress: string | null): Headers {
  const out = endToEndHeaders(headers);
  // fetch sets Host from the upstream URL; the client's Host names us.
  out.delete("host");
  if (clientAddress !== null) {
    const prior = out.get("x-forwarded-for");
    out.set("x-forwarded-for", prior === null ? clientAddress : `${prior}, ${clientAddress}`);
  }
  // Deno's fetch decompresses gzip and br bodies but keeps Content-Encoding, which would
  // mislabel what we pass on; only `identity` turns that off, so ask the upstream for it.
  out.set("accept-encoding", "identity");
  return out;
}

/** The address `X-Forwarded-For` names: an IP, `null` for a Unix socket. */
export function clientAddressOf(addr: Deno.Addr | undefined): string | null {
  return addr !== undefined && (addr.transport === "tcp" || addr.transport === "udp")
    ? addr.hostname
    : null;
}

/** Options of {@linkcode reverseProxy}. */
export interface ReverseProxyOptions {
  /** Timers for the upstream deadline. */
  clock: Clock;
  /** Longest wait for the upstream's response headers, queue wait included, in ms. */
  requestTimeoutMs: number;
  /** Told why the upstream could not be reached (the 502 itself says no more). */
  onError?: ((error: unknown, request: Request) => void) | undefined;
}

/**
 * A Hono handler forwarding every request to `upstream` (its path is a
 * prefix of the forwarded one). The client's disconnect aborts the upstream
 * call; an unreachable upstream gives 502, a late one 504.
 */
export function reverseProxy(
  upstream: URL,
  options: ReverseProxyOptions,
): (c: Context<GatewayEnv>) => Promise<Response> {
  const origin = upstream.origin;
  const prefix = upstream.pathname.replace(/\/+$/, "");
  const { clock, requestTimeoutMs, onError } = options;
  return async function proxy(c: Context<GatewayEnv>): Promise<Response> {
    const req = c.req.raw;
    const url = req.url;
    // The raw path and query, still percent-encoded: forwarded byte for byte.
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const target = origin + prefix + (pathStart < 0 ? "/" : url.slice(pathStart).split("#")[0]);
    const controller = new AbortController();
    const abort = () => controller.abort(req.signal.reason);
    if (req.signal.aborted) abort();
    else req.signal.addEventListener("abort", abort, { once: true });
    const waitedMs = c.get("apf")?.waitedMs ?? 0;
    let timedOut = false;
    const timer = clock.setTimer(Math.max(1, requestTimeoutMs - waitedMs), () => {
      timedOut = true;
      controller.abort(new DOMException("upstream timed out", "TimeoutError"));
    });
    try {
      const res = await fetch(target, {
        method: req.method,
        headers: upstreamRequestHeaders(req.headers, clientAddressOf(c.env?.remoteAddr)),
        body: req.body,
        redirect: "manual",
        signal: controller.signal,
        // A streamed request body needs half duplex (Fetch standard).
        ...(req.body !== null && { duplex: "half" }),
      } as RequestInit);
      return new Response(res.body, {
        status: res.status,
        statusText: res.statusText,
        headers: endToEndHeaders(res.headers),
      });
    } catch (e) {
      if (req.signal.aborted) {
        // The client is gone and will not read this; 499 is nginx's "client closed request".
        return new Response(null, { status: 499 });
      }
      onError?.(e, req);
      // Like Go's ReverseProxy: the reason goes to the log, not to the client.
      return c.text(timedOut ? "Gateway Timeout\n" : "Bad Gateway\n", timedOut ? 504 : 502);
    } finally {
      // The deadline covers the wait for response headers only: the body streams freely.
      timer.cancel();
      req.signal.removeEventListener("abort", abort);
    }
  };
}
