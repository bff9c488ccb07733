/**
 * The admin router, written once for every platform: Web `Request` in,
 * `Response` out (`null` for a path that is not an admin route), no
 * framework. Routes:
 *
 * - `GET /metrics`: the Prometheus text exposition;
 * - `GET /debug/api_priority_and_fairness/dump_priority_levels`, `dump_queues`
 *   and `dump_requests`: Kubernetes' debug dumps (`docs/semantics.md` §9.1),
 *   in its column format, or JSON with `?format=json`; `dump_requests` adds
 *   the user and request columns with a non-empty `?includeRequestDetails`;
 *   `dump_priority_levels` adds a line for a learned server concurrency limit
 *   (`dumps.ts`) when the source's `adaptiveSnapshot()` gives one;
 * - `GET /debug/api_priority_and_fairness/dump_sessions`, when the source
 *   has sessions (same formats);
 * - `POST /reload` (`?allowEmpty=true`), when the source can reload: answers
 *   `reloaded: <changes>` or 400 `refused: <why>`.
 *
 * Every route asks `authorize` first (it is required: exposing the routes is
 * always a decision) and answers 403 on a refusal, before reading anything.
 * A `GET` route answers `HEAD` as `GET` without the body (as Hono does);
 * any other method on an admin path answers 405 with `Allow`. Frameworks
 * that route by themselves (Hono, under a prefix) mount
 * {@linkcode AdminRouter.routes} one by one instead.
 *
 * @module
 */

import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { TIMED_OUT, withTimeout } from "../fairqueuing/timeout.ts";
import type { AdminReading, AdminSource } from "./admin_source.ts";
import { AdminUnavailable } from "./admin_source.ts";
import { renderDump } from "./_admin_render.ts";
import { dashboardRoutes, type RouteMaker } from "./_dashboard_routes.ts";
import type { LiveViewOptions } from "./live_view.ts";
import { PROMETHEUS_CONTENT_TYPE } from "./registry.ts";
import type { LearnedLimitSnapshot } from "./types.ts";

/** The path prefix of the dumps, as in Kubernetes. */
export const DEBUG_PREFIX = "/debug/api_priority_and_fairness";

export { DASHBOARD_PATH } from "./_dashboard_routes.ts";

/** The path of the reload route (`POST`). */
export const RELOAD_PATH = "/reload";

/** The three Kubernetes dumps, by the last segment of their path. */
export type DumpKind = "dump_priority_levels" | "dump_queues" | "dump_requests";

/** The three Kubernetes dumps, in the order they are mounted. */
export const DUMP_KINDS: readonly DumpKind[] = [
  "dump_priority_levels",
  "dump_queues",
  "dump_requests",
];

/** Options of {@linkcode adminRouter}. */
export interface AdminRouterOptions<C = void> {
  /**
   * Whether the request may see the route (`true` to allow); a refusal
   * answers 403. Required: for example {@linkcode bearerTokenCheck}, or
   * `() => true` on a listener only operators reach.
   */
  authorize: (request: Request, context: C) => boolean | Promise<boolean>;
  /**
   * How long a reading that returns a promise may take, in ms, before the
   * route answers 504 (default: no limit; a source calling other objects
   * should bound each call itself).
   */
  timeoutMs?: number;
  /** The clock of `timeoutMs` and of the dashboard's samples (default: the system clock). */
  clock?: Clock;
  /**
   * The live dashboard (`GET /debug/api_priority_and_fairness/`, its data at
   * `.../live`): its sampling options, or `false` for no dashboard routes
   * (default: on, a sample a second at most, five minutes of history).
   */
  live?: LiveViewOptions | false;
}

/** One admin route: its method, its path, and its handler. */
export interface AdminRoute<C = void> {
  /** `GET`, or `POST` for the reload. */
  readonly method: "GET" | "POST";
  /** The path, e.g. `/metrics`. */
  readonly path: string;
  /** Authorizes, then answers `request` (its method and path are not looked at). */
  handle(request: Request, context: C): Promise<Response>;
}

/**
 * The router: answers an admin path (`null` for any other path), and lists
 * its routes for frameworks that mount them themselves.
 */
export interface AdminRouter<C = void> {
  /** The response to `request`, or `null` when its path is not an admin route. */
  (request: Request, context: C): Promise<Response | null>;
  /**
   * The routes, for mounting one by one.
   *
   * @internal
   */
  readonly routes: readonly AdminRoute<C>[];
}

/** A plain-text response, as the admin routes answer. */
export function adminText(body: string, status = 200, headers: HeadersInit = {}): Response {
  return new Response(body, {
    status,
    headers: { "Content-Type": "text/plain; charset=UTF-8", ...headers },
  });
}

function checkOptions<C>(source: AdminSource<C>, options: AdminRouterOptions<C>): void {
  if (typeof options?.authorize !== "function") {
    throw new TypeError(
      "Cannot create the admin routes: options.authorize must be a function (return true to allow everyone)",
    );
  }
  if (typeof source?.snapshot !== "function" || source.metrics === undefined) {
    throw new TypeError(
      `Cannot create the admin routes: the source must have snapshot() and metrics, got ${
        source === null ? "null" : typeof source
      }`,
    );
  }
  const t = options.timeoutMs;
  if (t !== undefined && !(typeof t === "number" && t > 0)) {
    throw new RangeError(
      `Cannot create the admin routes: timeoutMs must be a number > 0, got ${String(t)}`,
    );
  }
}

/**
 * Creates the admin router over `source`.
 *
 * @param source Where the routes read from.
 * @param options `authorize` (required), and an optional timeout.
 * @returns The router.
 * @throws {TypeError} when `options.authorize` is missing or `source` is not a source.
 * @throws {RangeError} when `options.timeoutMs` is not a number > 0.
 * @example
 * ```ts
 * import { adminRouter, bearerTokenCheck, EmbeddedCoordinator, FlowcontrolMetrics } from "@apf/edge";
 * import { resolveConfiguration } from "@apf/edge";
 *
 * const coordinator = new EmbeddedCoordinator(resolveConfiguration(undefined));
 * const metrics = new FlowcontrolMetrics({ snapshot: () => coordinator.snapshot() });
 * const router = adminRouter(
 *   { snapshot: (o) => coordinator.snapshot(o), metrics },
 *   { authorize: bearerTokenCheck("0123456789abcdef-example") },
 * );
 * const res = await router(new Request("http://localhost/metrics"));
 * res?.status; // 403
 * coordinator.close();
 * ```
 */
export function adminRouter<C = void>(
  source: AdminSource<C>,
  options: AdminRouterOptions<C>,
): AdminRouter<C> {
  checkOptions(source, options);
  const { authorize, timeoutMs } = options;
  const clock = options.clock ?? systemClock;

  /** A reading, bounded by `timeoutMs` when it is a promise. */
  const read = async <T>(reading: AdminReading<T>): Promise<T | null | AdminUnavailable> => {
    if (timeoutMs === undefined || !isThenable(reading)) return await reading;
    const answer = await withTimeout(clock, reading, timeoutMs);
    return answer === TIMED_OUT
      ? new AdminUnavailable(504, `The source did not answer within ${timeoutMs} ms`)
      : answer;
  };
  /** The learned limit's state: `null` without one, and on a refusal (the dump goes on without it). */
  const learnedLimit = async (context: C): Promise<LearnedLimitSnapshot | null> => {
    const reading = source.adaptiveSnapshot?.(context);
    if (reading === undefined) return null;
    const state = await read(reading);
    return state instanceof AdminUnavailable ? null : state;
  };
  const route: RouteMaker<C> = (method, path, answer, how = {}) => ({
    method,
    path,
    handle: async (request, context) => {
      if (how.open !== true && (await authorize(request, context)) !== true) {
        return how.forbidden?.(request) ?? adminText("Forbidden\n", 403);
      }
      return answer(request, new URL(request.url), context);
    },
  });

  const routes: AdminRoute<C>[] = [
    route("GET", "/metrics", async (_request, _url, context) => {
      const metrics = source.metrics;
      if (metrics === null) return adminText("No metrics here: the coordinator is remote.\n", 404);
      const text = await read(metrics.expose(context));
      if (text === null || text instanceof AdminUnavailable) return unavailable(text);
      return adminText(text, 200, { "Content-Type": PROMETHEUS_CONTENT_TYPE });
    }),
    ...DUMP_KINDS.map((kind) =>
      route("GET", `${DEBUG_PREFIX}/${kind}`, async (_request, url, context) => {
        const snapshot = await read(
          source.snapshot({ includeRequests: kind === "dump_requests" }, context),
        );
        if (snapshot === null) {
          return adminText(
            "No dump here: the coordinator is remote, and its local fallback limiter has not been needed.\n",
            404,
          );
        }
        if (snapshot instanceof AdminUnavailable) return unavailable(snapshot);
        // Read after the snapshot: an `apf()` middleware creates its coordinator (and its
        // learned limit) on first use.
        const learned = kind === "dump_priority_levels" ? await learnedLimit(context) : null;
        return renderDump(kind, snapshot, url.searchParams, learned);
      })
    ),
  ];
  const sessions = source.sessions;
  if (typeof sessions === "function") {
    routes.push(route("GET", `${DEBUG_PREFIX}/dump_sessions`, async (_request, url, context) => {
      const snapshot = await read(sessions.call(source, url.searchParams, context));
      if (snapshot === null) return adminText("No sessions here.\n", 404);
      if (snapshot instanceof AdminUnavailable) return unavailable(snapshot);
      return renderDump("dump_sessions", snapshot, url.searchParams);
    }));
  }
  const reload = source.reload;
  if (typeof reload === "function") {
    routes.push(route("POST", RELOAD_PATH, async (_request, url, context) => {
      const allowEmpty = url.searchParams.get("allowEmpty") === "true";
      const result = await read(reload.call(source, { allowEmpty }, context));
      if (result === null || result instanceof AdminUnavailable) return unavailable(result);
      return result.applied
        ? adminText(`reloaded: ${result.summary}\n`)
        : adminText(`refused: ${result.reason}\n`, 400);
    }));
  }

  if (options.live !== false) {
    routes.push(...dashboardRoutes(source, route, read, { clock, ...options.live }));
  }

  const byPath = new Map(routes.map((r) => [r.path, r]));
  const router = async (request: Request, context: C): Promise<Response | null> => {
    const found = byPath.get(new URL(request.url).pathname);
    if (found === undefined) return null;
    if (request.method === found.method) return await found.handle(request, context);
    if (request.method === "HEAD" && found.method === "GET") {
      const full = await found.handle(request, context);
      await full.body?.cancel();
      return new Response(null, full);
    }
    return adminText("Method Not Allowed\n", 405, {
      Allow: found.method === "GET" ? "GET, HEAD" : "POST",
    });
  };
  return Object.assign(router, { routes: Object.freeze(routes) });
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function unavailable(answer: AdminUnavailable | null): Response {
  return answer === null
    ? adminText("Nothing here.\n", 404)
    : adminText(`${answer.reason}\n`, answer.status);
}
