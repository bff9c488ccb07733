/**
 * The server of the adaptive limit's overhead benchmark
 * (bench/adaptive_hono_wrk.sh): a hello-world Hono app on Deno, `GET /` →
 * `hello`, as bench/hono_wrk_server.ts's `apf` variant (`apf()` with the
 * embedded coordinator and the built-in configuration, every request from one
 * identified user), one variant per process:
 *
 * - `apf-static`: `apf({ identify })`, the static server concurrency limit (600);
 * - `apf-auto`: `apf({ identify, serverConcurrencyLimit: "auto" })`, the limit learned from latency.
 *
 * `GET /_adaptive`, routed before the middleware, answers the controller's
 * snapshot (`null` for `apf-static`), global-default's current limit and
 * demand, and its wait-duration histogram's sum and count lines.
 *
 * Run: `deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/adaptive_hono_server.ts <variant> [port]`.
 *
 * @module
 */

import { Hono } from "hono";
import { apf } from "../src/hono/mod.ts";

const VARIANTS = ["apf-static", "apf-auto"] as const;
type Variant = typeof VARIANTS[number];
const variant = Deno.args[0] as Variant;
if (!VARIANTS.includes(variant)) {
  throw new TypeError(
    `Cannot start: variant must be one of ${VARIANTS.join(", ")}, got ${variant}`,
  );
}
const port = Number(Deno.args[1] ?? 8000);

const alice = { name: "alice", groups: ["dev"] };
const middleware = variant === "apf-auto"
  ? apf({ identify: () => alice, serverConcurrencyLimit: "auto" })
  : apf({ identify: () => alice });

const app = new Hono();
app.get("/_adaptive", (c) => {
  const level = middleware.snapshot()?.levels.find((l) => l.name === "global-default");
  // The wait histogram's totals: how many requests waited in global-default's queues, how long.
  const waits = (middleware.metrics?.expose() ?? "").split("\n").filter((l) =>
    /^apiserver_flowcontrol_request_wait_duration_seconds_(sum|count)\{/.test(l) &&
    l.includes('priority_level="global-default"')
  );
  return c.json({
    snapshot: middleware.adaptiveSnapshot(),
    serverConcurrencyLimit: middleware.configuration.serverConcurrencyLimit,
    globalDefault: level && { currentLimit: level.currentLimit, demand: level.demand },
    waits,
  });
});
app.use(middleware);
app.get("/", (c) => c.text("hello"));

const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, app.fetch);
console.log(`listening ${variant} on 127.0.0.1:${port}`);
Deno.addSignalListener("SIGTERM", () => {
  middleware.close();
  server.shutdown();
});
