/**
 * The reverse-proxy handler behind the gateway: forwards a request to the
 * upstream and streams both bodies, as RFC 9110 §7.6.1 asks of an
 * intermediary (hop-by-hop headers stay on their hop).
 *
 * @module
 */

import type { Context } from "hono";
import type { Clock, Timer } from "../fairqueuing/clock.ts";
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
 * prefix of the forwarded one). An unreachable upstream gives 502, a late
 * one 504.
 *
 * The seat follows the upstream, not the client (`docs/semantics.md` §11.2): a client that
 * goes away does not abort the upstream call, and a response body the
 * client no longer reads is read to its end, so that `apf()` gives the seat
 * back only once the upstream has finished the request, or its deadline
 * (the request timeout, counted from the dispatch) has passed.
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
    const waitedMs = c.get("apf")?.waitedMs ?? 0;
    const deadline = upstreamDeadline(clock, Math.max(1, requestTimeoutMs - waitedMs), controller);
    let res: Response;
    try {
      res = await fetch(target, {
        method: req.method,
        headers: upstreamRequestHeaders(req.headers, clientAddressOf(c.env?.remoteAddr)),
        body: req.body,
        redirect: "manual",
        signal: controller.signal,
        // A streamed request body needs half duplex (Fetch standard).
        ...(req.body !== null && { duplex: "half" }),
      } as RequestInit);
    } catch (e) {
      deadline.cancel();
      if (req.signal.aborted) {
        // The client is gone and will not read this; 499 is nginx's "client closed request".
        return new Response(null, { status: 499 });
      }
      onError?.(e, req);
      // Like Go's ReverseProxy: the reason goes to the log, not to the client.
      return c.text(
        deadline.passed ? "Gateway Timeout\n" : "Bad Gateway\n",
        deadline.passed ? 504 : 502,
      );
    }
    // The deadline covers the wait for response headers; the body streams freely, unless the
    // client goes away: then it bounds how long the body is read to its end.
    deadline.pause();
    return new Response(drainOnCancel(res.body, deadline), {
      status: res.status,
      statusText: res.statusText,
      headers: endToEndHeaders(res.headers),
    });
  };
}

/** The upstream call's deadline: aborts it when passed. */
interface UpstreamDeadline {
  /** Whether it passed (and aborted the call). */
  readonly passed: boolean;
  /** Stops the timer; {@linkcode resume} starts it again for what was left. */
  pause(): void;
  /** Starts the timer again; resolves once the deadline passes or is cancelled. */
  resume(): Promise<void>;
  cancel(): void;
}

function upstreamDeadline(
  clock: Clock,
  timeoutMs: number,
  controller: AbortController,
): UpstreamDeadline {
  const endsAt = clock.now() + timeoutMs;
  let passed = false;
  let done: (() => void) | null = null;
  const fire = () => {
    passed = true;
    controller.abort(new DOMException("upstream timed out", "TimeoutError"));
    done?.();
  };
  let timer: Timer | null = clock.setTimer(timeoutMs, fire);
  return {
    get passed() {
      return passed;
    },
    pause() {
      timer?.cancel();
      timer = null;
    },
    resume() {
      return new Promise<void>((resolve) => {
        done = resolve;
        const left = endsAt - clock.now();
        if (left <= 0) fire();
        else timer = clock.setTimer(left, fire);
      });
    },
    cancel() {
      timer?.cancel();
      timer = null;
      done?.();
    },
  };
}

/**
 * `body` passed through; when the client cancels it, the rest is read and
 * dropped until it ends or the deadline passes, and only then does the
 * cancel complete (releasing the seat, see `apf()`).
 */
function drainOnCancel(
  body: ReadableStream<Uint8Array> | null,
  deadline: UpstreamDeadline,
): ReadableStream<Uint8Array> | null {
  if (body === null) return null;
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      const timedOut = deadline.resume().then(() => reader.cancel());
      try {
        while (!(await reader.read()).done) {
          // Dropped: the client is gone.
        }
      } catch {
        // The upstream failed or the deadline aborted it: either way it is over.
      } finally {
        deadline.cancel();
        await timedOut.catch(() => {});
      }
    },
  });
}
