/**
 * The reverse-proxy handler behind the gateway: forwards a request to the
 * upstream and streams both bodies, as RFC 9110 §7.6.1 asks of an
 * intermediary (hop-by-hop headers stay on their hop).
 *
 * @module
 */

import type { Context } from "hono";
import type { Clock } from "../fairqueuing/clock.ts";
import { type BodyDeadline, upstreamBody } from "./_upstream_body.ts";
import { type Deadline, Deadlines } from "./_deadlines.ts";
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

/** Hop-by-hop names, for lookups. */
const HOP_BY_HOP = new Set(HOP_BY_HOP_HEADERS);

/** A header name, as `Connection` may list one (a token of RFC 9110 §5.6.2). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The names among `entries` (lower case, as a `Headers` iterates) that stay
 * on their hop: the hop-by-hop ones and those `Connection` names, or `null`
 * when there are none.
 */
function hopByHopNames(entries: readonly [string, string][]): Set<string> | null {
  let found: Set<string> | null = null;
  for (const [name, value] of entries) {
    if (!HOP_BY_HOP.has(name)) continue;
    (found ??= new Set()).add(name);
    if (name !== "connection") continue;
    for (const listed of value.split(",")) {
      const trimmed = listed.trim();
      // A malformed token cannot name a header we could hold: skip it.
      if (TOKEN.test(trimmed)) found.add(trimmed.toLowerCase());
    }
  }
  return found;
}

/**
 * Copies the end-to-end headers of `from` into `into` (appending), leaving
 * out the hop-by-hop ones, those `Connection` names, and `skip` (lower case).
 */
function copyEndToEnd(from: Headers, into: Headers, skip?: string): void {
  // Lower-case names, the values of a name joined (Set-Cookie apart), as new Headers(from) has.
  const entries = [...from];
  const drop = hopByHopNames(entries);
  for (const [name, value] of entries) {
    if (name !== skip && (drop === null || !drop.has(name))) into.append(name, value);
  }
}

/** A copy of `headers` without the hop-by-hop ones, including those `Connection` names. */
export function endToEndHeaders(headers: Headers): Headers {
  const out = new Headers();
  copyEndToEnd(headers, out);
  return out;
}

/**
 * Removes from `headers` (a copy of `original`'s) the hop-by-hop ones and
 * those `Connection` names, reading which to remove on `original`.
 */
function dropHopByHop(original: Headers, headers: Headers): void {
  const drop = hopByHopNames([...original]);
  if (drop !== null) { for (const name of drop) headers.delete(name); }
}

/**
 * The headers to send upstream: end-to-end ones, `X-Forwarded-For`
 * extended with the client's address, and `Accept-Encoding: identity`.
 */
export function upstreamRequestHeaders(headers: Headers, clientAddress: string | null): Headers {
  const out = new Headers();
  setUpstreamRequestHeaders(headers, clientAddress, out);
  return out;
}

/** {@linkcode upstreamRequestHeaders}, appended to `out` (empty). */
function setUpstreamRequestHeaders(
  headers: Headers,
  clientAddress: string | null,
  out: Headers,
): void {
  // fetch sets Host from the upstream URL; the client's Host names us.
  copyEndToEnd(headers, out, "host");
  if (clientAddress !== null) {
    const prior = out.get("x-forwarded-for");
    out.set("x-forwarded-for", prior === null ? clientAddress : `${prior}, ${clientAddress}`);
  }
  // Deno's fetch decompresses gzip and br bodies but keeps Content-Encoding, which would
  // mislabel what we pass on; only `identity` turns that off, so ask the upstream for it.
  out.set("accept-encoding", "identity");
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
  const deadlines = new Deadlines(clock);
  return async function proxy(c: Context<GatewayEnv>): Promise<Response> {
    const req = c.req.raw;
    const url = req.url;
    // The raw path and query, still percent-encoded: forwarded byte for byte.
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const target = origin + prefix + (pathStart < 0 ? "/" : url.slice(pathStart).split("#")[0]);
    const controller = new AbortController();
    const state = c.get("apf");
    const waitedMs = state?.waitedMs ?? 0;
    const deadline = new UpstreamDeadline(
      deadlines,
      clock.now() + Math.max(1, requestTimeoutMs - waitedMs),
      controller,
    );
    let res: Response;
    try {
      const body = req.body;
      const upstreamRequest = new Request(target, {
        method: req.method,
        body,
        redirect: "manual",
        signal: controller.signal,
        // A streamed request body needs half duplex (Fetch standard).
        ...(body !== null && { duplex: "half" }),
      } as RequestInit);
      // Appended to the request's own headers: headers given to Request or fetch() are
      // converted and checked once more, header by header (several µs a request on Deno).
      setUpstreamRequestHeaders(
        req.headers,
        clientAddressOf(c.env?.remoteAddr),
        upstreamRequest.headers,
      );
      res = await fetch(upstreamRequest);
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
    const body = await upstreamBody(
      res.body,
      contentLengthOf(res.headers),
      deadline,
      req.method === "HEAD" ? undefined : state?.seat,
    );
    // A Response made with another's Headers copies them as they are (no check per header).
    const out = new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
    dropHopByHop(res.headers, out.headers);
    return out;
  };
}

/**
 * The upstream call's deadline: aborts it when passed. It runs from the
 * dispatch until the response headers arrive ({@linkcode pause}), and again
 * while the body is read to its end for a client that left
 * ({@linkcode resume}).
 */
class UpstreamDeadline implements Deadline, BodyDeadline {
  readonly endsAt: number;
  #deadlines: Deadlines;
  #controller: AbortController;
  #passed = false;
  #done: (() => void) | null = null;

  constructor(deadlines: Deadlines, endsAt: number, controller: AbortController) {
    this.endsAt = endsAt;
    this.#deadlines = deadlines;
    this.#controller = controller;
    deadlines.add(this);
  }

  /** Whether it passed (and aborted the call). */
  get passed(): boolean {
    return this.#passed;
  }

  fire(): void {
    this.#passed = true;
    this.#controller.abort(new DOMException("upstream timed out", "TimeoutError"));
    this.#done?.();
  }

  /** Stops watching; {@linkcode resume} starts again for what was left. */
  pause(): void {
    this.#deadlines.remove(this);
  }

  /** Watches again; resolves once the deadline passes or is cancelled. */
  resume(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#done = resolve;
      if (this.#passed) resolve();
      else this.#deadlines.add(this);
    });
  }

  cancel(): void {
    this.#deadlines.remove(this);
    this.#done?.();
  }
}

/** The `Content-Length` of `headers` as a number, `null` when absent or not one number. */
function contentLengthOf(headers: Headers): number | null {
  const value = headers.get("content-length");
  if (value === null || !/^\d{1,15}$/.test(value)) return null;
  return Number(value);
}
