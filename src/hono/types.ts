/**
 * The public shapes of the Hono middleware: its options, the typed context
 * variables it sets, and what `onRejected` is told.
 *
 * @module
 */

import type { Context, Env } from "hono";
import type { Classification } from "../classify/classifier.ts";
import type { IdentityResolver } from "../classify/identity_resolvers.ts";
import type { UserInfo } from "../classify/identity.ts";
import type { RequestInfo, ResourceRoute } from "../classify/request_info.ts";
import type { ConfigOption } from "../config/mod.ts";
import type { AdmissionRejectReason, Coordinator, Seat } from "../coordinator/types.ts";
import type { RouteCost } from "../estimate/routes.ts";
import type { ResolvedWorkEstimate, WorkEstimator } from "../estimate/types.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";

/** What the middleware knows about the request being served (`c.get("apf")`). */
export interface ApfState {
  /** Who sent it. */
  user: UserInfo;
  /** What it asks for. */
  requestInfo: RequestInfo;
  /** Its FlowSchema, priority level and flow. */
  classification: Classification;
  /** Its estimated seats. */
  work: ResolvedWorkEstimate;
  /** Time it waited in a queue, in ms. */
  waitedMs: number;
  /** Its seat: released by the middleware when the handler is done (releasing it earlier is allowed). */
  seat: Seat;
}

/** The context variables `apf()` sets. */
export interface ApfVariables {
  /** The request's classification, queue wait and seat. */
  apf: ApfState;
}

/**
 * The Hono environment of apps using `apf()`, for typed `c.get("apf")`:
 * `new Hono<ApfEnv>()`, or intersect it with your own.
 */
export interface ApfEnv extends Env {
  /** The variables `apf()` sets. */
  Variables: ApfVariables;
}

/** What `onRejected` is told about a rejected request. */
export interface ApfRejection {
  /** Why it was rejected. */
  reason: AdmissionRejectReason;
  /** The Retry-After value the 429 carries, in seconds. */
  retryAfterSeconds: number;
  /** Its classification. */
  classification: Classification;
  /** Who sent it. */
  user: UserInfo;
  /** What it asked for. */
  requestInfo: RequestInfo;
}

/** Options of `apf()`; all optional. */
export interface ApfOptions<E extends Env = ApfEnv> {
  /**
   * The configuration: manifest text (YAML or JSON), objects in manifest
   * shape (an array, or `{ flowSchemas, priorityLevels }`), or an effective
   * configuration. User objects merge with the built-in ones. Default: the
   * built-in configuration. Requests are classified with it, and the
   * embedded coordinator serves it.
   */
  config?: ConfigOption;
  /**
   * Merge `config` with the mandatory built-in objects only (`exempt`,
   * `catch-all`), leaving out Kubernetes' suggested levels and schemas,
   * which an ordinary web API does not use (default false, as a
   * kube-apiserver does). Ignored for an effective configuration.
   */
  mandatoryOnly?: boolean;
  /**
   * Seats of the whole server (default 600), or `"auto"`: learned from the
   * latency of the handlers' work (a gradient controller, after Envoy's
   * adaptive concurrency and Netflix's Gradient2; `docs/adaptive.md`), or
   * that controller's options (`{ min, max, initial, … }`). `"auto"` needs
   * the embedded coordinator.
   */
  serverConcurrencyLimit?: number | "auto" | GradientControllerOptions;
  /** Who hands out seats (default: an embedded coordinator created for this middleware). */
  coordinator?: Coordinator;
  /**
   * Who sent the request (default: nobody, so every request is anonymous:
   * `system:anonymous` in `system:unauthenticated`).
   */
  identify?: IdentityResolver<Context<E>>;
  /** Declared REST routes with resource semantics, for RequestInfo. */
  routes?: readonly ResourceRoute[];
  /** Per-route costs (checked before the Kubernetes rules) or an estimator of your own. */
  estimate?: readonly RouteCost[] | WorkEstimator;
  /**
   * The server's request timeout in ms (default 60,000); a request waits in
   * a queue a quarter of its deadline at most (`docs/semantics.md` §7.3).
   */
  requestTimeoutMs?: number;
  /**
   * Marks more requests as long-running: their seats go back once the
   * handler returned its response (watch requests and `text/event-stream`
   * responses always are). Any other response holds its seats until its
   * body has ended, failed or been cancelled by the client (a body given
   * whole, such as `c.text()`'s, has ended when the handler returns). A
   * middleware placed before `apf()` that drops the response without
   * reading or cancelling its body keeps those seats.
   */
  longRunning?: (c: Context<E>) => boolean;
  /** Keep a long-running response's seats until its body ends (default false). */
  holdLongRunningSeats?: boolean;
  /** Replaces the 429 response; returning nothing keeps the default one. */
  onRejected?: (
    c: Context<E>,
    rejection: ApfRejection,
  ) => Response | void | Promise<Response | void>;
  /** The clock of the embedded coordinator (default: the system clock). */
  clock?: Clock;
}
