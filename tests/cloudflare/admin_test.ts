/**
 * `cloudflareAdminRoutes()` over level hosts in this process: the routes
 * are the admin router's, the source gathers from every level object, and
 * a level object that does not answer is left out after `timeoutMs` on the
 * injected clock.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import type { LiveFrame } from "../../src/observe/live_view.ts";
import { cloudflareAdminRoutes } from "../../src/cloudflare/admin.ts";
import type { ApfBindings } from "../../src/cloudflare/env.ts";
import { resolveConfiguration } from "../../src/config/resolve.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { SnapshotOptions } from "../../src/fairqueuing/types.ts";
import { inProcessTopology } from "./_in_process.ts";

const DEBUG = "/apf/debug/api_priority_and_fairness";
const TOKEN = "Bearer 0123456789abcdef";

/** Mandatory levels (exempt, catch-all) as level hosts, behind a fake env. */
async function setup() {
  const clock = new FakeEventClock(1_700_000_000_000);
  const config = resolveConfiguration(undefined, { mandatoryOnly: true });
  const { hosts, coordinator } = inProcessTopology(config, clock);
  const admission = await coordinator.acquire({ priorityLevel: "catch-all", flowSchema: "x" });
  assert.ok(admission.admitted);
  admission.seat.release();
  /** Levels whose object never answers. */
  const silent = new Set<string>();
  let controllerSilent = false;
  const never = new Promise<never>(() => {});
  const env = {
    APF_CONTROLLER: {
      getByName: () => ({
        configuration: () =>
          controllerSilent ? never : Promise.resolve({
            version: 1,
            configuration: { serverConcurrencyLimit: 600, mandatoryOnly: true, objects: [] },
          }),
        lastAdjustment: () => Promise.resolve({ atMs: 0, fairFraction: 0.5, levels: [] }),
      }),
    },
    APF_LEVELS: {
      getByName: (name: string) => {
        const host = hosts.get(name)!;
        const answer = <T>(value: () => T): Promise<T> =>
          silent.has(name) ? never : Promise.resolve().then(value);
        return {
          metrics: () => answer(() => host.metrics.expose()),
          snapshot: (o?: SnapshotOptions) => answer(() => host.snapshot(o)),
          sessions: () => answer(() => host.sessionsSnapshot()),
        };
      },
    },
  } as unknown as ApfBindings;
  const app = new Hono();
  app.route(
    "/apf",
    cloudflareAdminRoutes({
      authorize: (c) => c.req.header("Authorization") === TOKEN,
      env: () => env,
      timeoutMs: 100,
      clock,
    }),
  );
  app.get("/apf/other", (c) => c.text("the app's own"));
  const auth = { headers: { Authorization: TOKEN } };
  return {
    clock,
    silent,
    silenceController: () => controllerSilent = true,
    request: async (path: string, init: RequestInit = auth) => await app.request(path, init),
    [Symbol.dispose]() {
      for (const host of hosts.values()) host.close();
      coordinator.close();
      assert.equal(clock.pendingTimers, 0, "no timer left behind");
    },
  };
}

/** Lets pending promise reactions run, then moves the fake clock on. */
async function advance(clock: FakeEventClock, ms: number): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  clock.advance(ms);
}

Deno.test("cloudflareAdminRoutes merges every level object's metrics and dumps under its prefix", async () => {
  using s = await setup();
  const denied = await s.request("/apf/metrics", {});
  assert.equal(denied.status, 403);
  await denied.body?.cancel();

  const metrics = await (await s.request("/apf/metrics")).text();
  assert.match(
    metrics,
    /^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="x",priority_level="catch-all"\} 1$/m,
  );
  // One fair fraction: the controller's, not each object's own.
  assert.deepEqual(metrics.match(/^apiserver_flowcontrol_seat_fair_frac .*$/gm), [
    "apiserver_flowcontrol_seat_fair_frac 0.5",
  ]);
  assert.doesNotMatch(metrics, /did not answer/);

  const levels = await (await s.request(`${DEBUG}/dump_priority_levels?format=json`)).json();
  assert.deepEqual(
    levels.map((l: { priorityLevelName: string; dispatchedRequests: number }) => [
      l.priorityLevelName,
      l.dispatchedRequests,
    ]),
    [["catch-all", 1], ["exempt", 0]],
  );
  const sessions = await s.request(`${DEBUG}/dump_sessions?level=catch-all`);
  assert.match(await sessions.text(), /^SessionID,\s+Client,\s+State,/);
  const missing = await s.request(`${DEBUG}/dump_sessions`);
  assert.equal(missing.status, 400);
  assert.equal(await missing.text(), "Missing ?level=NAME\n");
  // The app's other routes under the prefix are left alone.
  assert.equal(await (await s.request("/apf/other")).text(), "the app's own");
  // No reload: the Cloudflare configuration changes with a deploy.
  assert.equal((await s.request("/apf/reload", { method: "POST" })).status, 404);
  // The live dashboard, under the prefix too: every level object's, in matching order.
  const page = await s.request(`${DEBUG}/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script src="dashboard\.js" defer>/);
  const live = await (await s.request(`${DEBUG}/live`)).json() as LiveFrame;
  assert.deepEqual(live.levels.map((l) => [l.name, l.dispatchedPerSecond]), [
    ["exempt", null],
    ["catch-all", null],
  ]);
  assert.equal((await s.request(`${DEBUG}/live`, {})).status, 403);
});

Deno.test("cloudflareAdminRoutes leaves out a level object that does not answer in time", async () => {
  using s = await setup();
  s.silent.add("exempt");
  const metrics = s.request("/apf/metrics");
  await advance(s.clock, 100);
  const text = await (await metrics).text();
  assert.match(text, /priority_level="catch-all"/);
  assert.doesNotMatch(text, /priority_level="exempt"/);
  assert.match(text, /^# level objects that did not answer: exempt$/m);

  const dump = s.request(`${DEBUG}/dump_priority_levels`);
  await advance(s.clock, 100);
  const rows = (await (await dump).text()).split("\n").filter((l) => l !== "");
  assert.deepEqual(rows.slice(1).map((l) => l.split(",")[0]), ["catch-all"]);

  const sessions = s.request(`${DEBUG}/dump_sessions?level=exempt`);
  await advance(s.clock, 100);
  const late = await sessions;
  assert.equal(late.status, 504);
  assert.equal(await late.text(), "The level object exempt did not answer\n");
});

Deno.test("cloudflareAdminRoutes answers 504 when the controller does not answer in time", async () => {
  using s = await setup();
  s.silenceController();
  const dump = s.request(`${DEBUG}/dump_queues`);
  await advance(s.clock, 99);
  let settled = false;
  void dump.then(() => settled = true);
  for (let i = 0; i < 20; i++) await Promise.resolve();
  assert.equal(settled, false, "not before timeoutMs");
  await advance(s.clock, 1);
  const res = await dump;
  assert.equal(res.status, 504);
  assert.equal(await res.text(), "The controller object did not answer\n");
});

Deno.test("cloudflareAdminRoutes refuses a missing authorize and a bad timeout", () => {
  assert.throws(() => cloudflareAdminRoutes({} as never), /options.authorize must be a function/);
  assert.throws(
    () => cloudflareAdminRoutes({ authorize: () => true, timeoutMs: 0 }),
    /timeoutMs must be a number > 0, got 0/,
  );
});
