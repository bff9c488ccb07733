/**
 * The smallest Worker with APF: the snippet of `docs/cloudflare-workers.md`,
 * whole.
 * `index.ts` is the full example (identity, operators' routes, WebSocket
 * clients); point `main` in `wrangler.jsonc` here to try this one.
 *
 * @module
 */

import { Hono } from "hono";
import { apf, type ApfEnv } from "@apf/edge/hono";
import { type ApfBindings, cloudflareCoordinator } from "@apf/edge/cloudflare";
export { ControllerObject, PriorityLevelObject } from "@apf/edge/cloudflare";

let limiter: ReturnType<typeof apf<{ Bindings: ApfBindings } & ApfEnv>> | undefined;
const app = new Hono<{ Bindings: ApfBindings } & ApfEnv>();
app.use((c, next) => {
  limiter ??= apf({ coordinator: cloudflareCoordinator(c.env.APF_LEVELS, c.env.APF_CONTROLLER) });
  return limiter(c, next);
});

app.get("/", (c) => c.text(`served at ${c.get("apf").classification.priorityLevel.name}\n`));

export default app;
