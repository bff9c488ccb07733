/**
 * The admin routes of `apf()`: Prometheus metrics and Kubernetes' three
 * debug dumps (`docs/semantics.md` §9.1), as Hono handlers to mount where you choose.
 * Nothing is exposed unless mounted, and every handler asks `authorize`
 * first: it is required, so that exposing them is always a decision.
 *
 * @module
 */

import { Hono } from "hono";
import type { Context, Env, Handler } from "hono";
import {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  dumpQueuesJson,
  dumpRequests,
  dumpRequestsJson,
} from "../observe/dumps.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../observe/registry.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import { constantTimeEqual } from "../_shared/secrets.ts";

/** Where the admin routes read from: an `apf()` middleware is one. */
export interface AdminSource {
  /** The coordinator's state, or `null` when it cannot tell. */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null;
  /** The metrics, or `null` when there are none here. */
  readonly metrics: { expose(): string } | null;
}

/** Options of the admin handlers. */
export interface AdminOptions<E extends Env = Env> {
  /**
   * Whether the request may see the route (`true` to allow); a refusal
   * answers 403. Required: for example check a bearer token, or return
   * `true` on a listener only operators reach.
   */
  authorize: (c: Context<E>) => boolean | Promise<boolean>;
}

/** The shortest admin token {@linkcode bearerToken} accepts. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * An `authorize` that lets in the requests carrying
 * `Authorization: Bearer <token>` (compared in constant time). It fails
 * closed: a missing, empty or short token (an unset environment variable)
 * throws when the routes are created, instead of letting in
 * `Bearer undefined`.
 *
 * @throws {TypeError} when `token` is not a string of 16 characters or more.
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { apf, apfAdminRoutes, bearerToken } from "@apf/edge/hono";
 *
 * const limiter = apf();
 * const admin = apfAdminRoutes(limiter, { authorize: bearerToken("0123456789abcdef-example") });
 * const app = new Hono().use(limiter).route("/", admin);
 * limiter.close();
 * ```
 */
export function bearerToken(token: string | null | undefined): (c: Context) => boolean {
  if (typeof token !== "string" || token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new TypeError(
      `Cannot authorize the admin routes: the token must be a string of ${MIN_ADMIN_TOKEN_LENGTH} characters or more, got ${
        typeof token === "string" ? `${token.length} characters` : String(token)
      }`,
    );
  }
  const expected = `Bearer ${token}`;
  return (c) => constantTimeEqual(c.req.header("Authorization") ?? "", expected);
}

/** The three dumps, by the last segment of their path. */
export type DumpKind = "dump_priority_levels" | "dump_queues" | "dump_requests";

/** The path prefix of the dumps, as in Kubernetes. */
export const DEBUG_PREFIX = "/debug/api_priority_and_fairness";

function checked<E extends Env>(
  what: string,
  options: AdminOptions<E>,
  handle: (c: Context<E>) => Response,
): Handler<E> {
  if (typeof options?.authorize !== "function") {
    throw new TypeError(
      `Cannot create the ${what} route: options.authorize must be a function (return true to allow everyone)`,
    );
  }
  const authorize = options.authorize;
  return async function admin(c: Context<E>): Promise<Response> {
    if ((await authorize(c)) !== true) return c.text("Forbidden\n", 403);
    return handle(c);
  };
}

/**
 * `GET /metrics`: the Prometheus text exposition of `source.metrics`.
 *
 * @throws {TypeError} when `options.authorize` is missing.
 */
export function metricsHandler<E extends Env = Env>(
  source: AdminSource,
  options: AdminOptions<E>,
): Handler<E> {
  return checked("metrics", options, (c) => {
    const metrics = source.metrics;
    if (metrics === null) return c.text("No metrics here: the coordinator is remote.\n", 404);
    return c.body(metrics.expose(), 200, { "Content-Type": PROMETHEUS_CONTENT_TYPE });
  });
}

/**
 * One of Kubernetes' debug dumps: text (the column format), or JSON with
 * `?format=json`; `dump_requests` adds user and request columns when
 * `includeRequestDetails` is set (non-empty).
 *
 * @throws {TypeError} when `kind` is unknown or `options.authorize` is missing.
 */
export function dumpHandler<E extends Env = Env>(
  kind: DumpKind,
  source: AdminSource,
  options: AdminOptions<E>,
): Handler<E> {
  if (!["dump_priority_levels", "dump_queues", "dump_requests"].includes(kind)) {
    throw new TypeError(`Cannot create a dump route: unknown kind ${JSON.stringify(kind)}`);
  }
  return checked(kind, options, (c) => {
    const snapshot = source.snapshot({ includeRequests: kind === "dump_requests" });
    if (snapshot === null) {
      return c.text(
        "No dump here: the coordinator is remote, and its local fallback limiter has not been needed.\n",
        404,
      );
    }
    const json = c.req.query("format") === "json";
    const includeRequestDetails = (c.req.query("includeRequestDetails") ?? "") !== "";
    switch (kind) {
      case "dump_priority_levels":
        return json
          ? c.json(dumpPriorityLevelsJson(snapshot))
          : c.text(dumpPriorityLevels(snapshot));
      case "dump_queues":
        return json ? c.json(dumpQueuesJson(snapshot)) : c.text(dumpQueues(snapshot));
      case "dump_requests":
        return json
          ? c.json(dumpRequestsJson(snapshot, { includeRequestDetails }))
          : c.text(dumpRequests(snapshot, { includeRequestDetails }));
    }
  });
}

/**
 * A Hono app with `GET /metrics` and the three
 * `GET /debug/api_priority_and_fairness/dump_*` routes; mount it with
 * `app.route("/", apfAdminRoutes(middleware, { authorize }))`.
 *
 * @throws {TypeError} when `options.authorize` is missing.
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { apf, apfAdminRoutes } from "@apf/edge/hono";
 * const limiter = apf();
 * const admin = apfAdminRoutes(limiter, {
 *   authorize: (c) => c.req.header("Authorization") === "Bearer s3cret",
 * });
 * const app = new Hono().route("/", admin);
 * ```
 */
export function apfAdminRoutes<E extends Env = Env>(
  source: AdminSource,
  options: AdminOptions<E>,
): Hono<E> {
  const app = new Hono<E>();
  app.get("/metrics", metricsHandler(source, options));
  for (const kind of ["dump_priority_levels", "dump_queues", "dump_requests"] as const) {
    app.get(`${DEBUG_PREFIX}/${kind}`, dumpHandler(kind, source, options));
  }
  return app;
}
