import assert from "node:assert/strict";
import { Hono } from "hono";
import { connectCoordinator, CoordinatorRefusedError } from "../../src/remote/client.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { loadConfiguration } from "../../src/config/load.ts";
import { serveCoordinator } from "../../src/deno/coordinator_server.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";

Deno.test("apf() classifies even its first request with the remote coordinator's configuration", async () => {
  await using server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    configuration: loadConfiguration({
      manifests: [{ name: "t", text: tenantsManifest({ shares: 95 }) }],
    }),
    mandatoryOnly: true,
  });
  await using client = connectCoordinator(`ws://127.0.0.1:${server.addr.port}/`, {
    policy: "closed",
  });
  const limiter = apf({ coordinator: client }); // the first request comes at once
  const app = new Hono<ApfEnv>().use(limiter).get(
    "/",
    (c) => c.text(c.get("apf").classification.priorityLevel.name),
  );
  const res = await app.request("/");
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "tenants", "not the built-in configuration's global-default");
  limiter.close();
});

Deno.test("apf() with a coordinator that refuses its token fails its requests loudly, never admits them", async () => {
  await using server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    token: "the-right-token-0123",
  });
  await using client = connectCoordinator(`ws://127.0.0.1:${server.addr.port}/`, {
    token: "a-wrong-token-456789",
    policy: "open",
  });
  const limiter = apf({ coordinator: client });
  const errors: unknown[] = [];
  const app = new Hono<ApfEnv>().use(limiter).get("/", (c) => c.text("admitted"));
  app.onError((e, c) => {
    errors.push(e);
    return c.text("error", 500);
  });
  for (let i = 0; i < 2; i++) {
    const res = await app.request("/");
    assert.equal(res.status, 500);
    assert.equal(await res.text(), "error");
  }
  assert.equal(errors.length, 2);
  assert.ok(errors.every((e) => e instanceof CoordinatorRefusedError));
  limiter.close();
});
