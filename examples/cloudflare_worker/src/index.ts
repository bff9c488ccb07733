/**
 * A Hono app on Cloudflare Workers with API Priority and Fairness in front
 * of every route. Seats live in Durable Objects: one `PriorityLevelObject`
 * per priority level, and a `ControllerObject` that lends seats between
 * levels every 10 s. Requests are classified here, in the Worker.
 *
 * Identity comes from an API key (`X-Api-Key`, looked up below; a real app
 * would use its own auth). Without a key a request is anonymous: one flow
 * per client address (`CF-Connecting-IP`), in `system:unauthenticated`.
 *
 * Routes:
 * - `GET /` and `GET /slow?ms=N`: the app (`/slow` holds its seat N ms).
 * - `GET /apf/ws?level=NAME`: a WebSocket for `connectCoordinator()` from a
 *   Deno or Deno Deploy app (`src/protocol/PROTOCOL.md`; the token is `APF_TOKEN`).
 * - `PUT /apf/config` (manifests in the body), `POST /apf/adjust`,
 *   `GET /apf/metrics` and `GET /apf/debug/api_priority_and_fairness/dump_*`:
 *   for operators, with `Authorization: Bearer $APF_TOKEN`.
 *
 * @module
 */

import { Hono } from "hono";
import { bearerTokenCheck } from "@apf/edge";
import { apf, type ApfEnv } from "@apf/edge/hono";
import {
  type ApfBindings,
  cloudflareAdminRoutes,
  cloudflareCoordinator,
  configurationFromEnv,
} from "@apf/edge/cloudflare";

// The Durable Object classes must be exported by the Worker's entry module.
export { ControllerObject, PriorityLevelObject } from "@apf/edge/cloudflare";

type Env = ApfBindings & {
  API_KEYS?: string | Record<string, { name: string; groups?: string[] }>;
};

// API keys would come from a database or KV; a JSON variable shows the shape.
function apiKeys(env: Env): Record<string, { name: string; groups?: string[] }> {
  const keys = env.API_KEYS;
  return keys === undefined ? {} : typeof keys === "string" ? JSON.parse(keys) : keys;
}

// One limiter per isolate, made from the first request's bindings.
let limiter: ReturnType<typeof apf<{ Bindings: Env } & ApfEnv>> | undefined;

const app = new Hono<{ Bindings: Env } & ApfEnv>();

// Operators' routes first: they take no seat of the app's levels.
// bearerTokenCheck() compares in constant time and refuses a missing, empty or short token:
// with APF_TOKEN unset, nobody is let in.
const authorized = (c: { env: Env; req: { raw: Request } }): boolean => {
  try {
    return bearerTokenCheck(c.env.APF_TOKEN)(c.req.raw);
  } catch {
    return false;
  }
};
app.put("/apf/config", async (c) => {
  if (!authorized(c)) return c.text("Forbidden\n", 403);
  const controller = c.env.APF_CONTROLLER.getByName("controller");
  try {
    const stored = await controller.setConfiguration({
      ...configurationFromEnv(c.env), // the server limit and mandatoryOnly stay as deployed
      manifests: await c.req.text(),
    });
    return c.json({ version: stored.version });
  } catch (e) {
    return c.text(`refused: ${e instanceof Error ? e.message : String(e)}\n`, 400);
  }
});
app.post("/apf/adjust", async (c) => {
  if (!authorized(c)) return c.text("Forbidden\n", 403);
  const adjustment = await c.env.APF_CONTROLLER.getByName("controller").adjust();
  return c.json(adjustment);
});
// Metrics and dumps of every level object: /apf/metrics, /apf/debug/api_priority_and_fairness/dump_*.
app.route("/apf", cloudflareAdminRoutes({ authorize: authorized }));
app.get("/apf/ws", (c) => {
  const level = c.req.query("level");
  if (level === undefined) return c.text("Missing ?level=NAME\n", 400);
  // The level object checks the token in the client's hello.
  return c.env.APF_LEVELS.getByName(level).fetch(c.req.raw);
});

app.use((c, next) => {
  limiter ??= apf({
    coordinator: cloudflareCoordinator(c.env.APF_LEVELS, c.env.APF_CONTROLLER),
    identify: (request) => {
      const key = request.headers.get("X-Api-Key");
      if (key !== null) return apiKeys(c.env)[key]; // unknown key: anonymous
      const address = request.headers.get("CF-Connecting-IP") ?? "unknown";
      return { name: `ip:${address}`, groups: ["system:unauthenticated"] };
    },
  });
  return limiter(c, next);
});

app.get("/", (c) => {
  const { user, classification, waitedMs } = c.get("apf");
  return c.json({ user: user.name, level: classification.priorityLevel.name, waitedMs });
});
app.get("/slow", async (c) => {
  const ms = Math.min(Number(c.req.query("ms") ?? 100), 10_000);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return c.json({ user: c.get("apf").user.name, sleptMs: ms, at: Date.now() });
});

export default app;
