/**
 * The APF gateway as a library: a reverse proxy governed by APF in front of
 * any HTTP upstream (what `apf serve` runs).
 *
 *   deno run --allow-net --allow-read --allow-env examples/gateway.ts
 *   npx -y deno@2 run --allow-net --allow-read --allow-env examples/gateway.ts   # with only Node and npm
 *
 * @module
 */

import { serveGateway } from "@apf/edge/deno";

const gateway = serveGateway({
  upstream: "http://127.0.0.1:3000",
  config: await Deno.readTextFile(new URL("./apf.yaml", import.meta.url)), // or objects, or an effective configuration
  listen: { hostname: "127.0.0.1", port: 8080 },
  adminListen: { hostname: "127.0.0.1", port: 9090 },
  trustIdentityHeaders: true,
});
Deno.addSignalListener("SIGTERM", () => gateway.shutdown());
gateway.middleware.snapshot(); // every level: seats in use, queued, current limit
await gateway.finished;
