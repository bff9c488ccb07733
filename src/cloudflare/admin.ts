/**
 * `cloudflareAdminRoutes()`: the metrics and debug dumps of a Cloudflare
 * deployment, gathered from every level object at request time: `GET
 * /metrics` (one Prometheus exposition for all levels), Kubernetes' three
 * `dump_*` routes over all levels, and `dump_sessions?level=NAME` (one
 * level object's WebSocket sessions and reclaimed seats). The routes are
 * the portable admin router's (`src/observe/admin_router.ts`); this file
 * only plugs in the level objects.
 *
 * @module
 */

import type { Context, Env, Hono } from "hono";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { honoAdminRouter, mountAdminRouter } from "../hono/admin.ts";
import type { ApfBindings } from "./env.ts";
import { levelObjectsSource } from "./_level_objects_source.ts";
import { checkNumber } from "../_shared/errors.ts";

/** Options of {@linkcode cloudflareAdminRoutes}. */
export interface CloudflareAdminOptions<E extends Env> {
  /**
   * Whether the request may see the routes (`true` to allow); a refusal
   * answers 403. Required: for example compare a bearer token with a secret.
   */
  authorize: (c: Context<E>) => boolean | Promise<boolean>;
  /** The bindings (default `c.env`). */
  env?: (c: Context<E>) => ApfBindings;
  /**
   * How long each object (the controller, a level object) may take to
   * answer, in ms (default 2,000): slower level objects are left out, a
   * slower controller answers 504.
   */
  timeoutMs?: number;
  /** The clock of `timeoutMs` (default: the system clock). */
  clock?: Clock;
}

/**
 * The admin routes of a Worker using the Cloudflare adapter; mount them
 * with `app.route("/apf", cloudflareAdminRoutes({ authorize }))`.
 *
 * @throws {TypeError} when `options.authorize` is missing.
 * @throws {RangeError} when `options.timeoutMs` is a number not > 0 ({TypeError} when not a number).
 * @example
 * ```ts ignore
 * import { Hono } from "hono";
 * import { bearerTokenCheck } from "@apf/edge";
 * import { type ApfBindings, cloudflareAdminRoutes } from "@apf/edge/cloudflare";
 * const app = new Hono<{ Bindings: ApfBindings }>();
 * // bearerTokenCheck() throws on a missing or short token: nobody is let in then.
 * const authorize = (c: { env: ApfBindings; req: { raw: Request } }) => {
 *   try {
 *     return bearerTokenCheck(c.env.APF_TOKEN)(c.req.raw);
 *   } catch {
 *     return false;
 *   }
 * };
 * app.route("/apf", cloudflareAdminRoutes({ authorize }));
 * ```
 */
export function cloudflareAdminRoutes<E extends Env = { Bindings: ApfBindings }>(
  options: CloudflareAdminOptions<E>,
): Hono<E> {
  const timeoutMs = options?.timeoutMs ?? 2_000;
  checkNumber(
    timeoutMs,
    (ms) => ms > 0,
    () =>
      `Cannot create the admin routes: timeoutMs must be a number > 0, got ${String(timeoutMs)}`,
  );
  const source = levelObjectsSource<Context<E>>({
    env: options?.env ?? ((c) => c.env as ApfBindings),
    timeoutMs,
    clock: options?.clock ?? systemClock,
  });
  return mountAdminRouter(honoAdminRouter(source, options));
}
