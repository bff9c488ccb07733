/**
 * `@apf/edge/deno`: Deno-specific pieces: loading manifest files, the APF
 * gateway (`apf serve`) in front of any HTTP upstream, the coordinator
 * server, `serveGuarded()`, the HTTP server both run on (timeouts, a
 * connection cap, an accept loop that survives `EMFILE`), and
 * `noDelayWebSocket()`, the transport to use with `connectCoordinator` on
 * Deno, and `KvBudgetStore`, seat budgets in Deno KV (the isolates of a
 * Deno Deploy app, or processes sharing a KV file). The portable core is
 * `@apf/edge`; the middleware is `@apf/edge/hono`.
 *
 * @module
 */

export { loadConfigurationFiles } from "./config_files.ts";
export { serveGateway } from "./gateway.ts";
export type { Gateway, GatewayMiddleware, GatewayOptions, ListenAddress } from "./gateway_types.ts";
export {
  type CoordinatorServer,
  type CoordinatorServerOptions,
  type ReloadResult,
  serveCoordinator,
} from "./coordinator_server.ts";
export type { ConfigurationDiff, KindDiff } from "../config/mod.ts";
export type { SessionStats } from "../server/sessions.ts";
export {
  type ConnectionLimits,
  type GuardedHandler,
  type GuardedServeOptions,
  type GuardedServer,
  type GuardedServerStats,
  serveGuarded,
} from "./http_server.ts";
export { noDelayWebSocket, type NoDelayWebSocketOptions } from "./no_delay_websocket.ts";
export { KvBudgetStore, type KvBudgetStoreOptions } from "./kv_budget_store.ts";
