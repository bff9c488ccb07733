/**
 * The README's quick start: APF with the built-in configuration in front of
 * a Hono app on Deno.
 *
 *   deno run --allow-net examples/quick_start.ts
 *
 * @module
 */

import { Hono } from "hono";
import { apf, type ApfEnv } from "@apf/edge/hono";

const app = new Hono<ApfEnv>();
app.use(apf()); // built-in configuration, every request anonymous
app.get("/", (c) => c.text(`served by ${c.get("apf").classification.priorityLevel.name}`));
Deno.serve(app.fetch);
