import assert from "node:assert/strict";
import { Hono } from "hono";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { loadConfiguration } from "../../mod.ts";

const alice = { name: "alice", groups: ["dev"] };

/** An app with `apf()` for alice on a fake clock, its routes added by `routes`. */
function appWith(routes: (app: Hono<ApfEnv>) => void) {
  const middleware = apf({ identify: () => alice, clock: new FakeEventClock() });
  const app = new Hono<ApfEnv>();
  app.use(middleware);
  app.onError((_error, c) => c.text("Internal Server Error", 500));
  routes(app);
  return { app, middleware };
}

function uidsOf(res: Response): [string | null, string | null] {
  return [
    res.headers.get("X-Kubernetes-PF-FlowSchema-UID"),
    res.headers.get("X-Kubernetes-PF-PriorityLevel-UID"),
  ];
}

Deno.test("apf() adds the UID headers and Server-Timing to whatever response the handler makes", async () => {
  const { app, middleware } = appWith((app) => {
    app.get("/text", (c) => c.text("hello"));
    app.get("/json", (c) => c.json({ ok: true }, 201));
    app.get("/own", () => new Response("own", { headers: { "X-Own": "1" } }));
    // Response.redirect's headers are immutable: the middleware must answer with a copy.
    app.get("/immutable", () => Response.redirect("http://127.0.0.1/elsewhere", 302));
    app.get("/throws", () => {
      throw new Error("boom");
    });
  });
  try {
    const global = middleware.configuration.flowSchemas.find((s) => s.name === "global-default")!;
    const level = middleware.configuration.priorityLevels.find((l) => l.name === "global-default")!;
    for (
      const [path, status, body] of [
        ["/text", 200, "hello"],
        ["/json", 201, '{"ok":true}'],
        ["/own", 200, "own"],
        ["/immutable", 302, ""],
        ["/throws", 500, "Internal Server Error"],
      ] as const
    ) {
      const res = await app.request(path);
      assert.equal(res.status, status, path);
      assert.equal(await res.text(), body, path);
      assert.deepEqual(uidsOf(res), [global.uid, level.uid], path);
      assert.equal(res.headers.get("Server-Timing"), "apf;dur=0", path);
    }
    assert.equal((await app.request("/own")).headers.get("X-Own"), "1");
    assert.equal(
      (await app.request("/json")).headers.get("Content-Type"),
      "application/json",
      "the handler's own headers stay",
    );
  } finally {
    middleware.close();
  }
});

Deno.test("apf() keeps the handler's Server-Timing entries and adds its own once", async () => {
  const { app, middleware } = appWith((app) => {
    app.get("/", (c) => {
      c.header("Server-Timing", "db;dur=5", { append: true });
      return c.text("hello");
    });
  });
  try {
    const res = await app.request("/");
    assert.equal(res.headers.get("Server-Timing"), "db;dur=5, apf;dur=0");
  } finally {
    middleware.close();
  }
});

Deno.test("apf() replaces UID headers the handler set, whatever their case, and keeps one of each", async () => {
  const { app, middleware } = appWith((app) => {
    app.get("/lower", (c) => {
      c.header("x-kubernetes-pf-flowschema-uid", "made-up");
      return c.text("hello");
    });
    app.get("/own", () =>
      new Response("own", {
        headers: { "X-KUBERNETES-PF-PRIORITYLEVEL-UID": "made-up", "server-timing": "db;dur=1" },
      }));
  });
  try {
    const global = middleware.configuration.flowSchemas.find((s) => s.name === "global-default")!;
    const level = middleware.configuration.priorityLevels.find((l) => l.name === "global-default")!;
    for (const path of ["/lower", "/own"]) {
      const res = await app.request(path);
      const names = [...res.headers].map(([name]) => name);
      assert.equal(names.filter((n) => n === "x-kubernetes-pf-flowschema-uid").length, 1, path);
      assert.equal(names.filter((n) => n === "x-kubernetes-pf-prioritylevel-uid").length, 1, path);
      assert.deepEqual(uidsOf(res), [global.uid, level.uid], path);
    }
    assert.equal((await app.request("/own")).headers.get("Server-Timing"), "db;dur=1, apf;dur=0");
  } finally {
    middleware.close();
  }
});

Deno.test("apf() sets a UID with blanks around it as Headers.set() does: trimmed", async () => {
  const config = loadConfiguration({
    manifests: [{
      name: "spaced.yaml",
      text: `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: spaced, uid: " spaced uid\t" }
spec:
  priorityLevelConfiguration: { name: global-default }
  matchingPrecedence: 500
  rules:
    - subjects: [{ kind: Group, group: { name: dev } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
`,
    }],
  });
  const middleware = apf({ config, identify: () => alice, clock: new FakeEventClock() });
  const app = new Hono<ApfEnv>().use(middleware).get("/", (c) => c.text("hello"));
  try {
    const res = await app.request("/");
    assert.equal(res.headers.get("X-Kubernetes-PF-FlowSchema-UID"), "spaced uid");
  } finally {
    middleware.close();
  }
});

Deno.test("a response served by Deno.serve carries the UID headers and Server-Timing on the wire", async () => {
  const { app, middleware } = appWith((app) => {
    app.get("/", (c) => c.text("hello"));
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app.fetch);
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
    assert.equal(await res.text(), "hello");
    const global = middleware.configuration.flowSchemas.find((s) => s.name === "global-default")!;
    const level = middleware.configuration.priorityLevels.find((l) => l.name === "global-default")!;
    assert.deepEqual(uidsOf(res), [global.uid, level.uid]);
    assert.equal(res.headers.get("Server-Timing"), "apf;dur=0");
    assert.equal(res.headers.get("Content-Type"), "text/plain;charset=UTF-8");
  } finally {
    await server.shutdown();
    middleware.close();
  }
});

Deno.test("apf() never reads the request's signal when the request need not wait", async () => {
  let reads = 0;
  class CountingRequest extends Request {
    override get signal(): AbortSignal {
      reads++;
      return super.signal;
    }
  }
  const { app, middleware } = appWith((app) => app.get("/", (c) => c.text("hello")));
  try {
    const res = await app.request(new CountingRequest("http://127.0.0.1/"));
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(reads, 0);
  } finally {
    middleware.close();
  }
});
