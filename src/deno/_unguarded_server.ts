/**
 * `serveGuarded()`'s fallback on a Deno without the per-connection HTTP
 * servers it runs on: plain `Deno.serve`, with a warning, once, that the
 * limits are off.
 *
 * @module
 */

import type { GuardedHandler, GuardedServeOptions, GuardedServer } from "./http_server.ts";

let warned = false;

/** The fallback: plain `Deno.serve`, for a Deno without the per-connection servers. */
export function serveUnguarded(
  handler: GuardedHandler,
  options: GuardedServeOptions,
): GuardedServer {
  if (!warned) {
    warned = true;
    console.warn(
      "serveGuarded: this Deno has no per-connection HTTP server where Deno 2.9 keeps it; " +
        "serving with Deno.serve, without header and idle timeouts, connection cap or EMFILE back-off",
    );
  }
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    onListen: (addr) => options.onListen?.(addr),
    ...(options.onError !== undefined && { onError: options.onError }),
  }, handler);
  const shutdown = () => server.shutdown();
  return {
    addr: server.addr,
    guarded: false,
    stats: {
      open: 0,
      accepted: 0,
      refused: 0,
      acceptErrors: 0,
      headerTimeouts: 0,
      idleTimeouts: 0,
    },
    finished: server.finished.catch(() => {}),
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}
