/**
 * `@apf/edge/deno`: Deno-specific pieces: loading manifest files, and the
 * APF gateway (`apf serve`) in front of any HTTP upstream. The portable core
 * is `@apf/edge`; the middleware is `@apf/edge/hono`.
 *
 * @module
 */

export { loadConfigurationFiles } from "./config_files.ts";
export { DEFAULT_GATEWAY_LISTEN, serveGateway } from "./gateway.ts";
export type { Gateway, GatewayMiddleware, GatewayOptions, ListenAddress } from "./gateway_types.ts";
export {
  type CoordinatorServer,
  type CoordinatorServerOptions,
  DEFAULT_COORDINATOR_LISTEN,
  serveCoordinator,
} from "./coordinator_server.ts";
