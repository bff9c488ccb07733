/**
 * The example Worker (`examples/cloudflare_worker/`) plus routes only tests
 * need: one that takes a seat and ends without releasing it, one that asks
 * for a seat and goes away without waiting for the answer, and one that
 * takes a seat of `tenants` from the budget holder object of `?region=`
 * (seat budgets, the level objects keeping the ledgers) and holds it
 * `?ms=`, and `/test/upstream`: behind its own `apf()`, an upstream of
 * `?workers=` workers (default 4) taking `?ms=` (default 50) each, for the
 * learned server concurrency limit.
 *
 * @module
 */

import { Hono } from "hono";
import { apf, type ApfEnv } from "../../../src/hono/mod.ts";
import example from "../../../examples/cloudflare_worker/src/index.ts";
import {
  type ApfBindings,
  BudgetHolderObject,
  cloudflareBudgetCoordinator,
  cloudflareCoordinator,
} from "../../../src/cloudflare/mod.ts";
import type { BudgetHolderOptions } from "../../../src/budgets/holder.ts";
import type { WorkerCoordinator } from "../../../src/cloudflare/coordinator.ts";

export {
  ControllerObject,
  PriorityLevelObject,
} from "../../../examples/cloudflare_worker/src/index.ts";

/** Budget holders that settle every 100 ms and hold their share 500 ms without the ledgers. */
export class TestBudgetHolderObject extends BudgetHolderObject {
  protected override holderOptions(): Omit<BudgetHolderOptions, "store"> {
    return { periodMs: 100, leaseMs: 500, drainMs: 500, driftMarginMs: 100, storeTimeoutMs: 2_000 };
  }
}

let coordinator: WorkerCoordinator | undefined;
const budgetCoordinators = new Map<string, WorkerCoordinator>();
let inUse = 0, peak = 0;
const request = (user: string) => ({
  priorityLevel: "tenants",
  flowSchema: "tenants",
  flowHash: { hi: user.length, lo: user.charCodeAt(0) },
  distinguisher: user,
});

const app = new Hono<{ Bindings: ApfBindings } & ApfEnv>();
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
app.get("/test/budget", async (c) => {
  const region = c.req.query("region") ?? "default";
  let budgets = budgetCoordinators.get(region);
  if (budgets === undefined) {
    budgets = cloudflareBudgetCoordinator(c.env.APF_HOLDERS!, c.env.APF_CONTROLLER, { region });
    budgetCoordinators.set(region, budgets);
  }
  const user = c.req.query("user") ?? "budget";
  const a = await budgets.acquire({ ...request(user), waitLimitMs: 5_000 });
  if (!a.admitted) return c.json({ admitted: false, reason: a.reason }, 429);
  inUse++;
  peak = Math.max(peak, inUse);
  try {
    await new Promise((r) => setTimeout(r, Number(c.req.query("ms") ?? 0)));
  } finally {
    inUse--;
    a.seat.release();
  }
  return c.json({ admitted: true, peak });
});

let upstreamLimiter: ReturnType<typeof apf<{ Bindings: ApfBindings } & ApfEnv>> | undefined;
let inUpstream = 0;
app.use("/test/upstream", (c, next) => {
  upstreamLimiter ??= apf({
    coordinator: cloudflareCoordinator(c.env.APF_LEVELS, c.env.APF_CONTROLLER),
    identify: (r) => ({
      name: new URL(r.url).searchParams.get("user") ?? "upstream",
      groups: ["system:authenticated"],
    }),
  });
  return upstreamLimiter(c, next);
});
app.get("/test/upstream", async (c) => {
  // Its workers share their time: n requests in `workers` workers take n / workers times as long.
  // (A request may not wait for another's promise in workerd: it would count as hung.)
  const workers = Number(c.req.query("workers") ?? 4);
  inUpstream++;
  try {
    const ms = Number(c.req.query("ms") ?? 50) * Math.max(1, inUpstream / workers);
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    inUpstream--;
  }
  return c.json({ ok: true });
});
app.route("/", example);

export default app;
