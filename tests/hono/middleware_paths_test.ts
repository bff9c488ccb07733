import assert from "node:assert/strict";
import { Hono } from "hono";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { SMUGGLING_PATHS } from "../_helpers/paths.ts";

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
