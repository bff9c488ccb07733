/**
 * `@apf/edge/hono`: API Priority and Fairness as Hono middleware, and the
 * admin routes (metrics, debug dumps) to mount where you choose.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { apf, type ApfEnv } from "@apf/edge/hono";
 *
 * const app = new Hono<ApfEnv>();
 * app.use(apf());
 * app.get("/", (c) => c.text("hello"));
 * ```
 *
 * @module
 */

export { apf, type ApfMiddleware } from "./middleware.ts";
export type { ApfEnv, ApfOptions, ApfRejection, ApfState, ApfVariables } from "./types.ts";
export { type AdminOptions, apfAdminRoutes, bearerToken } from "./admin.ts";
