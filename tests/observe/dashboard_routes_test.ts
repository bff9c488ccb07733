/**
 * The dashboard's routes on the admin router: the page and its files under a
 * strict Content-Security-Policy, its data, the same authorization as every
 * admin route (403 without it, a sign-in form for the page), the sign-in
 * cookie (same origin only, HttpOnly, scoped to the dashboard, GET only), and
 * no secret in anything served.
 */

import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { resolveConfiguration } from "../../src/config/resolve.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { adminRouter, DEBUG_PREFIX } from "../../src/observe/admin_router.ts";
import type { AdminSource } from "../../src/observe/admin_source.ts";
import { bearerTokenCheck } from "../../src/observe/bearer_token.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import type { LiveFrame } from "../../src/observe/live_view.ts";

const TOKEN = "s3cret-admin-token-0123456789";
const PAGE = `${DEBUG_PREFIX}/`;

function setup() {
  const clock = new FakeEventClock(1_700_000_000_000);
  const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
    snapshot: () => coordinator.snapshot(),
  });
  const coordinator = new EmbeddedCoordinator(resolveConfiguration(undefined), {
    clock,
    metrics,
  });
  const reads: string[] = [];
  const source: AdminSource = {
    snapshot: (o) => {
      reads.push("snapshot");
      return coordinator.snapshot(o);
    },
    metrics: {
      expose: () => {
        reads.push("metrics");
        return metrics.expose();
      },
    },
    levelOrder: () => ["workload-high", "global-default"],
    reload: () => Promise.resolve({ applied: true as const, summary: "no change" }),
  };
  const router = adminRouter(source, { authorize: bearerTokenCheck(TOKEN), clock });
  return {
    clock,
    router,
    reads,
    [Symbol.dispose]() {
      coordinator.close();
    },
  };
}

const bearer = { Authorization: `Bearer ${TOKEN}` };
const call = async (
  router: ReturnType<typeof setup>["router"],
  path: string,
  init: RequestInit = {},
): Promise<Response> => {
  const res = await router(new Request(`http://127.0.0.1:9000${path}`, init));
  assert.ok(res !== null, `${path} is a route`);
  return res;
};

Deno.test("dashboard: the page, its files and its data, under a strict CSP, with no secret", async () => {
  using s = setup();
  const page = await call(s.router, PAGE, { headers: bearer });
  assert.equal(page.status, 200);
  assert.match(page.headers.get("Content-Type")!, /^text\/html/);
  const csp = page.headers.get("Content-Security-Policy")!;
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe/);
  assert.equal(page.headers.get("X-Content-Type-Options"), "nosniff");
  // No image: no request for /favicon.ico, which the admin listener answers 404.
  assert.doesNotMatch(csp, /img-src/);
  // The sign-in form's POST carries its Origin (under no-referrer it would be "null").
  assert.equal(page.headers.get("Referrer-Policy"), "same-origin");
  const html = await page.text();
  assert.match(html, /<script src="dashboard\.js" defer><\/script>/);
  assert.doesNotMatch(html, /<script>|<style|\sstyle=|\son[a-z]+=/, "no inline script or style");
  const bodies = [html];
  for (const [file, type] of [["dashboard.js", /javascript/], ["dashboard.css", /text\/css/]]) {
    const res = await call(s.router, `${PAGE}${file}`, { headers: bearer });
    assert.equal(res.status, 200, file as string);
    assert.match(res.headers.get("Content-Type")!, type as RegExp);
    bodies.push(await res.text());
  }
  const live = await call(s.router, `${PAGE}live?history=1`, { headers: bearer });
  assert.equal(live.status, 200);
  assert.equal(live.headers.get("Content-Type"), "application/json");
  const text = await live.text();
  bodies.push(text);
  const frame = JSON.parse(text) as LiveFrame;
  assert.deepEqual(
    frame.levels.slice(0, 3).map((l) => l.name),
    ["exempt", "workload-high", "global-default"],
    "the source's matching order (a level it does not name after them, the exempt one first)",
  );
  assert.ok(frame.history !== undefined);
  for (const body of bodies) assert.ok(!body.includes(TOKEN), "no token in what is served");
  // Without the slash: redirected to the page.
  const bare = await call(s.router, DEBUG_PREFIX, { headers: bearer });
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get("Location"), PAGE);
  // HEAD as GET.
  const head = await call(s.router, PAGE, { method: "HEAD", headers: bearer });
  assert.equal(head.status, 200);
  assert.equal(head.body, null);
});

Deno.test("dashboard: without authorization every part answers 403 and reads nothing; the page offers a sign-in form", async () => {
  using s = setup();
  for (const path of [PAGE, `${PAGE}dashboard.js`, `${PAGE}dashboard.css`, `${PAGE}live`]) {
    for (const headers of [{}, { Authorization: "Bearer wrong-token-0123456789" }]) {
      const res = await call(s.router, path, { headers });
      assert.equal(res.status, 403, path);
      const body = await res.text();
      assert.ok(!body.includes(TOKEN));
      if (path === PAGE) assert.match(body, /<form method="post" action="sign-in">/);
    }
  }
  assert.deepEqual(s.reads, []);
});

Deno.test("dashboard: signing in keeps the token in a cookie for these pages, for GET only; cross-site cannot", async () => {
  using s = setup();
  const form = (token: string) => {
    const body = new FormData();
    body.set("token", token);
    return body;
  };
  // A form posted from another site sets nothing.
  const cross = await call(s.router, `${PAGE}sign-in`, {
    method: "POST",
    body: form(TOKEN),
    headers: { "Sec-Fetch-Site": "cross-site" },
  });
  assert.equal(cross.status, 403);
  assert.equal(cross.headers.get("Set-Cookie"), null);
  const foreign = await call(s.router, `${PAGE}sign-in`, {
    method: "POST",
    body: form(TOKEN),
    headers: { Origin: "https://evil.example" },
  });
  assert.equal(foreign.status, 403);

  // Over plain HTTP to a host that is not loopback a browser sends no Sec-Fetch-Site: the
  // Origin decides.
  const plain = await call(s.router, `${PAGE}sign-in`, {
    method: "POST",
    body: form(TOKEN),
    headers: { Origin: "http://127.0.0.1:9000" },
  });
  assert.equal(plain.status, 303);
  assert.match(plain.headers.get("Set-Cookie")!, /^apf_admin_token=/);

  const signIn = await call(s.router, `${PAGE}sign-in`, {
    method: "POST",
    body: form(TOKEN),
    headers: { "Sec-Fetch-Site": "same-origin" },
  });
  assert.equal(signIn.status, 303);
  assert.equal(signIn.headers.get("Location"), "./");
  const cookie = signIn.headers.get("Set-Cookie")!;
  assert.match(cookie, /^apf_admin_token=[^;]+; Path=\/debug\/api_priority_and_fairness\/;/);
  assert.match(cookie, /; HttpOnly/);
  assert.match(cookie, /; SameSite=Strict/);
  const jar = cookie.split(";")[0]!;
  // The cookie lets in the page and its data...
  assert.equal((await call(s.router, PAGE, { headers: { Cookie: jar } })).status, 200);
  const live = await call(s.router, `${PAGE}live`, { headers: { Cookie: `a=b; ${jar}` } });
  assert.equal(live.status, 200);
  await live.body?.cancel();
  // ...but not a POST, and a wrong one nothing.
  assert.equal(
    (await call(s.router, "/reload", { method: "POST", headers: { Cookie: jar } })).status,
    403,
  );
  const wrong = await call(s.router, PAGE, { headers: { Cookie: "apf_admin_token=wrong" } });
  assert.equal(wrong.status, 403);
  assert.match(await wrong.text(), /The token you signed in with was not accepted/);
  const anonymous = await call(s.router, PAGE);
  assert.doesNotMatch(await anonymous.text(), /not accepted/);
  // Only a browser signed in with the cookie is offered to sign out.
  const page = await (await call(s.router, PAGE, { headers: { Cookie: jar } })).text();
  assert.match(page, /<form method="post" action="sign-out">/);
  const viaHeader = await (await call(s.router, PAGE, { headers: bearer })).text();
  assert.doesNotMatch(viaHeader, /sign-out/);
  // An empty token or one a cookie cannot carry is refused.
  for (const bad of ["", "has space", 'quote"d']) {
    const res = await call(s.router, `${PAGE}sign-in`, { method: "POST", body: form(bad) });
    assert.equal(res.status, 400, JSON.stringify(bad));
    assert.equal(res.headers.get("Set-Cookie"), null);
  }
  // Signing out clears it.
  const out = await call(s.router, `${PAGE}sign-out`, {
    method: "POST",
    headers: { "Sec-Fetch-Site": "same-origin" },
  });
  assert.equal(out.status, 303);
  assert.match(out.headers.get("Set-Cookie")!, /^apf_admin_token=; .*Max-Age=0/);
});

Deno.test("dashboard: a page polled by many costs one sample a second", async () => {
  using s = setup();
  for (let i = 0; i < 20; i++) {
    const res = await call(s.router, `${PAGE}live`, { headers: bearer });
    await res.body?.cancel();
  }
  assert.equal(s.reads.filter((r) => r === "snapshot").length, 1);
  s.clock.advance(1_000);
  await (await call(s.router, `${PAGE}live`, { headers: bearer })).body?.cancel();
  assert.equal(s.reads.filter((r) => r === "snapshot").length, 2);
});
