import assert from "node:assert/strict";
import { Hono } from "hono";
import { FakeEventClock, frontProxyIdentity } from "../../mod.ts";
import { dumpPriorityLevels, PROMETHEUS_CONTENT_TYPE } from "../../src/observe/mod.ts";
import { apf, apfAdminRoutes, type ApfEnv, bearerToken } from "../../src/hono/mod.ts";
import { settle } from "../_helpers/settle.ts";
import { gate, tinyConfig } from "./_helpers.ts";

function setup() {
  const clock = new FakeEventClock(1_700_000_000_000);
  const limiter = apf({ config: tinyConfig(5), identify: frontProxyIdentity(), clock });
  const app = new Hono<ApfEnv>();
  app.route(
    "/",
    apfAdminRoutes(limiter, { authorize: (c) => c.req.header("Authorization") === "Bearer ok" }),
  );
  app.use("/api/*", limiter);
  return { app, limiter, clock };
}

const auth = { headers: { Authorization: "Bearer ok" } };

Deno.test("admin routes refuse without authorization, and cannot be created without authorize", async () => {
  const { app, limiter } = setup();
  for (const path of ["/metrics", "/debug/api_priority_and_fairness/dump_priority_levels"]) {
    const res = await app.request(path);
    assert.equal(res.status, 403, path);
    assert.equal(await res.text(), "Forbidden\n");
  }
  assert.throws(() => apfAdminRoutes(limiter, {} as never), /options.authorize must be a function/);
  assert.throws(() => apfAdminRoutes(limiter, undefined as never), /authorize must be a function/);
  limiter.close();
});

Deno.test("metrics and dumps show a request waiting and one executing", async () => {
  const { app, limiter } = setup();
  const held = gate();
  app.get("/api/v1/namespaces/ns/pods/p", async (c) => {
    await held.promise;
    return c.text("ok");
  });
  const dev = (user: string) => ({ headers: { "X-Remote-User": user, "X-Remote-Group": "dev" } });
  const a = app.request("/api/v1/namespaces/ns/pods/p", dev("alice"));
  await settle();
  const b = app.request("/api/v1/namespaces/ns/pods/p", dev("bob"));
  await settle();

  const metrics = await app.request("/metrics", auth);
  assert.equal(metrics.headers.get("Content-Type"), PROMETHEUS_CONTENT_TYPE);
  const text = await metrics.text();
  assert.match(
    text,
    /^apiserver_flowcontrol_current_executing_requests\{flow_schema="devs",priority_level="tiny"\} 1$/m,
  );
  assert.match(
    text,
    /^apiserver_flowcontrol_current_inqueue_requests\{flow_schema="devs",priority_level="tiny"\} 1$/m,
  );
  assert.match(text, /^apiserver_flowcontrol_nominal_limit_seats\{priority_level="tiny"\} 1$/m);

  const levels =
    await (await app.request("/debug/api_priority_and_fairness/dump_priority_levels", auth)).text();
  const tiny = levels.split("\n").find((l) => l.startsWith("tiny,"))!;
  assert.deepEqual(tiny.split(",").map((s) => s.trim()), [
    "tiny",
    "1",
    "false",
    "false",
    "1",
    "1",
    "1",
    "0",
    "0",
    "0",
  ]);
  const json = await (await app.request(
    "/debug/api_priority_and_fairness/dump_priority_levels?format=json",
    auth,
  )).json();
  assert.ok(
    Array.isArray(json) &&
      json.some((r: { priorityLevelName?: string; name?: string }) =>
        JSON.stringify(r).includes('"tiny"')
      ),
  );

  const requests = await (await app.request(
    "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1",
    auth,
  )).text();
  const header = requests.split("\n")[0]!;
  assert.match(
    header,
    /^PriorityLevelName, +FlowSchemaName, +QueueIndex, +RequestIndexInQueue, +FlowDistingsher, +ArriveTime,/,
  );
  assert.match(
    header,
    /UserName, +Verb, +APIPath, +Namespace, +Name, +APIVersion, +Resource, +SubResource$/,
  );
  // One queue: Kubernetes computes no distinguisher then (`docs/semantics.md` §2.5), so the column
  // is empty.
  const rows = requests.split("\n").filter((l) => l.startsWith("tiny,"));
  assert.equal(rows.length, 2);
  assert.match(
    rows.find((r) => r.includes("bob"))!,
    /tiny, +devs, +0, +0, +, +2023-11-14T22:13:20Z, .*bob, +get, +\/api\/v1\/namespaces\/ns\/pods\/p, +ns, +p, +v1, +pods,/,
  );
  const queues = await (await app.request("/debug/api_priority_and_fairness/dump_queues", auth))
    .text();
  assert.match(queues, /^tiny, +0, +1, +1, +1,/m);

  held.open();
  await a;
  await b;
  limiter.close();
});

Deno.test("bearerToken() lets in its token only, and fails closed on a missing, empty or short one", async () => {
  for (const bad of [undefined, null, "", "short"]) {
    assert.throws(
      () => bearerToken(bad),
      /Cannot authorize the admin routes: the token must be a string of 16 characters or more/,
    );
  }
  const limiter = apf();
  const token = "0123456789abcdef-admin";
  const app = new Hono().route("/", apfAdminRoutes(limiter, { authorize: bearerToken(token) }));
  try {
    for (
      const [header, status] of [
        [undefined, 403],
        ["Bearer undefined", 403],
        ["Bearer ", 403],
        [`Bearer ${token}x`, 403],
        [`bearer ${token}`, 403],
        [`Bearer ${token}`, 200],
      ] as const
    ) {
      const res = await app.request(
        "/metrics",
        header === undefined ? {} : { headers: { Authorization: header } },
      );
      assert.equal(res.status, status, String(header));
      await res.body?.cancel();
    }
  } finally {
    limiter.close();
  }
});

Deno.test("apf({ serverConcurrencyLimit: \"auto\" }): dump_priority_levels ends with the learned limit's line, the dashboard's data has its state; a static limit shows neither", async () => {
  const clock = new FakeEventClock(1_700_000_000_000);
  const limiter = apf({ clock, serverConcurrencyLimit: { minRttRequests: 3, initial: 20 } });
  const app = new Hono<ApfEnv>()
    .route("/", apfAdminRoutes(limiter, { authorize: () => true }))
    .use("/api/*", limiter)
    .get("/api/*", async (c) => {
      await new Promise<void>((resolve) => clock.setTimer(50, resolve));
      return c.text("ok");
    });
  const dump = async () =>
    await (await app.request("/debug/api_priority_and_fairness/dump_priority_levels")).text();
  const last = (text: string) => text.trimEnd().split("\n").at(-1);
  try {
    // Before any request: the dump's snapshot creates the coordinator, and its learned limit.
    assert.equal(
      last(await dump()),
      "# serverConcurrencyLimit: learned 20 (phase warming-up, estimate 20, minRTT none, " +
        "sampleRTT none, gradient none, bounds 3..1000)",
    );
    // Requests of 50 ms each on the fake clock, answered as the clock runs.
    const serve = async (n: number) => {
      let answered: Response[] | null = null;
      const answers = Promise.all(Array.from({ length: n }, () => app.request("/api/x")));
      answers.then((all) => answered = all);
      for (let i = 0; i < 20_000 && answered === null; i++) {
        clock.advance(1);
        await new Promise((r) => setTimeout(r, 0));
      }
      assert.ok(answered !== null, `${n} requests answered`);
      return (answered as Response[]).map((r) => r.status);
    };
    // A request in the first window gives its level demand (a seat at the pinned limit).
    assert.deepEqual(await serve(1), [200]);
    clock.advance(1_000);
    assert.match(
      last(await dump())!,
      /^# serverConcurrencyLimit: learned 3 \(phase measuring-min-rtt, estimate 20,/,
    );
    // Three requests at the pinned limit: the minRTT.
    assert.deepEqual(await serve(3), [200, 200, 200]);
    const text = await dump();
    assert.equal(
      last(text),
      "# serverConcurrencyLimit: learned 20 (phase sampling, estimate 20, minRTT 50ms, " +
        "sampleRTT none, gradient none, bounds 3..1000)",
    );
    assert.match(text, /^PriorityLevelName, ActiveQueues, /);
    const frame = await (await app.request("/debug/api_priority_and_fairness/live")).json();
    assert.equal(frame.serverConcurrencyLimit, 20);
    assert.deepEqual(
      [frame.adaptive.limit, frame.adaptive.phase, frame.adaptive.minRttMs],
      [20, "sampling", 50],
    );
  } finally {
    limiter.close();
  }

  const fixed = apf({ clock, serverConcurrencyLimit: 20 });
  const plain = new Hono().route("/", apfAdminRoutes(fixed, { authorize: () => true }));
  try {
    const text =
      await (await plain.request("/debug/api_priority_and_fairness/dump_priority_levels")).text();
    assert.doesNotMatch(text, /^#/m);
    assert.equal(text, dumpPriorityLevels(fixed.snapshot()!));
    const frame = await (await plain.request("/debug/api_priority_and_fairness/live")).json();
    assert.equal("adaptive" in frame, false);
  } finally {
    fixed.close();
  }
});
