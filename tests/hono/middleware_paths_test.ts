import assert from "node:assert/strict";
import fc from "fast-check";
import { Hono } from "hono";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { SMUGGLING_PATHS } from "../_helpers/paths.ts";
import { splitUrl } from "../../src/hono/_response.ts";

Deno.test("apf() answers 400 to a path a router or fetch() reads differently, before classifying it", async () => {
  const limiter = apf();
  const app = new Hono<ApfEnv>();
  app.use(limiter);
  let handled = 0;
  app.all("*", (c) => {
    handled++;
    return c.text("served");
  });
  try {
    for (const path of SMUGGLING_PATHS) {
      // A Request keeps the path as written only if no URL parser sees it: build the URL string.
      const req = new Request("http://app.example/");
      Object.defineProperty(req, "url", { value: `http://app.example${path}` });
      const res = await app.fetch(req);
      assert.equal(res.status, 400, path);
      assert.match(await res.text(), /^Bad Request: /, path);
    }
    assert.equal(handled, 0);
    assert.equal(limiter.metrics!.registry.expose().includes("_dispatched_requests_total{"), false);
    const ok = await app.request("/.well-known/apps.k8s.io/x.json");
    assert.equal(ok.status, 200);
    assert.equal(handled, 1);
  } finally {
    limiter.close();
  }
});

Deno.test("splitUrl finds the raw path and query as a search for the first '//' would, in any string", () => {
  // The definition, written plainly: the authority follows the first "//".
  function reference(url: string): { path: string; query: string } {
    const start = url.indexOf("/", url.indexOf("//") + 2);
    if (start < 0) return { path: "/", query: "" };
    const q = url.indexOf("?", start);
    const hash = url.indexOf("#", start);
    const end = hash < 0 ? url.length : hash;
    return q < 0 || q > end
      ? { path: url.slice(start, end), query: "" }
      : { path: url.slice(start, q), query: url.slice(q + 1, end) };
  }
  assert.deepEqual(splitUrl("http://app.example/a/b?c=d#e"), { path: "/a/b", query: "c=d" });
  assert.deepEqual(splitUrl("http://app.example"), { path: "/", query: "" });
  const piece = fc.constantFrom("/", "//", ":", "?", "#", "a", "http:", "%2F");
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 10 }), (pieces) => {
      const url = pieces.join("");
      assert.deepEqual(splitUrl(url), reference(url), url);
    }),
  );
});
