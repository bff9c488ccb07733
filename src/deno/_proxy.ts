/**
 * The reverse-proxy handler behind the gateway: forwards a request to the
 * upstream through an upstream client (`upstream_client.ts`) and streams
 * both bodies, as RFC 9110 §7.6.1 asks of an intermediary (hop-by-hop
 * headers stay on their hop).
 *
 * @module
 */

import type { Context } from "hono";
import type { Clock } from "../fairqueuing/clock.ts";
import { upstreamBody, UpstreamBodyFailed } from "./_upstream_body.ts";
import { WatchedBody } from "./_client_body.ts";
import { outcomeOfStatus } from "../coordinator/adaptive_limit.ts";
import { RELEASED_AS } from "../coordinator/release_outcome.ts";
import { Deadlines } from "../fairqueuing/deadlines.ts";
import { UpstreamDeadline } from "./_upstream_deadline.ts";
import { TOO_MANY_REQUESTS_BODY } from "../hono/admission.ts";
import { clientAddressOf, dropHopByHop, upstreamRequestPairs } from "./_forwarded_headers.ts";
import type { GatewayEnv } from "./gateway_types.ts";
import { bodyInHand, type UpstreamClient } from "./upstream_client.ts";

/** Options of {@linkcode reverseProxy}. */
export interface ReverseProxyOptions {
  /** Timers for the upstream deadline. */
  clock: Clock;
  /** Longest wait for the upstream's response headers, queue wait included, in ms. */
  requestTimeoutMs: number;
  /** Told why the upstream could not be reached (the 502 itself says no more). */
  onError?: ((error: unknown, request: Request) => void) | undefined;
  /** What requests go through. */
  client: UpstreamClient;
  /**
   * The set the upstream deadlines go in (default: one of its own, whose
   * timer stops whenever nothing is pending). The gateway passes one that
   * keeps its timer, and closes it when it shuts down.
   */
  deadlines?: Deadlines | undefined;
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
  const { clock, requestTimeoutMs, onError, client } = options;
  const deadlines = options.deadlines ?? new Deadlines(clock);
  return async function proxy(c: Context<GatewayEnv>): Promise<Response> {
    const req = c.req.raw;
    const url = req.url;
    // The raw path and query, still percent-encoded: forwarded byte for byte.
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const target = origin + prefix + (pathStart < 0 ? "/" : url.slice(pathStart).split("#")[0]);
    const state = c.get("apf");
    const waitedMs = state?.waitedMs ?? 0;
    const deadline = new UpstreamDeadline(
      deadlines,
      clock.now() + Math.max(1, requestTimeoutMs - waitedMs),
    );
    if (state?.seat.stillHeld?.() === false) {
      // Admitted on a budget lease that lapsed before it was sent (docs/sharing-seats.md): the
      // seat goes back as initialized (no sample of the upstream's latency), the request is not
      // sent.
      deadline.cancel();
      state.seat.initialized();
      return c.text(TOO_MANY_REQUESTS_BODY, 429, { "Retry-After": "1" });
    }
    let res: Response;
    // A chunked body is watched, so that its failure (its framing is the client's to get right)
    // is told apart from the upstream's; it goes on chunked either way. A body by length goes
    // on as it is, which keeps its length (fetch sends a body of its own making chunked): it can
    // only break off, which aborts the request's signal.
    const sent = req.body === null || req.headers.has("content-length")
      ? null
      : new WatchedBody(req.body);
    try {
      res = await client.fetch(target, {
        method: req.method,
        headers: upstreamRequestPairs(
          req.headers,
          clientAddressOf(c.env?.remoteAddr),
          client.decodesContent,
        ),
        body: sent === null ? req.body : sent.stream,
        signal: deadline.signal,
      });
    } catch (e) {
      deadline.cancel();
      if (req.signal.aborted) {
        // The client is gone and will not read this; 499 is nginx's "client closed request".
        return new Response(null, { status: 499 });
      }
      if (sent?.failed === true) {
        // The client's body broke off or was malformed: its error, not the upstream's (RFC
        // 9110 §15.5.1). Deno.serve closes the connection after it by itself.
        return c.text("Bad Request\n", 400);
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
    if (bodyInHand(res) !== null) {
      // All of it came with the head, end-to-end fields only, and the response is ours to change:
      // pass it on as it is (not reading `res.body`, which would turn the bytes into a stream
      // Deno.serve must pump).
      return res;
    }
    if (
      res.body !== null && res.headers.has("transfer-encoding") && res.headers.has("content-length")
    ) {
      // RFC 9112 §6.3 item 3: "ought to be handled as an error". `fetch` frames such a body by
      // its chunked coding but keeps both fields: passing Content-Length on would cut it short.
      // (The HTTP/1.1 client refuses it itself.)
      deadline.cancel();
      res.body?.cancel().catch(() => {});
      onError?.(new Error("the upstream sent both Transfer-Encoding and Content-Length"), req);
      return c.text("Bad Gateway\n", 502);
    }
    let body;
    try {
      body = await upstreamBody(res.body, contentLengthOf(res.headers), deadline, {
        seat: req.method === "HEAD" ? undefined : state?.seat,
        // A body that releases the seat states how it ended (one options object per outcome).
        releasedAs: RELEASED_AS[outcomeOfStatus(res.status)],
        onFailure: onError === undefined ? undefined : (e) => onError(e, req),
      });
    } catch (e) {
      if (!(e instanceof UpstreamBodyFailed)) throw e;
      // Failed before any of it went out (reported): a clean 502; apf() releases the seat.
      deadline.cancel();
      return c.text("Bad Gateway\n", 502);
    }
    // A Response made with another's Headers copies them as they are (no check per header).
    const out = new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
    if (!client.endToEnd) dropHopByHop(res.headers, out.headers);
    return out;
  };
}

/** The `Content-Length` of `headers` as a number, `null` when absent or not one number. */
function contentLengthOf(headers: Headers): number | null {
  const value = headers.get("content-length");
  if (value === null || !/^\d{1,15}$/.test(value)) return null;
  return Number(value);
}
