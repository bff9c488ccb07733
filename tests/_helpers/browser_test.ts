/**
 * The browser helper against a tiny site on loopback under the strict
 * Content-Security-Policy our pages will have: a page whose script fetches
 * JSON with the test's Authorization header renders cleanly (and a
 * screenshot of it is a PNG); an inline script is refused and a fetch
 * without the header fails, both collected; and the browser, its processes
 * and its profile are gone after a test body that throws. Ignored, with a
 * word, where Chromium is not installed.
 */

import assert from "node:assert/strict";
import {
  CHROMIUM_MISSING,
  chromiumPath,
  launchBrowser,
  type OpenedPage,
  openPage,
  withBrowser,
} from "./browser.ts";
import { waitFor } from "./real_time.ts";

if (CHROMIUM_MISSING) {
  console.warn(
    "Chromium is not installed (apt-get install chromium, or set CHROMIUM_PATH): the browser tests are ignored",
  );
}

const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'";
const AUTHORIZATION = "Bearer test-only-token";

const page = (scripts: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>test</title></head>` +
  `<body><p id="out">waiting</p>${scripts}</body></html>`;

/** Renders the JSON's message, or throws (unhandled: a page error) on a failed answer. */
const APP_JS = `
const answer = await fetch("/api/status");
if (!answer.ok) throw new Error("status " + answer.status);
document.getElementById("out").textContent = (await answer.json()).message;
`;

const INLINE = `<script>document.getElementById("out").textContent = "inline ran";</script>`;

interface Site extends AsyncDisposable {
  /** `http://127.0.0.1:port`. */
  readonly origin: string;
  /** `"path authorization"` for each request, in order. */
  readonly requests: string[];
}

/** `/` (loads /app.js), `/inline` (an inline script; `?csp=off` without the policy), `/api/status`. */
function serveSite(): Site {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const { pathname, searchParams } = new URL(request.url);
    const authorization = request.headers.get("authorization");
    requests.push(`${pathname} ${authorization}`);
    const csp = searchParams.get("csp") === "off" ? {} : { "content-security-policy": CSP };
    const html = (scripts: string) =>
      new Response(page(scripts), { headers: { "content-type": "text/html", ...csp } });
    switch (pathname) {
      case "/":
        return html(`<script type="module" src="/app.js"></script>`);
      case "/inline":
        return html(INLINE);
      case "/app.js":
        return new Response(APP_JS, { headers: { "content-type": "text/javascript" } });
      case "/api/status":
        return authorization === AUTHORIZATION
          ? Response.json({ message: "3 priority levels" })
          : Response.json({ error: "unauthorized" }, { status: 401 });
      default:
        return new Response("not found", { status: 404 });
    }
  });
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The text of the page's `#out`. */
const text = (opened: OpenedPage) => opened.page.$eval("#out", (e) => e.textContent);

Deno.test({
  name: "browser helper: a page under a strict CSP fetches with the test's header and renders",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    await using site = serveSite();
    await using chromium = await launchBrowser();
    const opened = await openPage(chromium.browser, `${site.origin}/`, {
      headers: { Authorization: AUTHORIZATION },
    });
    await opened.page.waitForFunction(`document.getElementById("out").textContent !== "waiting"`);
    assert.equal(await text(opened), "3 priority levels");
    assert.deepEqual(opened.consoleMessages, []);
    assert.deepEqual(opened.pageErrors, []);
    assert.deepEqual(opened.failedRequests, []);
    assert.deepEqual(site.requests, [
      `/ ${AUTHORIZATION}`,
      `/app.js ${AUTHORIZATION}`,
      `/api/status ${AUTHORIZATION}`,
    ]);

    const png = await Deno.makeTempFile({ prefix: "apf-screenshot-", suffix: ".png" });
    try {
      await opened.page.screenshot({ path: png });
      const bytes = await Deno.readFile(png);
      assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      // IHDR: the width and height of the default viewport, 800 x 600.
      const header = new DataView(bytes.buffer, bytes.byteOffset + 16, 8);
      assert.deepEqual([header.getUint32(0), header.getUint32(4)], [800, 600]);
    } finally {
      await Deno.remove(png);
    }
  },
});

Deno.test({
  name: "browser helper: an inline script refused by the CSP and a fetch refused for want of " +
    "the header are both collected",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    await using site = serveSite();
    await withBrowser(async (browser) => {
      // Without the policy the inline script runs: the page can tell.
      const open = await openPage(browser, `${site.origin}/inline?csp=off`);
      // (Its console may report a 404 of /favicon.ico, which Chromium asks for only where the
      // policy allows it: `default-src 'none'` forbids it without a word.)
      assert.equal(await text(open), "inline ran");

      const refused = await openPage(browser, `${site.origin}/inline`);
      await waitFor(() => refused.consoleMessages.length > 0, "the report of the violation");
      assert.equal(await text(refused), "waiting");
      assert.equal(refused.consoleMessages.length, 1, refused.consoleMessages.join("\n"));
      assert.match(
        refused.consoleMessages[0]!,
        new RegExp(
          "^error: Executing inline script violates the following Content Security Policy " +
            `directive 'script-src 'self''.* \\(${site.origin}/inline:1\\)$`,
        ),
      );
      assert.deepEqual(refused.pageErrors, []);
      assert.deepEqual(refused.failedRequests, []);

      const anonymous = await openPage(browser, `${site.origin}/`);
      await waitFor(
        () => anonymous.pageErrors.length > 0 && anonymous.consoleMessages.length > 0,
        "the page error and the console's report of the 401",
      );
      assert.equal(await text(anonymous), "waiting");
      assert.deepEqual(anonymous.pageErrors, ["status 401"]);
      assert.deepEqual(anonymous.failedRequests, [`GET ${site.origin}/api/status: 401`]);
      assert.deepEqual(anonymous.consoleMessages, [
        "error: Failed to load resource: the server responded with a status of 401 " +
        `(Unauthorized) (${site.origin}/api/status)`,
      ]);
    });
  },
});

async function processesMentioning(needle: string): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "pid,args"], stdout: "piped" }).output();
  return new TextDecoder().decode(ps.stdout).split("\n").filter((line) => line.includes(needle));
}

Deno.test({
  name: "browser helper: withBrowser closes Chromium, its processes and its profile when the " +
    "test body throws",
  ignore: CHROMIUM_MISSING,
  fn: async () => {
    let profile = "";
    await assert.rejects(
      withBrowser(async (browser) => {
        const flag = browser.process()?.spawnargs.find((a) => a.startsWith("--user-data-dir="));
        profile = flag?.slice("--user-data-dir=".length) ?? "";
        assert.ok(profile.startsWith(Deno.env.get("TMPDIR") ?? "/tmp"), profile);
        assert.ok((await processesMentioning(profile)).length > 1, "a browser and its helpers");
        await openPage(browser, "about:blank");
        throw new Error("the test body failed");
      }),
      /^Error: the test body failed$/,
    );
    assert.deepEqual(await processesMentioning(profile), []);
    await assert.rejects(Deno.stat(profile), Deno.errors.NotFound);
  },
});

Deno.test("browser helper: CHROMIUM_PATH, when set, is the executable, as is", () => {
  const saved = Deno.env.get("CHROMIUM_PATH");
  try {
    Deno.env.set("CHROMIUM_PATH", "/opt/chromium/chrome");
    assert.equal(chromiumPath(), "/opt/chromium/chrome");
    Deno.env.set("CHROMIUM_PATH", "");
    assert.ok(["/usr/bin/chromium", "/usr/bin/chromium-browser", null].includes(chromiumPath()));
  } finally {
    if (saved === undefined) Deno.env.delete("CHROMIUM_PATH");
    else Deno.env.set("CHROMIUM_PATH", saved);
  }
});
