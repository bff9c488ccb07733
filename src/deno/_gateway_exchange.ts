/**
 * What the gateway does with a request on its own HTTP/1.1 server
 * (`_gateway_server.ts`): `apf()`'s admission (the middleware's own,
 * `src/hono/admission.ts`), then the upstream call through the pooled
 * HTTP/1.1 client, whose reply is passed on as read: no `Request`,
 * `Headers` or `Response` made for it. The same contract as the proxy on
 * `Deno.serve` (`_proxy.ts`, `docs/semantics.md` §11.2): the seat follows
 * the upstream, not the client; 502 for an unreachable upstream or a reply
 * that cannot be passed on, 504 for a late one; the APF headers and
 * `Server-Timing: apf;dur=` on every admitted response; a 429 with
 * `Retry-After` for a rejected one.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";
import { Deadlines } from "../fairqueuing/deadlines.ts";
import {
  type Admission,
  type AdmissionResult,
  FLOW_SCHEMA_UID_HEADER,
  PRIORITY_LEVEL_UID_HEADER,
  Refusal,
  TOO_MANY_REQUESTS_BODY,
  tooManyRequestsFields,
} from "../hono/admission.ts";
import type { ApfState } from "../hono/types.ts";
import type { Classification } from "../classify/classifier.ts";
import { FieldHeaders } from "./_field_headers.ts";
import { clientAddressOf, upstreamFields } from "./_forwarded_headers.ts";
import {
  type GatewayHandler,
  type GatewayReply,
  type GatewayRequest,
  textReply,
} from "./_gateway_server.ts";
import { upstreamBody, UpstreamBodyFailed } from "./_upstream_body.ts";
import { SeatLapsed, UpstreamDeadline } from "./_upstream_deadline.ts";
import { outcomeOfStatus } from "../coordinator/adaptive_limit.ts";
import { RELEASED_AS } from "../coordinator/release_outcome.ts";
import type { Http1UpstreamClient, UpstreamReply } from "./upstream_client.ts";

/** Options of {@linkcode gatewayExchange}. */
export interface GatewayExchangeOptions {
  /** Where requests go (its path is a prefix of the forwarded one). */
  upstream: URL;
  /** The `apf()` middleware's admission. */
  admission: Admission;
  client: Http1UpstreamClient;
  /** Timers for the upstream deadline. */
  clock: Clock;
  /** Longest wait for the upstream's response head, queue wait included, in ms. */
  requestTimeoutMs: number;
  /** Told why the upstream could not be reached (the 502 itself says no more). */
  onError?: ((error: unknown, request: Request) => void) | undefined;
  /**
   * The set the upstream deadlines go in (default: one of its own, whose
   * timer stops whenever nothing is pending). The gateway passes one that
   * keeps its timer, and closes it when it shuts down.
   */
  deadlines?: Deadlines | undefined;
}

const FLOW_SCHEMA_LOWER = FLOW_SCHEMA_UID_HEADER.toLowerCase();
const TOO_MANY_REQUESTS_BYTES = new TextEncoder().encode(TOO_MANY_REQUESTS_BODY);
const PRIORITY_LEVEL_LOWER = PRIORITY_LEVEL_UID_HEADER.toLowerCase();

/** The gateway's handler on its own server. */
export function gatewayExchange(options: GatewayExchangeOptions): GatewayHandler {
  const { admission, client, clock, requestTimeoutMs, onError } = options;
  // Resolved once: each request's target goes after its path, with no URL cut again per request.
  const base = client.base(options.upstream.origin + options.upstream.pathname.replace(/\/+$/, ""));
  const deadlines = options.deadlines ?? new Deadlines(clock);

  async function forward(req: GatewayRequest, state: ApfState): Promise<GatewayReply> {
    const { seat } = state;
    const deadline = new UpstreamDeadline(
      deadlines,
      clock.now() + Math.max(1, requestTimeoutMs - state.waitedMs),
      seat,
    );
    let reply: UpstreamReply;
    try {
      reply = await client.sendTo(base, req.target, {
        method: req.method,
        headers: upstreamFields(
          req.fields,
          clientAddressOf(req.remoteAddr),
          req.contentLength,
        ),
        body: req.body,
      }, deadline);
    } catch (e) {
      deadline.cancel();
      if (e instanceof SeatLapsed) {
        // Never sent: no sample of the upstream's latency (the seat goes back as initialized).
        seat.initialized();
        return lapsedReply(state);
      }
      // How it ended, for a learned limit wherever it runs (a coordinator server's too).
      seat.release(deadline.passed ? RELEASED_AS.timeout : RELEASED_AS.error);
      // The client is gone and will not read this; 499 is nginx's "client closed request".
      if (req.gone) return textReply(499, "");
      // The client's body was invalid (RFC 9110 §15.5.1: its error, not the upstream's).
      const refused = req.refused;
      if (refused !== null) return textReply(refused.status, `${refused.message}\n`);
      onError?.(e, requestOf(req));
      // Like Go's ReverseProxy: the reason goes to the log, not to the client.
      const failed = deadline.passed
        ? textReply(504, "Gateway Timeout\n")
        : textReply(502, "Bad Gateway\n");
      return { ...failed, fields: withApfFields(failed.fields, state) };
    }
    // The deadline covers the wait for the response head; the body streams freely, unless the
    // client goes away: then it bounds how long the body is read to its end.
    deadline.pause();
    // With a learned limit: what the upstream's answer says of its load (503: overloaded), stated
    // with the release (one options object per outcome, made once).
    const ended = RELEASED_AS[outcomeOfStatus(reply.status)];
    const fields = withApfFields(reply.fields, state);
    // The upstream's fields, ahead of ours, as the client's fast path read them: not checked again.
    const checked = reply.plain ? fields.length - APF_FIELD_ENTRIES : 0;
    let body = reply.body;
    if (body instanceof ReadableStream && req.method !== "HEAD") {
      try {
        if (admission.initializesEarly(state, contentTypeOf(fields))) {
          // Kubernetes gives a watch's seats back once it is initialized (KEP-1040).
          seat.initialized();
          seat.release();
          body = await upstreamBody(body, reply.length, deadline, { onFailure: bodyFailed(req) });
        } else {
          // The seat follows the body: released when it ends, fails, or is read out for a client
          // that left.
          body = await upstreamBody(body, reply.length, deadline, {
            seat,
            releasedAs: ended,
            onFailure: bodyFailed(req),
          });
        }
      } catch (e) {
        if (!(e instanceof UpstreamBodyFailed)) throw e;
        // Failed before any of it went out (reported): a clean 502 (a release after the first
        // does nothing).
        deadline.cancel();
        seat.release(RELEASED_AS.error);
        const failed = textReply(502, "Bad Gateway\n");
        return { ...failed, fields: withApfFields(failed.fields, state) };
      }
    } else {
      deadline.cancel();
      if (body instanceof ReadableStream) body.cancel().catch(() => {});
      seat.release(ended);
    }
    return {
      status: reply.status,
      statusText: reply.statusText,
      fields,
      checked,
      body,
      lengthInFields: reply.length !== null,
    };
  }

  /** Tells `onError` of a response body the upstream failed mid-way (the client's fails too). */
  function bodyFailed(req: GatewayRequest): ((e: unknown) => void) | undefined {
    return onError === undefined ? undefined : (e) => onError(e, requestOf(req));
  }

  function admitted(
    req: GatewayRequest,
    result: AdmissionResult,
  ): Promise<GatewayReply> | GatewayReply {
    return result instanceof Refusal ? refusalReply(result) : forward(req, result);
  }

  // Not itself async (an async function awaited costs about 1,500 instructions on Deno): the
  // admission is decided at once for nearly every request, and the reply is forward's promise.
  return function exchange(req: GatewayRequest): Promise<GatewayReply> {
    const target = req.target;
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    const query = q < 0 ? "" : target.slice(q + 1);
    let decided: AdmissionResult | Promise<AdmissionResult>;
    try {
      decided = admission.admit(
        new AdmittedRequest(req) as unknown as Request,
        undefined,
        req.method,
        path,
        query,
      );
    } catch (e) {
      return Promise.resolve(handlerFailed(e));
    }
    if (decided instanceof Promise) {
      return decided.then((result) => admitted(req, result), handlerFailed);
    }
    const reply = admitted(req, decided);
    return reply instanceof Promise ? reply : Promise.resolve(reply);
  };
}

/** The reply when the admission failed (a bug, or an identity resolver that threw). */
function handlerFailed(e: unknown): GatewayReply {
  console.error("apf serve: the handler failed:", e);
  return textReply(500, "Internal Server Error\n");
}

/**
 * What an identity resolver reads of a request: its headers (and its
 * signal, read only by a request that has to wait).
 */
class AdmittedRequest {
  readonly method: string;
  readonly headers: FieldHeaders;
  readonly #req: GatewayRequest;

  constructor(req: GatewayRequest) {
    this.method = req.method;
    this.headers = new FieldHeaders(req.fields);
    this.#req = req;
  }

  get signal(): AbortSignal {
    return this.#req.signal;
  }
}

/** The reply to a refused request: its 400 or 401, or the 429 with Retry-After. */
function refusalReply(refusal: Refusal): GatewayReply {
  const rejection = refusal.rejection;
  if (rejection === null) return textReply(refusal.status, refusal.message);
  return tooManyRequests(rejection.classification, rejection.retryAfterSeconds);
}

/** A 429 with `Retry-After` and the APF headers of `classification`. */
function tooManyRequests(classification: Classification, retryAfterSeconds: number): GatewayReply {
  return {
    status: 429,
    statusText: "",
    fields: tooManyRequestsFields(classification, retryAfterSeconds),
    body: TOO_MANY_REQUESTS_BYTES,
    lengthInFields: false,
  };
}

/**
 * The reply to a request whose seat's lease lapsed before it was sent: a
 * 429 with `Retry-After: 1`, as the budget holder refuses a request once
 * its lease ended.
 */
function lapsedReply(state: ApfState): GatewayReply {
  return tooManyRequests(state.classification, 1);
}

/**
 * `fields` (the client's own array) with the UID headers set and
 * `Server-Timing: apf;dur=` appended, as `apf()` sets them on a handler's
 * response.
 */
function withApfFields(fields: string[], state: ApfState): string[] {
  // What is pushed last is APF_FIELD_ENTRIES entries: the forward path counts on it.
  let out = fields;
  for (let i = 0; i < fields.length; i += 2) {
    const n = fields[i]!;
    // The UID headers are 30 and 33 characters long: most names are neither.
    if ((n.length === 30 || n.length === 33) && isUidField(n.toLowerCase())) {
      out = [];
      for (let j = 0; j < fields.length; j += 2) {
        if (!isUidField(fields[j]!.toLowerCase())) out.push(fields[j]!, fields[j + 1]!);
      }
      break;
    }
  }
  const c = state.classification;
  out.push(
    FLOW_SCHEMA_UID_HEADER,
    c.flowSchema.uid,
    PRIORITY_LEVEL_UID_HEADER,
    c.priorityLevel.uid,
    "Server-Timing",
    `apf;dur=${state.waitedMs}`,
  );
  return out;
}

/** The entries {@linkcode withApfFields} appends: three names and their values. */
const APF_FIELD_ENTRIES = 6;

function isUidField(lower: string): boolean {
  return lower === FLOW_SCHEMA_LOWER || lower === PRIORITY_LEVEL_LOWER;
}

/** The first `Content-Type` of `fields`, or `null`. */
function contentTypeOf(fields: readonly string[]): string | null {
  for (let i = 0; i < fields.length; i += 2) {
    const n = fields[i]!;
    if (n.length === 12 && n.toLowerCase() === "content-type") return fields[i + 1]!;
  }
  return null;
}

/** The request as a `Request`, for the error callback (made only on a failure). */
function requestOf(req: GatewayRequest): Request {
  const method = req.method === "CONNECT" ? "GET" : req.method;
  try {
    return new Request(`http://${new FieldHeaders(req.fields).get("host")}${req.target}`, {
      method,
    });
  } catch {
    return new Request(`http://localhost${req.target}`, { method });
  }
}
