/**
 * How the gateway talks to its upstream: an {@linkcode UpstreamClient}, the
 * seam the reverse proxy sends through. Two plug in:
 *
 * - {@linkcode http1UpstreamClient} (the default): HTTP/1.1 on
 *   `Deno.connect` (and TLS over it for `https:`), with a bounded pool of
 *   kept-alive connections per origin. Responses are parsed by
 *   `http-parser-js`; framing follows RFC 9112 §6.3 (a response with both
 *   `Transfer-Encoding` and `Content-Length`, any transfer coding but
 *   `chunked`, an invalid `Content-Length`, a head over 64 KiB, a 101, are
 *   refused: the proxy answers 502); 1xx interim responses are skipped,
 *   trailers dropped, bodies stream both ways with backpressure, by length,
 *   chunked, or until the upstream closes. An idle connection lives 30 s at
 *   most: well inside nginx's 75 s and the 60 s of common load balancers,
 *   so that we, not the upstream, close it, and long enough to keep a
 *   steady load on warm connections. Upstreams that close sooner (Node's
 *   and Apache's servers, after 5 s) are met by honouring `Keep-Alive:
 *   timeout=N` (less a second), and by a read that watches each connection
 *   idle for a second, which drops it as the upstream closes it. At most
 *   256 idle connections are kept per origin; those in use are not
 *   counted, as APF's seats already bound the requests in flight (a queue
 *   here would wait behind the fair one). A request that finds its
 *   kept-alive connection closed by the upstream before any byte of the
 *   response arrived is sent once more on a new one (RFC 9112 §9.3.1), if
 *   the upstream cannot have seen it (its head could not be written) or it
 *   is idempotent with no body to send again (RFC 9110 §9.2.2).
 * - {@linkcode fetchUpstreamClient}: Deno's `fetch`, for upstreams that
 *   speak only HTTP/2, or that the HTTP/1.1 client refuses.
 *
 * @module
 */

import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { type CallCancel, SignalCancel } from "./_call_cancel.ts";
import { checkNumber } from "../_shared/errors.ts";
import type { Origin } from "./_http1_connection.ts";
import {
  exchange,
  type ExchangeRequest,
  NoResponse,
  type UpstreamReply,
} from "./_http1_exchange.ts";
import { InvalidResponse } from "./_http1_parser.ts";
import { mayRetry } from "./_http1_framing.ts";
import { Http1Pool } from "./_http1_pool.ts";
import { type CheckedFields, encodeHead } from "./_http1_request.ts";

export type { UpstreamReply } from "./_http1_exchange.ts";

/** Response bodies that came whole with their head, by response. */
const wholeBodies = new WeakMap<Response, Uint8Array<ArrayBuffer>>();

/**
 * The body of `response` as bytes, when the HTTP/1.1 client had all of it
 * with the head (a copy of what `response.body` gives); else `null`. Such a
 * response is the caller's to change: its headers are not immutable.
 */
export function bodyInHand(response: Response): Uint8Array<ArrayBuffer> | null {
  return wholeBodies.get(response) ?? null;
}

/** What {@linkcode UpstreamClient.fetch} sends. */
export interface UpstreamRequestInit {
  /** The method, as received. */
  method: string;
  /** The header fields to send, as pairs (`Host` and the framing fields are the client's). */
  headers: [string, string][];
  /** The body, streamed as it is read, or `null`. */
  body: ReadableStream<Uint8Array> | null;
  /** Aborts the exchange: before the response head, the call rejects; after, the body fails. */
  signal?: AbortSignal;
}

/** What {@linkcode Http1UpstreamClient.send} also takes: fields the gateway's server read. */
export interface CheckedInit extends Omit<UpstreamRequestInit, "headers"> {
  /** Sent as they are (see {@linkcode CheckedFields}). */
  headers: CheckedFields;
}

/** A client the gateway forwards requests through. */
export interface UpstreamClient {
  /** `"http1"` or `"fetch"`. */
  readonly kind: "http1" | "fetch";
  /**
   * Whether response bodies come decoded (`fetch` decompresses gzip and br
   * but keeps `Content-Encoding`): the proxy then asks the upstream for
   * `Accept-Encoding: identity`.
   */
  readonly decodesContent: boolean;
  /**
   * Whether responses carry their end-to-end fields only (the HTTP/1.1
   * client leaves out the hop-by-hop ones as it reads them); `fetch` keeps
   * them, for the proxy to drop.
   */
  readonly endToEnd: boolean;
  /**
   * Sends a request to `url` (absolute `http:` or `https:`; its path and
   * query go as written) and resolves with the response once its head has
   * arrived. Redirects are returned, never followed.
   *
   * @throws {TypeError} for a request that cannot be sent; rejects with the
   * upstream's failure (unreachable, an invalid response) or the signal's reason.
   */
  fetch(url: string, init: UpstreamRequestInit): Promise<Response>;
  /** Closes every connection and timer it holds (idempotent). */
  close(): Promise<void>;
}

/**
 * The `fetch` client: Deno's own, whatever the upstream speaks (HTTP/2
 * included); keeps nothing of its own to close.
 *
 * @example
 * ```ts
 * import { fetchUpstreamClient } from "./upstream_client.ts";
 * const client = fetchUpstreamClient();
 * await client.close();
 * ```
 */
export function fetchUpstreamClient(): UpstreamClient {
  return {
    kind: "fetch",
    decodesContent: true,
    endToEnd: false,
    fetch: (url, init) =>
      fetch(url, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        redirect: "manual",
        ...(init.signal !== undefined && { signal: init.signal }),
        // A streamed request body needs half duplex (Fetch standard).
        ...(init.body !== null && { duplex: "half" }),
      } as RequestInit),
    close: () => Promise.resolve(),
  };
}

/** Options of {@linkcode http1UpstreamClient}. */
export interface Http1UpstreamClientOptions {
  /** The clock of the idle timeouts (default: the system clock). */
  clock?: Clock;
  /** Most idle connections kept per origin (default 256). */
  maxIdlePerOrigin?: number;
  /** How long a connection may idle before it is closed, in ms (default 30,000). */
  idleTimeoutMs?: number;
  /** Root certificates (PEM) trusted for `https:` upstreams besides the default ones. */
  caCerts?: readonly string[];
}

/** Idle connections kept per origin unless told otherwise. */
export const DEFAULT_UPSTREAM_MAX_IDLE = 256;
/** How long an upstream connection may idle unless told otherwise, in ms. */
export const DEFAULT_UPSTREAM_IDLE_TIMEOUT_MS = 30_000;

/**
 * The pooled HTTP/1.1 client (see the module's documentation for what it
 * supports and refuses).
 *
 * @throws {RangeError} for a bound that is not a positive integer.
 * @example
 * ```ts ignore
 * import { http1UpstreamClient } from "./upstream_client.ts";
 * const client = http1UpstreamClient({ idleTimeoutMs: 10_000 });
 * const res = await client.fetch("http://127.0.0.1:3000/health", {
 *   method: "GET",
 *   headers: [["accept", "text/plain"]],
 *   body: null,
 * });
 * console.log(res.status, await res.text());
 * await client.close();
 * ```
 */
export function http1UpstreamClient(
  options: Http1UpstreamClientOptions = {},
): Http1UpstreamClient {
  return new Http1UpstreamClient(options);
}

/**
 * The pooled HTTP/1.1 client: {@linkcode UpstreamClient.fetch}, and
 * {@linkcode Http1UpstreamClient.send}, which gives the reply as read (no
 * `Response` made of it) to a caller that writes it on a socket itself.
 */
export class Http1UpstreamClient implements UpstreamClient {
  readonly kind = "http1";
  readonly decodesContent = false;
  readonly endToEnd = true;
  #pools = new Map<string, Http1Pool>();
  #clock: Clock;
  #maxIdle: number;
  #idleTimeoutMs: number;
  #caCerts: readonly string[] | undefined;
  #closed = false;

  constructor(options: Http1UpstreamClientOptions) {
    const maxIdle = options.maxIdlePerOrigin ?? DEFAULT_UPSTREAM_MAX_IDLE;
    const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_UPSTREAM_IDLE_TIMEOUT_MS;
    checkNumber(
      maxIdle,
      (n) => Number.isInteger(n) && n >= 0,
      () =>
        `Cannot create the upstream client: maxIdlePerOrigin must be an integer >= 0, got ${maxIdle}`,
    );
    checkNumber(
      idleTimeoutMs,
      (n) => n > 0,
      () => `Cannot create the upstream client: idleTimeoutMs must be > 0, got ${idleTimeoutMs}`,
    );
    this.#clock = options.clock ?? systemClock;
    this.#maxIdle = maxIdle;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#caCerts = options.caCerts;
  }

  async fetch(url: string, init: UpstreamRequestInit): Promise<Response> {
    return responseOf(await this.send(url, init));
  }

  /**
   * Like {@linkcode fetch}, resolving with the reply as read: its status,
   * its end-to-end fields, its body (bytes in hand, or a stream).
   * `cancel`, when given, ends the call early instead of `init.signal`
   * (the gateway's upstream deadline, with no `AbortSignal` made for it).
   */
  async send(
    url: string,
    init: UpstreamRequestInit | CheckedInit,
    cancel?: CallCancel,
  ): Promise<UpstreamReply> {
    const authorityEnd = url.indexOf("/", url.indexOf("//") + 2);
    const end = authorityEnd < 0 ? url.length : authorityEnd;
    const pool = this.#pools.get(url.slice(0, end)) ?? this.#poolFor(url.slice(0, end));
    return await this.#sendOn(pool, authorityEnd < 0 ? "/" : url.slice(authorityEnd), init, cancel);
  }

  /**
   * `base` (an absolute `http:` or `https:` URL, its path a prefix, trailing
   * slashes dropped) resolved
   * once, for {@linkcode sendTo}: the gateway sends every request to the same
   * upstream, and needs no URL made and cut again per request.
   *
   * @throws {TypeError} for a URL that is no `http:` or `https:` one, or a closed client.
   */
  base(base: string): UpstreamBase {
    const authorityEnd = base.indexOf("/", base.indexOf("//") + 2);
    const end = authorityEnd < 0 ? base.length : authorityEnd;
    const key = base.slice(0, end);
    const path = base.slice(end).replace(/\/+$/, "");
    return new UpstreamBase(this.#pools.get(key) ?? this.#poolFor(key), path);
  }

  /**
   * Like {@linkcode send}, to `base`'s origin, `target` (a path and query,
   * as received) after its path.
   */
  sendTo(
    base: UpstreamBase,
    target: string,
    init: UpstreamRequestInit | CheckedInit,
    cancel?: CallCancel,
  ): Promise<UpstreamReply> {
    return this.#sendOn(base.pool, base.path === "" ? target : base.path + target, init, cancel);
  }

  /**
   * Sends on a kept-alive connection of `pool`, else a new one. Not itself
   * async (an async function awaited costs about 1,500 instructions on
   * Deno): the reply is the exchange's promise, with a retry attached.
   */
  #sendOn(
    pool: Http1Pool,
    path: string,
    init: UpstreamRequestInit | CheckedInit,
    cancel: CallCancel | undefined,
  ): Promise<UpstreamReply> {
    let request: ExchangeRequest;
    try {
      cancel ??= init.signal === undefined ? undefined : new SignalCancel(init.signal);
      const hash = path.indexOf("#");
      const target = hash < 0 ? path : path.slice(0, hash);
      const { method, body } = init;
      request = {
        method,
        head: encodeHead(method, target, pool.origin.host, init.headers, body !== null),
        body,
        cancel,
      };
    } catch (e) {
      return Promise.reject(e);
    }
    const kept = pool.take();
    if (kept === null) return dialAndSend(pool, request);
    return exchange(kept, request, pool.done).catch((e) => {
      // RFC 9112 §9.3.1: a kept-alive connection the upstream closed while it idled.
      if (
        !(e instanceof NoResponse) || request.cancel?.aborted === true ||
        !mayRetry(request.method, e.written, request.body !== null)
      ) throw e;
      return dialAndSend(pool, request);
    });
  }

  /** Closes every connection and timer it holds (idempotent). */
  async close(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  #poolFor(key: string): Http1Pool {
    if (this.#closed) throw new TypeError(`Cannot send the request: the upstream client is closed`);
    let url: URL | null = null;
    try {
      url = new URL(key);
    } catch {
      // reported below
    }
    if (
      url === null || (url.protocol !== "http:" && url.protocol !== "https:") ||
      /[?#@\s]/.test(key.slice(key.indexOf("//") + 2))
    ) {
      throw new TypeError(
        `Cannot send the request: not an http: or https: origin: ${JSON.stringify(key)}`,
      );
    }
    const tls = url.protocol === "https:";
    const origin: Origin = {
      key,
      host: url.host,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port === "" ? (tls ? 443 : 80) : Number(url.port),
      tls,
      caCerts: this.#caCerts,
    };
    const pool = new Http1Pool(origin, {
      clock: this.#clock,
      maxIdle: this.#maxIdle,
      idleTimeoutMs: this.#idleTimeoutMs,
    });
    this.#pools.set(key, pool);
    return pool;
  }
}

/** Sends `request` on a new connection of `pool`. */
async function dialAndSend(pool: Http1Pool, request: ExchangeRequest): Promise<UpstreamReply> {
  return await exchange(await pool.dial(request.cancel?.signal), request, pool.done);
}

/** An upstream's origin and path prefix, resolved by {@linkcode Http1UpstreamClient.base}. */
export class UpstreamBase {
  /** @internal */
  readonly pool: Http1Pool;
  /** The path prefix (without a trailing `/`), or `""`. */
  readonly path: string;
  /** @internal */
  constructor(pool: Http1Pool, path: string) {
    this.pool = pool;
    this.path = path;
  }
}

/** `reply` as a `Response` (a body in hand is marked for {@linkcode bodyInHand}). */
function responseOf(reply: UpstreamReply): Response {
  let res: Response;
  try {
    // Fields appended one by one, repeated ones (several Set-Cookie) apart: on Deno, fields
    // given to the constructor cost twice as much (it prepares them for Deno.serve).
    res = new Response(reply.body, { status: reply.status, statusText: reply.statusText });
    const headers = res.headers;
    const fields = reply.fields;
    for (let i = 0; i < fields.length; i += 2) headers.append(fields[i]!, fields[i + 1]!);
  } catch (e) {
    if (reply.body instanceof ReadableStream) reply.body.cancel().catch(() => {});
    throw new InvalidResponse(`a status or field the Fetch API refuses: ${(e as Error).message}`);
  }
  if (reply.body instanceof Uint8Array) wholeBodies.set(res, reply.body);
  return res;
}
