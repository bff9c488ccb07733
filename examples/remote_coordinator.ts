/**
 * A Hono app whose seats come from a shared `apf coordinator`, so that all
 * replicas of the app share one set of seats. Start the coordinator first:
 *
 *   deno task apf coordinator --listen 127.0.0.1:7070 --config examples/web-api.yaml --mandatory-only
 *   deno run --allow-net --allow-env examples/remote_coordinator.ts
 *
 * or, with only Node and npm:
 *
 *   npx -y deno@2 task apf coordinator --listen 127.0.0.1:7070 --config examples/web-api.yaml --mandatory-only
 *   npx -y deno@2 run --allow-net --allow-env examples/remote_coordinator.ts
 *
 * @module
 */

import { Hono } from "hono";
import { connectCoordinator } from "@apf/edge";
import { noDelayWebSocket } from "@apf/edge/deno";
import { apf, type ApfEnv } from "@apf/edge/hono";

const coordinator = connectCoordinator("ws://127.0.0.1:7070", {
  token: Deno.env.get("APF_COORDINATOR_TOKEN") ?? null,
  policy: "local", // unreachable coordinator: a small local limiter (also "open" or "closed")
  webSocket: noDelayWebSocket(), // TCP_NODELAY: Deno's own WebSocket adds ~40 ms per acquire
});
const limiter = apf({ coordinator }); // classifies with the coordinator's configuration

const app = new Hono<ApfEnv>();
app.use(limiter);
app.get("/", (c) => c.text(`served by ${c.get("apf").classification.priorityLevel.name}`));
Deno.serve({ hostname: "127.0.0.1", port: 8001 }, app.fetch);
