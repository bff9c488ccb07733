/**
 * APF in front of a Hono app on Deno, with the server concurrency limit
 * learned from the handlers' latency (`docs/adaptive.md`) instead of the
 * static 600 seats.
 *
 *   deno run --allow-net examples/adaptive_app.ts
 *   npx -y deno@2 run --allow-net examples/adaptive_app.ts   # with only Node and npm
 *
 * @module
 */

import { Hono } from "hono";
import { apf, type ApfEnv } from "@apf/edge/hono";

const app = new Hono<ApfEnv>();
app.use(apf({ serverConcurrencyLimit: "auto" })); // or { min: 4, max: 200, initial: 16 }
app.get("/", (c) => c.text("hello"));
Deno.serve(app.fetch);
