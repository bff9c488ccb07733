/**
 * The admin routes of `apf()` as a Hono app: the portable admin router of
 * `src/observe/admin_router.ts` (metrics and Kubernetes' three debug dumps,
 * `docs/semantics.md` §9.1), mounted route by route so that it works under
 * any prefix. Nothing is exposed unless mounted, and every route asks
 * `authorize` first: it is required, so that exposing them is always a
 * decision.
 *
 * @module
 */

import { Hono } from "hono";
import type { Context, Env } from "hono";
import { type AdminRouter, adminRouter, DEBUG_PREFIX } from "../observe/admin_router.ts";
import type { AdminSource } from "../observe/admin_source.ts";
import { bearerTokenCheck } from "../observe/bearer_token.ts";

export { DEBUG_PREFIX };
export { MIN_ADMIN_TOKEN_LENGTH } from "../observe/bearer_token.ts";
export type { AdminSource };

/** Options of the admin handlers. */
export interface AdminOptions<E extends Env = Env> {
  /**
   * Whether the request may see the route (`true` to allow); a refusal
   * answers 403. Required: for example check a bearer token, or return
   * `true` on a listener only operators reach.
   */
  authorize: (c: Context<E>) => boolean | Promise<boolean>;
}

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
  const check = bearerTokenCheck(token);
  return (c) => check(c.req.raw);
}

/**
 * The admin router over `source`, authorizing with the Hono context.
 *
 * @throws {TypeError} when `options.authorize` is missing.
 */
export function honoAdminRouter<E extends Env>(
  source: AdminSource<Context<E>>,
  options: AdminOptions<E>,
): AdminRouter<Context<E>> {
  const authorize = options?.authorize;
  return adminRouter<Context<E>>(source, {
    // Left as received when not a function, for the router to refuse with its message.
    authorize: typeof authorize === "function" ? (_request, c) => authorize(c) : authorize,
  });
}

/** A Hono app with every route of `router`, at its path (mount it under any prefix). */
export function mountAdminRouter<E extends Env>(router: AdminRouter<Context<E>>): Hono<E> {
  const app = new Hono<E>();
  // Per route, not a catch-all: mounted at a prefix, it must leave the app's other routes alone.
  for (const route of router.routes) {
    app.on(route.method, route.path, (c) => route.handle(c.req.raw, c));
  }
  return app;
}

/**
 * A Hono app with `GET /metrics` and the three
 * `GET /debug/api_priority_and_fairness/dump_*` routes (plus `dump_sessions`
 * and `POST /reload` when the source offers them; with a learned server
 * concurrency limit, its line ends `dump_priority_levels`); mount it with
 * `app.route("/", apfAdminRoutes(middleware, { authorize }))`.
 *
 * @throws {TypeError} when `options.authorize` is missing.
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { apf, apfAdminRoutes } from "@apf/edge/hono";
 * const limiter = apf();
 * const admin = apfAdminRoutes(limiter, { authorize: bearerToken("0123456789abcdef-example") });
 * const app = new Hono().route("/", admin);
 * ```
 */
export function apfAdminRoutes<E extends Env = Env>(
  source: AdminSource,
  options: AdminOptions<E>,
): Hono<E> {
  return mountAdminRouter(honoAdminRouter(withContext(source), options));
}

/**
 * `source`, typed to receive the Hono context it does not read. Sound: its
 * readings take no context (`void`), so whatever is passed is ignored; the
 * assignments go through `never`, as method parameters are bivariant.
 */
function withContext<E extends Env>(source: AdminSource): AdminSource<Context<E>> {
  const contextFree: AdminSource<never> = source;
  return contextFree;
}
