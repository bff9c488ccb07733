import assert from "node:assert/strict";
import { Hono } from "hono";
import { FakeEventClock, frontProxyIdentity } from "../../mod.ts";
import { objectUid } from "../../src/config/mod.ts";
import { apf, type ApfEnv, type ApfOptions } from "../../src/hono/mod.ts";
import {
  FLOW_SCHEMA_UID_HEADER,
  PRIORITY_LEVEL_UID_HEADER,
  TOO_MANY_REQUESTS_BODY,
} from "../../src/hono/_response.ts";
import { settle } from "../_helpers/settle.ts";
import { slowRoute, tinyConfig } from "./_helpers.ts";

function setup(options: Partial<ApfOptions> = {}, queueLengthLimit = 0) {
  const clock = new FakeEventClock(100_000);
  const limiter = apf({
    config: tinyConfig(queueLengthLimit),
    identify: frontProxyIdentity(),
    clock,
    ...options,
  });
  const app = new Hono<ApfEnv>();
  app.use(limiter);
  return { app, clock, limiter };
}

const dev = (user: string, extra: Record<string, string> = {}) => ({
  headers: { "X-Remote-User": user, "X-Remote-Group": "dev", ...extra },
});

function level(limiter: ReturnType<typeof apf>, name: string) {
  return limiter.snapshot()!.levels.find((l) => l.name === name)!.queueSet;
}

Deno.test("a served response carries the UID headers and Server-Timing; handlers see c.get('apf')", async () => {
  const { app, limiter } = setup();
  app.get("/hello", (c) => {
    const s = c.get("apf");
    return c.text(
      `${s.user.name} ${s.classification.flowSchema.name} ${s.classification.priorityLevel.name} ${s.work.initialSeats} ${s.waitedMs}`,
    );
  });
  const res = await app.request("/hello", dev("alice"));
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "alice devs tiny 1 0");
  assert.equal(res.headers.get(FLOW_SCHEMA_UID_HEADER), "devs-schema-uid");
  assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER), "tiny-level-uid");
  assert.equal(res.headers.get("Server-Timing"), "apf;dur=0");
  // Anonymous requests fall to catch-all, whose built-in objects have derived UIDs.
  const anon = await app.request("/hello");
  assert.equal(anon.headers.get(FLOW_SCHEMA_UID_HEADER), objectUid("FlowSchema", "catch-all"));
  assert.equal(
    anon.headers.get(PRIORITY_LEVEL_UID_HEADER),
    objectUid("PriorityLevelConfiguration", "catch-all"),
  );
  assert.equal(level(limiter, "tiny").seatsInUse, 0);
  limiter.close();
});

Deno.test("a handler returning its own Response still gets the headers", async () => {
  const { app, limiter } = setup();
  app.get("/raw", () => new Response("raw", { headers: { "X-Own": "1" } }));
  const res = await app.request("/raw", dev("alice"));
  assert.equal(await res.text(), "raw");
  assert.equal(res.headers.get("X-Own"), "1");
  assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER), "tiny-level-uid");
  assert.equal(res.headers.get("Server-Timing"), "apf;dur=0");
  limiter.close();
});

Deno.test("a rejected request gets Kubernetes' 429: body, Retry-After, content type, nosniff, UIDs", async () => {
  const { app, limiter } = setup();
  const held = slowRoute(app);
  const first = app.request("/slow", dev("alice"));
  await settle();
  const res = await app.request("/slow", dev("bob"));
  assert.equal(res.status, 429);
  assert.equal(await res.text(), TOO_MANY_REQUESTS_BODY);
  assert.equal(TOO_MANY_REQUESTS_BODY, "Too many requests, please try again later.\n");
  assert.equal(res.headers.get("Retry-After"), "1");
  assert.equal(res.headers.get("Content-Type"), "text/plain; charset=utf-8");
  assert.equal(res.headers.get("X-Content-Type-Options"), "nosniff");
  assert.equal(res.headers.get(FLOW_SCHEMA_UID_HEADER), "devs-schema-uid");
  assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER), "tiny-level-uid");
  assert.equal(res.headers.get("Server-Timing"), null);
  held.open();
  assert.equal((await first).status, 200);
  limiter.close();
});

Deno.test("Retry-After grows under sustained drops (docs/semantics.md §7.4)", async () => {
  const { app, clock, limiter } = setup();
  const held = slowRoute(app);
  const holder = app.request("/slow", dev("alice"));
  await settle();
  const seen: string[] = [];
  for (let second = 0; second < 4; second++) {
    let last = "";
    for (let i = 0; i < 10; i++) {
      last = (await app.request("/slow", dev(`u${i}`))).headers.get("Retry-After")!;
    }
    seen.push(last);
    clock.advance(1000);
  }
  // The golden sequence's first seconds: 10 drops a second give 1, 2, 2, 4.
  assert.deepEqual(seen, ["1", "2", "2", "4"]);
  held.open();
  await holder;
  limiter.close();
});

Deno.test("exempt requests never wait, even when their peers' levels are full", async () => {
  const { app, limiter } = setup();
  const held = slowRoute(app);
  const holder = app.request("/slow", dev("alice"));
  await settle();
  const admins = await Promise.all(
    [1, 2, 3].map(() =>
      app.request("/fast", {
        headers: { "X-Remote-User": "root", "X-Remote-Group": "system:masters" },
      })
    ),
  );
  assert.deepEqual(admins.map((r) => r.status), [404, 404, 404]);
  assert.equal(
    admins[0]!.headers.get(PRIORITY_LEVEL_UID_HEADER),
    objectUid("PriorityLevelConfiguration", "exempt"),
  );
  held.open();
  await holder;
  limiter.close();
});

Deno.test("a client that disconnects while queued leaves the queue and gets a 429", async () => {
  const { app, limiter } = setup({}, 5);
  const held = slowRoute(app);
  const holder = app.request("/slow", dev("alice"));
  await settle();
  const controller = new AbortController();
  const queued = app.request(
    new Request("http://localhost/slow", { ...dev("bob"), signal: controller.signal }),
  );
  await settle();
  assert.equal(level(limiter, "tiny").waitingRequests, 1);
  controller.abort();
  const res = await queued;
  assert.equal(res.status, 429);
  assert.equal(level(limiter, "tiny").waitingRequests, 0);
  assert.equal(level(limiter, "tiny").rejected.cancelled, 1);
  held.open();
  await holder;
  assert.equal(level(limiter, "tiny").seatsInUse, 0);
  limiter.close();
});

Deno.test("a request queued past its wait limit (a quarter of the request timeout, or ?timeout=) gets a 429", async () => {
  const { app, clock, limiter } = setup({ requestTimeoutMs: 4000 }, 5);
  const held = slowRoute(app);
  const holder = app.request("/slow", dev("alice"));
  await settle();
  let status = 0;
  const queued = Promise.resolve(app.request("/slow", dev("bob"))).then((r) => status = r.status);
  const short = app.request("/slow?timeout=2s", dev("carol"));
  await settle();
  clock.advance(500); // ?timeout=2s: waits a quarter, 500 ms
  assert.equal((await short).status, 429);
  assert.equal(status, 0);
  clock.advance(500); // requestTimeoutMs 4000: waits 1000 ms
  await queued;
  assert.equal(status, 429);
  assert.equal(level(limiter, "tiny").rejected["time-out"], 2);
  held.open();
  await holder;
  limiter.close();
});

Deno.test("a watch waits the default limit whatever its ?timeout=; ?timeout= is read as Go reads a query", async () => {
  // Kubernetes gives a long-running request (a watch) no deadline, so its queue wait limit is the
  // default; the parameter is the first one Go's url.Query() keeps (it drops a malformed pair and
  // unescapes keys).
  const { app, clock, limiter } = setup({ requestTimeoutMs: 4000 }, 10);
  const held = slowRoute(app);
  const holder = app.request("/slow", dev("alice"));
  await settle();
  const statuses = new Map<string, number>();
  const ask = (url: string, user: string) =>
    Promise.resolve(app.request(url, dev(user))).then((r) => statuses.set(url, r.status));
  const watch = "/api/v1/namespaces/a/pods?watch=true&timeout=2s";
  const malformedFirst = "/slow?timeout=%ZZ&timeout=2s";
  const escapedKey = "/slow?time%6Fut=2s";
  const waiting = [ask(watch, "bob"), ask(malformedFirst, "carol"), ask(escapedKey, "dave")];
  await settle();
  assert.equal(level(limiter, "tiny").waitingRequests, 3);
  clock.advance(500); // ?timeout=2s: a quarter, 500 ms
  await settle();
  assert.equal(statuses.get(malformedFirst), 429);
  assert.equal(statuses.get(escapedKey), 429);
  assert.equal(statuses.has(watch), false, "the watch still waits");
  clock.advance(500); // requestTimeoutMs 4000: 1000 ms
  await Promise.all(waiting);
  assert.equal(statuses.get(watch), 429);
  assert.equal(level(limiter, "tiny").rejected["time-out"], 3);
  held.open();
  await holder;
  limiter.close();
});

Deno.test("a throwing handler and an error response release the seat", async () => {
  const { app, limiter } = setup();
  app.get("/throw", () => {
    throw new Error("boom");
  });
  app.get("/error", (c) => c.text("nope", 500));
  app.onError((_e, c) => c.text("handled", 500));
  for (const path of ["/throw", "/error", "/throw"]) {
    const res = await app.request(path, dev("alice"));
    assert.equal(res.status, 500);
    assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER), "tiny-level-uid");
    assert.equal(level(limiter, "tiny").seatsInUse, 0, path);
  }
  assert.equal(level(limiter, "tiny").dispatched, 3);
  limiter.close();
});

function stream(): {
  body: ReadableStream<Uint8Array>;
  push: (s: string) => void;
  end: () => void;
} {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    body,
    push: (s) => controller.enqueue(new TextEncoder().encode(s)),
    end: () => controller.close(),
  };
}

Deno.test("watches and event streams give their seats back once the handler returned the response", async () => {
  const { app, limiter } = setup();
  const sse = stream();
  app.get(
    "/events",
    () => new Response(sse.body, { headers: { "Content-Type": "text/event-stream" } }),
  );
  const watch = stream();
  app.get("/api/v1/namespaces/a/pods", () => new Response(watch.body));
  for (
    const [path, s] of [["/events", sse], ["/api/v1/namespaces/a/pods?watch=true", watch]] as const
  ) {
    const res = await app.request(path, dev("alice"));
    assert.equal(level(limiter, "tiny").seatsInUse, 0, `${path}: released while streaming`);
    s.push("data: 1\n\n");
    s.end();
    assert.equal(await res.text(), "data: 1\n\n");
  }
  limiter.close();
});

Deno.test("holdLongRunningSeats keeps a stream's seats until its body ends; routes can be marked long-running", async () => {
  const { app, limiter } = setup({
    holdLongRunningSeats: true,
    longRunning: (c) => c.req.path === "/export",
  });
  const s = stream();
  app.get("/export", () => new Response(s.body));
  const res = await app.request("/export", dev("alice"));
  assert.equal(level(limiter, "tiny").seatsInUse, 1, "held while the body streams");
  const reader = res.body!.getReader();
  s.push("a");
  assert.equal(new TextDecoder().decode((await reader.read()).value), "a");
  assert.equal(level(limiter, "tiny").seatsInUse, 1);
  s.end();
  assert.equal((await reader.read()).done, true);
  assert.equal(level(limiter, "tiny").seatsInUse, 0, "released when the body ended");
  // A client that cancels the stream releases too.
  const t = stream();
  const { app: app2, limiter: l2 } = setup({ holdLongRunningSeats: true, longRunning: () => true });
  app2.get("/x", () => new Response(t.body));
  const r2 = await app2.request("/x", dev("alice"));
  assert.equal(level(l2, "tiny").seatsInUse, 1);
  await r2.body!.cancel();
  assert.equal(level(l2, "tiny").seatsInUse, 0);
  limiter.close();
  l2.close();
});

Deno.test("onRejected may replace the 429; the UID headers are added to its response", async () => {
  const { app, limiter } = setup({
    onRejected: (_c, r) =>
      new Response(
        JSON.stringify({
          reason: r.reason,
          retry: r.retryAfterSeconds,
          level: r.classification.priorityLevel.name,
        }),
        {
          status: 503,
        },
      ),
  });
  const held = slowRoute(app);
  const holder = app.request("/slow", dev("alice"));
  await settle();
  const res = await app.request("/slow", dev("bob"));
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { reason: "queue-full", retry: 1, level: "tiny" });
  assert.equal(res.headers.get(PRIORITY_LEVEL_UID_HEADER), "tiny-level-uid");
  held.open();
  await holder;
  limiter.close();
});

Deno.test("identity the resolver refuses answers 401; the context reaches the resolver", async () => {
  const seen: unknown[] = [];
  const { app, limiter } = setup({
    identify: (req, c) => {
      seen.push(c.req.path);
      return frontProxyIdentity()(req);
    },
  });
  app.get("/x", (c) => c.text("ok"));
  const res = await app.request("/x", { headers: { "X-Remote-User": "a".repeat(1025) } });
  assert.equal(res.status, 401);
  assert.match(
    await res.text(),
    /^Unauthorized: Cannot accept identity: user name is 1025 characters long \(limit 1024\)/,
  );
  assert.deepEqual(seen, ["/x"]);
  limiter.close();
});

Deno.test("invalid options and configuration throw at apf() time", () => {
  assert.throws(
    () =>
      apf({
        config:
          "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: x}\nspec: {matchingPrecedence: 20000, priorityLevelConfiguration: {name: other}}",
      }),
    /FlowSchema\/x: spec.matchingPrecedence: Invalid value: 20000/,
  );
  assert.throws(
    () => apf({ requestTimeoutMs: -1 }),
    /requestTimeoutMs must be a finite number > 0, got -1/,
  );
  assert.throws(
    () => apf({ identify: "alice" as never }),
    /identify must be a function, got string/,
  );
  assert.throws(() => apf({ coordinator: {} as never }), /coordinator must have an acquire/);
  assert.throws(
    () => apf({ estimate: 3 as never }),
    /estimate must be route costs or an estimator function, got number/,
  );
  assert.throws(
    () => apf({ serverConcurrencyLimit: 0 }),
    /serverConcurrencyLimit must be a positive integer, got 0/,
  );
  assert.throws(() => apf({ config: 42 as never }), /expected manifest text/);
  assert.throws(() => apf({ estimate: [{ pattern: "nope" }] }), /pattern/);
});

Deno.test("per-route costs size requests; estimator seats show in the state", async () => {
  const { app, limiter } = setup({ estimate: [{ method: "GET", pattern: "/report", seats: 3 }] });
  app.get("/report", (c) => c.text(String(c.get("apf").work.initialSeats)));
  assert.equal(await (await app.request("/report", dev("alice"))).text(), "1"); // capped: tiny's max seats is 1
  limiter.close();
});

Deno.test("mandatoryOnly with no config serves the mandatory levels only: anonymous requests land in catch-all", async () => {
  const limiter = apf({ mandatoryOnly: true, serverConcurrencyLimit: 10 });
  const app = new Hono<ApfEnv>();
  app.use(limiter);
  app.get("/x", (c) => c.text(c.get("apf").classification.priorityLevel.name));
  try {
    assert.deepEqual(limiter.configuration.priorityLevels.map((pl) => pl.name), [
      "exempt",
      "catch-all",
    ]);
    const res = await app.request("/x");
    assert.equal(await res.text(), "catch-all");
    // Without the flag, Kubernetes' suggested objects send anonymous requests to global-default.
    const full = apf();
    const app2 = new Hono<ApfEnv>().use(full).get(
      "/x",
      (c) => c.text(c.get("apf").classification.priorityLevel.name),
    );
    assert.equal(await (await app2.request("/x")).text(), "global-default");
    full.close();
  } finally {
    limiter.close();
  }
});

Deno.test("apf() refuses an option name it does not know, naming the closest one", () => {
  assert.throws(
    () => apf({ serverConcurrency: 10 } as never),
    new TypeError(
      'Cannot create apf(): unknown option "serverConcurrency" (did you mean "serverConcurrencyLimit"?)',
    ),
  );
  assert.throws(
    () => apf({ requestTimeout: 1000 } as never),
    /unknown option "requestTimeout" \(did you mean "requestTimeoutMs"\?\)/,
  );
  assert.throws(() => apf({ indentify: () => null } as never), /did you mean "identify"\?/);
  assert.throws(
    () => apf({ zzz: 1 } as never),
    new TypeError('Cannot create apf(): unknown option "zzz"'),
  );
  // Every misspelling at once, not one per run.
  assert.throws(
    () => apf({ serverConcurrency: 10, indentify: () => null, zzz: 1 } as never),
    new TypeError(
      'Cannot create apf(): unknown options "serverConcurrency" (did you mean "serverConcurrencyLimit"?), "indentify" (did you mean "identify"?), "zzz"',
    ),
  );
});
