/**
 * The live dashboard in a real browser (headless Chromium,
 * `tests/_helpers/browser.ts`), against running servers on loopback:
 *
 * - a gateway under load (an elephant flooding the `batch` level until it
 *   is rejected, a mouse beside it, alice on `interactive`): the page shows
 *   every level in the order of the data, its numbers follow the load up and
 *   back down, the rejected flow shows in its tables, and nothing goes wrong
 *   in the page (no console error or warning, no script error, no failed
 *   request). A screenshot of the page under load goes to a temporary file,
 *   or, after 48 s of load, to `docs/dashboard.png` with
 *   `APF_WRITE_SCREENSHOT=1` and the right to write there:
 *   `APF_WRITE_SCREENSHOT=1 deno test --import-map=dev/import_map.json
 *   --lock=dev/deno.lock --allow-read --allow-run --allow-net=127.0.0.1
 *   --allow-env --allow-write=/tmp,docs tests/observe/dashboard_browser_test.ts`;
 * - admin routes behind a bearer token: the page refuses an anonymous
 *   browser with a sign-in form, the form signs in (and out) over plain
 *   HTTP to a host name that is not a secure context, the `Authorization`
 *   header lets in directly, and the token appears in nothing the browser
 *   received and in no address it asked for;
 * - a budget holder's share, with a source whose clock is not the
 *   browser's;
 * - a gateway with a learned server concurrency limit: the card of the
 *   learned limit (its chart against the seats in use, its phase, minRTT and
 *   gradient), which a static limit does not show.
 *
 * Ignored where Chromium is not installed. The waits poll the page (their
 * timeouts are the helper's); nothing sleeps a fixed time.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { loadConfiguration, resolveConfiguration } from "../../src/config/mod.ts";
import type { EffectiveConfiguration } from "../../src/config/mod.ts";
import { serveGateway } from "../../src/deno/gateway.ts";
import { apf } from "../../src/hono/mod.ts";
import { adminRouter, DASHBOARD_PATH } from "../../src/observe/admin_router.ts";
import { bearerTokenCheck } from "../../src/observe/bearer_token.ts";
import type { LiveFrame } from "../../src/observe/live_view.ts";
import type { AdminSource } from "../../src/observe/admin_source.ts";
import type { BudgetSnapshot } from "../../src/observe/types.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import {
  CHROMIUM_MISSING,
  launchBrowser,
  type OpenedPage,
  openPage,
  type Page,
} from "../_helpers/browser.ts";
import { flood } from "../_helpers/flood.ts";
import { testUpstream } from "../_helpers/upstream.ts";

/**
 * Two limited levels besides the mandatory ones: `batch` (the elephant's,
 * short queues, may borrow) and `interactive` (lends half its seats).
 */
const MANIFEST = `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: batch }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    lendablePercent: 0
    borrowingLimitPercent: 50
    limitResponse:
      type: Queue
      queuing: { queues: 8, handSize: 2, queueLengthLimit: 5 }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: interactive }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    lendablePercent: 50
    limitResponse:
      type: Queue
      queuing: { queues: 16, handSize: 4, queueLengthLimit: 10 }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: batch-jobs }
spec:
  priorityLevelConfiguration: { name: batch }
  matchingPrecedence: 500
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects: [{ kind: Group, group: { name: batch } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: interactive }
spec:
  priorityLevelConfiguration: { name: interactive }
  matchingPrecedence: 1000
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects: [{ kind: Group, group: { name: "system:authenticated" } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
`;

/** The manifest and the mandatory `exempt` and `catch-all`, on 24 seats. */
function configuration(): EffectiveConfiguration {
  const user = loadConfiguration({ manifests: [{ name: "e2e", text: MANIFEST }] });
  return resolveConfiguration(user, { mandatoryOnly: true, serverConcurrencyLimit: 24 });
}

const TOKEN = "dashboard-e2e-token-0123456789";

/** One level's card as the page shows it. */
interface LevelView {
  name: string;
  /** The tag beside the name (type, FULL). */
  tag: string;
  /** The line under the bar (seats in use / limit ...). */
  caption: string;
  /** `dl.numbers`: label → value, a number where the text is one (`"1,234.5"` → 1234.5). */
  numbers: Record<string, number | string>;
  /** Each table by its heading: its body's rows of cells (`[]` for "none"). */
  tables: Record<string, string[][]>;
  /** Points of the first line of the first chart. */
  chartPoints: number;
}

/** The page as the tests read it. */
interface DashboardView {
  /** The line under the title. */
  status: string;
  /** True when the last poll failed. */
  stale: boolean;
  /** The strip at the top: each level's line, and whether it is marked busy. */
  summary: { text: string; busy: boolean }[];
  /** Whether the page offers to sign out. */
  signOut: boolean;
  /** Charts with nothing drawn that do not say "collecting…" (empty boxes). */
  emptyCharts: number;
  /** The learned server concurrency limit's card, `null` when hidden (a static limit). */
  server: ServerView | null;
  levels: LevelView[];
}

/** The learned limit's card as the page shows it. */
interface ServerView {
  /** The line under its title. */
  caption: string;
  /** `dl.numbers`: label → value, as a level's. */
  numbers: Record<string, number | string>;
  /** Its chart's caption, keys included. */
  chart: string;
  /** Lines drawn in its chart, and the points of the first one. */
  lines: number;
  chartPoints: number;
}

/** Page-side source of a function reading a {@linkcode DashboardView} off the DOM. */
const READ_VIEW = String.raw`(() => {
  const text = (node) => (node ? node.textContent : "").trim();
  const value = (s) => {
    const n = Number(s.replace(/,/g, ""));
    return s === "" || Number.isNaN(n) ? s : n;
  };
  const status = document.getElementById("status");
  return {
    status: text(status),
    stale: status !== null && status.className === "stale",
    summary: [...document.querySelectorAll("#summary .chip")].map((c) => ({
      text: text(c),
      busy: c.classList.contains("busy"),
    })),
    signOut: document.querySelector('form[action="sign-out"]') !== null,
    emptyCharts: [...document.querySelectorAll(".chart")].filter((f) =>
      f.querySelector("path") === null && f.querySelector(".collecting") === null).length,
    server: (() => {
      const section = document.getElementById("server");
      const card = section && !section.hidden ? section.querySelector("article.server") : null;
      if (card === null) return null;
      const path = card.querySelector(".chart path");
      return {
        caption: text(card.querySelector("p.caption")),
        numbers: Object.fromEntries([...card.querySelectorAll("dl.numbers > div")].map((d) =>
          [text(d.querySelector("dt")), value(text(d.querySelector("dd")))])),
        chart: text(card.querySelector(".chart figcaption")),
        lines: card.querySelectorAll(".chart path").length,
        chartPoints: ((path && path.getAttribute("d")) || "").split(/[ML]/).length - 1,
      };
    })(),
    levels: [...document.querySelectorAll("article.level")].map((a) => ({
      name: a.dataset.level,
      tag: text(a.querySelector("header .tag")),
      caption: text(a.querySelector("p.caption")),
      numbers: Object.fromEntries([...a.querySelectorAll("dl.numbers > div")].map((d) =>
        [text(d.querySelector("dt")), value(text(d.querySelector("dd")))])),
      tables: Object.fromEntries([...a.querySelectorAll("h3")]
        .filter((h) => h.nextElementSibling && (h.nextElementSibling.tagName === "TABLE" ||
          h.nextElementSibling.textContent === "none"))
        .map((h) => [text(h), h.nextElementSibling.tagName === "TABLE"
          ? [...h.nextElementSibling.tBodies[0].rows].map((r) => [...r.cells].map(text))
          : []])),
      chartPoints: ((a.querySelector(".chart path") || { getAttribute: () => "" })
        .getAttribute("d") || "").split(/[ML]/).length - 1,
    })),
  };
})()`;

/** The page now. */
function readView(page: Page): Promise<DashboardView> {
  return page.evaluate(READ_VIEW) as Promise<DashboardView>;
}

/**
 * Waits until `condition` holds on the page: a JavaScript expression over
 * `view` (a {@linkcode DashboardView}) and `level(name)` (one of its levels).
 * Returns the view it held on (the page redraws every second: a second
 * reading could be of another frame). On a timeout (the helper's), fails
 * naming `what` with the page as it was.
 */
async function until(
  opened: OpenedPage,
  what: string,
  condition: string,
): Promise<DashboardView> {
  const expression = `(() => { const view = ${READ_VIEW}; ` +
    `const level = (name) => view.levels.find((l) => l.name === name) || { numbers: {}, tables: {} }; ` +
    `return (${condition}) && view; })()`;
  try {
    const held = await opened.page.waitForFunction(expression, { polling: 100 });
    return await held.jsonValue() as DashboardView;
  } catch (error) {
    const view = await readView(opened.page).catch((e) => String(e));
    throw new assert.AssertionError({
      message: `waiting for ${what}: ${error instanceof Error ? error.message : error}\n` +
        `the page: ${JSON.stringify(view, null, 1)}\n` +
        `its console: ${JSON.stringify(opened.consoleMessages)}; errors: ${
          JSON.stringify(opened.pageErrors)
        }; failed requests: ${JSON.stringify(opened.failedRequests)}`,
    });
  }
}

function level(view: DashboardView, name: string): LevelView {
  const found = view.levels.find((l) => l.name === name);
  assert.ok(found !== undefined, `no level ${name} in ${view.levels.map((l) => l.name)}`);
  return found;
}

const WROTE_SCREENSHOT = Deno.env.get("APF_WRITE_SCREENSHOT") === "1";
const SCREENSHOT = new URL("../../docs/dashboard.png", import.meta.url);
/** Seconds of load in the charts of the screenshot: more for the one in docs/. */
const CHART_POINTS = WROTE_SCREENSHOT ? 48 : 8;

/** Full page, 1280 wide: to `docs/dashboard.png` with `APF_WRITE_SCREENSHOT=1`, else a temp file. */
async function screenshot(page: Page): Promise<Uint8Array> {
  await page.setViewport({ width: 1280, height: 800 });
  const path = WROTE_SCREENSHOT
    ? SCREENSHOT.pathname
    : await Deno.makeTempFile({ prefix: "apf-dashboard-", suffix: ".png" });
  try {
    await page.screenshot({ path: path as `${string}.png`, fullPage: true });
    return await Deno.readFile(path);
  } finally {
    if (!WROTE_SCREENSHOT) await Deno.remove(path);
  }
}

Deno.test({
  name: "dashboard in a browser: a gateway under load shows every level, its numbers follow " +
    "the load up and down, the rejected flow shows, and the page logs no error",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    await using upstream = testUpstream({ sleepMs: 150 });
    await using gateway = serveGateway({
      upstream: upstream.url,
      config: configuration(),
      listen: { hostname: "127.0.0.1", port: 0 },
      adminListen: { hostname: "127.0.0.1", port: 0 },
      trustIdentityHeaders: true,
    });
    await using chromium = await launchBrowser();
    const admin = `http://127.0.0.1:${gateway.adminAddr!.port}`;
    const work = `http://127.0.0.1:${gateway.addr.port}/work`;

    const opened = await openPage(chromium.browser, `${admin}${DASHBOARD_PATH}`);
    // The first frame: every chart draws its points or says it is collecting them.
    const first = await until(opened, "a first frame", `view.levels.length > 0`);
    assert.equal(first.emptyCharts, 0, "no empty chart box");
    assert.equal(first.signOut, false, "nobody signed in: no sign-out button");
    assert.equal(first.server, null, "a static limit: no card of a learned one");
    // A second frame: the rates are known (0), not "–".
    const idle = await until(
      opened,
      "a second frame",
      `typeof level("batch").numbers["dispatched /s"] === "number"`,
    );

    // Every level of the configuration, one card each, in the order of the data.
    const frame = await (await fetch(`${admin}${DASHBOARD_PATH}live`)).json() as LiveFrame;
    const names = frame.levels.map((l) => l.name);
    assert.deepEqual(names, ["exempt", "batch", "interactive", "catch-all"]);
    assert.deepEqual(
      [...names].sort(),
      gateway.middleware.configuration.priorityLevels.map((l) => l.name).sort(),
    );
    assert.deepEqual(idle.levels.map((l) => l.name), names);
    // The strip at the top: every level, in the same order, none busy yet.
    assert.deepEqual(idle.summary.map((c) => c.text.split(" ")[0]), names);
    assert.deepEqual(idle.summary.filter((c) => c.busy), []);
    assert.match(idle.status, /^4 priority levels · server limit 24 seats · updated /);
    assert.equal(idle.stale, false);
    const before = level(idle, "batch");
    assert.deepEqual(
      [before.numbers["executing"], before.numbers["dispatched /s"], before.numbers["rejected /s"]],
      [0, 0, 0],
    );
    assert.deepEqual(before.tables["Flow schemas rejected most"], []);
    assert.deepEqual(before.tables["Top flows by requests waiting"], []);

    {
      // The elephant floods `batch` (10 seats, 15 with borrowing; 2 queues of 5 a flow); a mouse
      // shares the level, alice has `interactive`.
      await using _elephant = flood(work, {
        user: "elephant",
        groups: ["batch"],
        loops: 40,
        pauseMs: 200,
      });
      await using _mouse = flood(work, {
        user: "mouse",
        groups: ["batch"],
        loops: 1,
        pauseMs: 50,
        thinkMs: 50,
      });
      await using _alice = flood(work, { user: "alice", loops: 1, pauseMs: 50, thinkMs: 50 });

      const busy = await until(
        opened,
        "the batch level at work, full, the elephant waiting and rejected",
        `level("batch").numbers["executing"] > 0 && level("batch").numbers["dispatched /s"] > 0 && ` +
          `level("batch").numbers["queue-full /s"] > 0 && / FULL/.test(level("batch").tag) && ` +
          `level("batch").tables["Flow schemas rejected most"].some((r) => ` +
          `r[0] === "batch-jobs" && r[1] === "queue-full") && ` +
          `level("batch").tables["Top flows by requests waiting"].some((r) => ` +
          `r[0] === "batch-jobs" && r[1] === "elephant")`,
      );
      const batch = level(busy, "batch");
      assert.ok(
        busy.summary.some((c) => c.busy && c.text.startsWith("batch ")),
        `batch marked busy at the top: ${JSON.stringify(busy.summary)}`,
      );
      assert.equal(batch.numbers["rejected /s"], batch.numbers["queue-full /s"]);
      assert.ok(
        batch.tables["Top flows by seats in use"]!.some((r) => r[1] === "elephant"),
        JSON.stringify(batch.tables),
      );
      // Alice's level is not the elephant's: she gets through, never rejected.
      await until(
        opened,
        "alice served on interactive",
        `level("interactive").numbers["dispatched /s"] > 0 && ` +
          `level("interactive").numbers["rejected /s"] === 0`,
      );

      // For the screenshot: seconds of charts (8 at a time: one wait and its DevTools call must
      // end within the helper's timeouts), and the elephant both waiting and rejected.
      for (let points = 8; points <= CHART_POINTS; points += 8) {
        await until(
          opened,
          `${points} points in the charts, under load`,
          `level("batch").chartPoints >= ${points} && ` +
            `level("batch").tables["Flow schemas rejected most"].length > 0 && ` +
            `level("batch").tables["Top flows by requests waiting"].length > 0`,
        );
      }
      const png = await screenshot(opened.page);
      assert.ok(png.length < 400_000, `the screenshot takes ${png.length} bytes`);
    }

    // The load stopped: the level empties and its rates fall back to 0.
    const after = await until(
      opened,
      "the batch level idle again",
      `level("batch").numbers["executing"] === 0 && ` +
        `level("batch").numbers["requests waiting"] === 0 && ` +
        `level("batch").numbers["dispatched /s"] === 0 && ` +
        `level("batch").tables["Top flows by seats in use"].length === 0`,
    );
    assert.equal(after.stale, false);
    assert.deepEqual(opened.consoleMessages, []);
    assert.deepEqual(opened.pageErrors, []);
    assert.deepEqual(opened.failedRequests, []);
  },
});

/** What a page asked for and received, to look for a secret in. */
interface Traffic {
  /** `"METHOD url"` of every request. */
  readonly requests: string[];
  /** `"url: body"` of every answer that has a body (redirects have none). */
  readonly bodies: Promise<string>[];
}

/** Records the requests of `page` and the bodies of its answers, from now on. */
function record(page: Page): Traffic {
  const traffic: Traffic = { requests: [], bodies: [] };
  page.on("request", (request) => {
    traffic.requests.push(`${request.method()} ${request.url()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 300 && response.status() < 400) return;
    // Read at once: a body is gone once the page navigates away.
    traffic.bodies.push(
      response.text().then(
        (body) => `${response.url()}: ${body}`,
        (e) => `${response.url()}: (unreadable: ${e instanceof Error ? e.message : e})`,
      ),
    );
  });
  return traffic;
}

Deno.test({
  name:
    "dashboard in a browser: behind a bearer token, an anonymous browser gets a sign-in form, " +
    "signs in and out without the token in anything it received or asked for; the header lets in",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    const middleware = apf({ config: configuration() });
    using _middleware = { [Symbol.dispose]: () => middleware.close() };
    const app = new Hono();
    app.use(middleware);
    app.get("*", (c) => c.text("ok"));
    const router = adminRouter(middleware, { authorize: bearerTokenCheck(TOKEN) });
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (request) => (await router(request)) ?? app.fetch(request),
    );
    // `dashboard.test` is loopback too, but not a secure context: the browser sends no
    // Sec-Fetch-Site there, as over plain HTTP to an operator's host.
    await using chromium = await launchBrowser({
      args: ["--host-resolver-rules=MAP dashboard.test 127.0.0.1"],
    });
    const port = server.addr.port;
    const names = ["exempt", "batch", "interactive", "catch-all"];
    const rendered = `view.levels.map((l) => l.name).join() === ${JSON.stringify(names.join())}`;
    const traffic: Traffic[] = [];

    // With the header, the page renders at once.
    const withHeader = await openPage(chromium.browser, "about:blank", {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    traffic.push(record(withHeader.page));
    await withHeader.page.goto(`http://127.0.0.1:${port}${DASHBOARD_PATH}`);
    await until(withHeader, "the levels, with the header", rendered);
    assert.deepEqual(withHeader.consoleMessages, []);
    assert.deepEqual(withHeader.pageErrors, []);
    assert.deepEqual(withHeader.failedRequests, []);
    await withHeader.page.close();

    // Without it: 403, and a form for the token.
    const origin = `http://dashboard.test:${port}`;
    const page = `${origin}${DASHBOARD_PATH}`;
    const opened = await openPage(chromium.browser, "about:blank");
    traffic.push(record(opened.page));
    const refused = await opened.page.goto(page);
    assert.equal(refused?.status(), 403);
    assert.equal(await opened.page.title(), "API Priority and Fairness: sign in");
    assert.equal(
      await opened.page.$eval("form input[name=token]", (e) => e.getAttribute("type")),
      "password",
    );
    const forbidden = [
      `error: Failed to load resource: the server responded with a status of 403 (Forbidden) (${page})`,
    ];
    assert.deepEqual(opened.consoleMessages, forbidden);
    assert.deepEqual(opened.failedRequests, [`GET ${page}: 403`]);

    // Signing in shows the dashboard, with the token in an HttpOnly cookie only.
    await opened.page.type("input[name=token]", TOKEN);
    const [signedIn] = await Promise.all([
      opened.page.waitForNavigation(),
      opened.page.click("form button[type=submit]"),
    ]);
    assert.equal(signedIn?.status(), 200);
    assert.equal(opened.page.url(), page);
    const signedInView = await until(opened, "the levels, signed in", `${rendered} && !view.stale`);
    assert.equal(signedInView.signOut, true, "signed in: the page offers to sign out");
    assert.equal(await opened.page.evaluate("document.cookie"), "", "HttpOnly");
    const cookies = await chromium.browser.cookies();
    assert.deepEqual(
      cookies.map((c) => [c.name, c.domain, c.path, c.httpOnly, c.sameSite]),
      [["apf_admin_token", "dashboard.test", DASHBOARD_PATH, true, "Strict"]],
    );
    assert.ok(!(await opened.page.content()).includes(TOKEN), "not in the page's HTML");
    assert.deepEqual(opened.consoleMessages, forbidden, "no error but the first 403");
    assert.deepEqual(opened.pageErrors, []);
    assert.deepEqual(opened.failedRequests, [`GET ${page}: 403`]);

    // Signing out: the next page is the form again.
    const [signedOut] = await Promise.all([
      opened.page.waitForNavigation(),
      opened.page.click("footer form button[type=submit]"),
    ]);
    assert.equal(signedOut?.status(), 403);
    assert.equal(await opened.page.title(), "API Priority and Fairness: sign in");
    assert.deepEqual(await chromium.browser.cookies(), []);

    const requests = traffic.flatMap((t) => t.requests);
    assert.ok(requests.some((r) => r === `POST ${page}sign-in`), requests.join("\n"));
    assert.ok(requests.some((r) => r.startsWith(`GET ${page}live`)));
    const bodies = await Promise.all(traffic.flatMap((t) => t.bodies));
    assert.ok(bodies.some((b) => b.startsWith(`${page}dashboard.js: "use strict"`)));
    assert.ok(bodies.some((b) => b.startsWith(`${page}dashboard.css: :root`)));
    for (const secret of [TOKEN, encodeURIComponent(TOKEN), btoa(TOKEN)]) {
      assert.deepEqual(requests.filter((r) => r.includes(secret)), [], "in no address");
      assert.deepEqual(bodies.filter((b) => b.includes(secret)), [], "in no answer");
    }
  },
});

Deno.test({
  name: "dashboard in a browser: a budget holder's share, its lease counted on the server's " +
    "clock, not the browser's",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    // The source's wall clock is years behind the browser's.
    const clock = new FakeEventClock(1_700_000_000_000);
    const coordinator = new EmbeddedCoordinator(configuration(), { clock });
    using _coordinator = { [Symbol.dispose]: () => coordinator.close() };
    const source: AdminSource = {
      snapshot: (options) => {
        const snapshot = coordinator.snapshot(options);
        const budget: BudgetSnapshot = {
          limit: 40,
          target: 10,
          claim: 12,
          capacity: 11,
          leaseEndsAt: snapshot.wallClockMs + 7_000,
          mode: "budget",
        };
        for (const l of snapshot.levels) if (l.name === "batch") l.budget = budget;
        return snapshot;
      },
      metrics: null,
    };
    const router = adminRouter(source, { authorize: () => true });
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      async (request) => (await router(request)) ?? new Response("not found", { status: 404 }),
    );
    await using chromium = await launchBrowser();
    const opened = await openPage(
      chromium.browser,
      `http://127.0.0.1:${server.addr.port}${DASHBOARD_PATH}`,
    );
    await until(opened, "the batch level's budget", `level("batch").numbers["mode"] === "budget"`);
    const batch = level(await readView(opened.page), "batch");
    assert.deepEqual(
      ["level limit", "fair share", "claimed", "may use", "mode", "lease left"].map((k) =>
        batch.numbers[k]
      ),
      ["40 seats", "10 seats", "12 seats", "11 seats", "budget", "7 s"],
    );
    assert.equal(level(await readView(opened.page), "interactive").numbers["mode"], undefined);
    assert.deepEqual(opened.consoleMessages, []);
    assert.deepEqual(opened.pageErrors, []);
    assert.deepEqual(opened.failedRequests, []);
  },
});

Deno.test({
  name: "dashboard in a browser: a learned server concurrency limit gets its card, its chart " +
    "against the seats in use and the controller's state",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    await using upstream = testUpstream({ sleepMs: 20 });
    await using gateway = serveGateway({
      upstream: upstream.url,
      config: configuration(),
      serverConcurrencyLimit: { min: 3, max: 200, initial: 20 },
      listen: { hostname: "127.0.0.1", port: 0 },
      adminListen: { hostname: "127.0.0.1", port: 0 },
      trustIdentityHeaders: true,
    });
    await using chromium = await launchBrowser();
    const admin = `http://127.0.0.1:${gateway.adminAddr!.port}`;
    await using _load = flood(`http://127.0.0.1:${gateway.addr.port}/work`, {
      user: "alice",
      loops: 4,
      pauseMs: 20,
      thinkMs: 20,
    });
    const opened = await openPage(chromium.browser, `${admin}${DASHBOARD_PATH}`);
    // Two frames at least: the chart draws both lines.
    const view = await until(
      opened,
      "the learned limit's chart",
      `view.server !== null && view.server.lines === 2 && view.server.chartPoints >= 2`,
    );
    const server = view.server!;
    assert.equal(view.emptyCharts, 0, "no empty chart box");
    // The caption, then a key per line, then the scale (the figcaption's text, run together).
    assert.match(
      server.chart,
      /^server concurrency: learned limit vs seats in uselearned limitseats in usetop \d+$/,
    );
    assert.match(server.caption, /^\d+ \/ \d+ seats in use over the limited levels · estimate /);
    assert.ok(
      ["warming-up", "measuring-min-rtt", "sampling"].includes(String(server.numbers["phase"])),
      JSON.stringify(server.numbers),
    );
    assert.deepEqual(Object.keys(server.numbers), [
      "phase",
      "minRTT",
      "sampleRTT",
      "gradient",
      "sample windows",
      "minRTT measurements",
    ]);
    assert.match(view.status, /^4 priority levels · server limit \d+ seats \(learned\) · updated /);
    // The card's numbers are the data's.
    const frame = await (await fetch(`${admin}${DASHBOARD_PATH}live`)).json() as LiveFrame;
    assert.ok(frame.adaptive !== undefined);
    assert.equal(frame.adaptive.limit, frame.serverConcurrencyLimit);
    assert.deepEqual(opened.consoleMessages, []);
    assert.deepEqual(opened.pageErrors, []);
    assert.deepEqual(opened.failedRequests, []);
  },
});
