/**
 * The example Worker (`examples/cloudflare_worker/`) plus routes only tests
 * need: one that takes a seat and ends without releasing it, and one that
 * asks for a seat and goes away without waiting for the answer.
 *
 * @module
 */

import { Hono } from "hono";
import example from "../../../examples/cloudflare_worker/src/index.ts";
import { type ApfBindings, cloudflareCoordinator } from "../../../src/cloudflare/mod.ts";
import type { WorkerCoordinator } from "../../../src/cloudflare/coordinator.ts";

export {
  ControllerObject,
  PriorityLevelObject,
} from "../../../examples/cloudflare_worker/src/index.ts";

let coordinator: WorkerCoordinator | undefined;
const request = (user: string) => ({
  priorityLevel: "tenants",
  flowSchema: "tenants",
  flowHash: { hi: user.length, lo: user.charCodeAt(0) },
  distinguisher: user,
});

const app = new Hono<{ Bindings: ApfBindings }>();
app.get("/test/forget", async (c) => {
  coordinator ??= cloudflareCoordinator(c.env.APF_LEVELS, c.env.APF_CONTROLLER);
  const a = await coordinator.acquire(request(c.req.query("user") ?? "forgetful"));
  // The seat is neither released nor disposed here: the request ends holding it.
  return c.json({ admitted: a.admitted });
});
app.get("/test/abandon", (c) => {
  coordinator ??= cloudflareCoordinator(c.env.APF_LEVELS, c.env.APF_CONTROLLER);
  // Asks and leaves at once: nobody will be there when the seat comes.
  void coordinator.acquire(request(c.req.query("user") ?? "gone")).then((a) => {
    if (a.admitted) a.seat.release();
  });
  return c.text("left\n", 202);
});
app.route("/", example);

export default app;
