/**
 * The README's quick start: APF with the built-in configuration in front of
 * a Hono app on Deno.
 *
 *   deno run --allow-net examples/quick_start.ts
 *   npx -y deno@2 run --allow-net examples/quick_start.ts   # with only Node and npm
 *
 * @module
 */

import { Hono } from "hono";
import { apf, type ApfEnv } from "@apf/edge/hono";

const app = new Hono<ApfEnv>();
app.use(apf()); // built-in configuration, every request anonymous
app.get("/", (c) => c.text(`served by ${c.get("apf").classification.priorityLevel.name}`));
app.get("/slow", async (c) => {
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // holds its seat for a second
  return c.text("done\n");
});
Deno.serve(app.fetch);
