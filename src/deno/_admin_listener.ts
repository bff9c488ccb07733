/**
 * The admin listener's handler: the admin router, and 404 for any other
 * path (the listener serves nothing else).
 *
 * @module
 */

import type { AdminRouter } from "../observe/admin_router.ts";
import { adminText } from "../observe/admin_router.ts";
import type { GuardedHandler } from "./http_server.ts";

/** Serves `router` alone: what is not an admin route is not found. */
export function adminListenerHandler(router: AdminRouter): GuardedHandler {
  return async (request) => (await router(request)) ?? adminText("404 Not Found\n", 404);
}
