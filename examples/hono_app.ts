/**
 * A REST API on Deno with APF in front of every route.
 *
 *   deno run --allow-net --allow-read --allow-env examples/hono_app.ts
 *   npx -y deno@2 run --allow-net --allow-read --allow-env examples/hono_app.ts   # with only Node and npm
 *
 * Identity, in order: an API key (`X-Api-Key`), a JWT verified by Hono's
 * `jwt` middleware (`Authorization: Bearer …`, secret in `JWT_SECRET`), else
 * the client's address as an unauthenticated flow, so that anonymous
 * clients are fair to each other too. Operators read metrics and dumps with
 * `Authorization: Bearer $APF_ADMIN_TOKEN` (16 characters or more; without
 * it the admin routes are not mounted).
 *
 * @module
 */

import { Hono } from "hono";
import { getConnInfo } from "hono/deno";
import { jwt } from "hono/jwt";
import { jwtPayloadIdentity } from "@apf/edge";
import { apf, apfAdminRoutes, type ApfEnv, bearerToken } from "@apf/edge/hono";

const config = await Deno.readTextFile(new URL("./web-api.yaml", import.meta.url));

// API keys would come from a database; a map shows the shape.
const apiKeys = new Map([
  ["key-alice", { name: "alice", groups: ["customers"] }],
  ["key-ops", { name: "ops-bot", groups: ["admins"] }],
]);

const limiter = apf({
  config,
  mandatoryOnly: true, // this API does not use Kubernetes' suggested levels
  identify: (request, c) => {
    const key = request.headers.get("X-Api-Key");
    if (key !== null) return apiKeys.get(key); // unknown key: anonymous
    const claims = jwtPayloadIdentity(c.get("jwtPayload"));
    if (claims !== undefined) return claims;
    // Not authenticated: one flow per client address, in system:unauthenticated.
    const address = getConnInfo(c).remote.address ?? "unknown";
    return { name: `ip:${address}`, groups: ["system:unauthenticated"] };
  },
  estimate: [{ method: "POST", pattern: "/v1/reports", seats: 4 }], // an expensive endpoint
});

const app = new Hono<ApfEnv & { Variables: { jwtPayload?: unknown } }>();
const secret = Deno.env.get("JWT_SECRET");
if (secret !== undefined) {
  // Verifies tokens when present; requests without one go on unauthenticated.
  app.use("/v1/*", (c, next) => {
    if (c.req.header("Authorization") === undefined) return next();
    return jwt({ secret, alg: "HS256" })(c, next);
  });
}
app.use(limiter);

app.get("/healthz", (c) => c.text("ok")); // exempt: never waits
app.get("/v1/orders", (c) => {
  const { user, classification, waitedMs } = c.get("apf");
  return c.json({ user: user.name, level: classification.priorityLevel.name, waitedMs });
});
app.post("/v1/reports", async (c) => {
  await new Promise((resolve) => setTimeout(resolve, 200)); // holds 4 seats meanwhile
  return c.json({ report: "ready" });
});

// Mounted only with a token; bearerToken() refuses an empty or short one (it never lets in
// "Bearer undefined").
const adminToken = Deno.env.get("APF_ADMIN_TOKEN");
if (adminToken !== undefined) {
  app.route("/", apfAdminRoutes(limiter, { authorize: bearerToken(adminToken) }));
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 8000 }, app.fetch);
Deno.addSignalListener("SIGINT", async () => {
  await server.shutdown(); // in-flight requests finish
  limiter.close();
});
