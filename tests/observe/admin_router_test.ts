import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { resolveConfiguration } from "../../src/config/resolve.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { SnapshotOptions } from "../../src/fairqueuing/types.ts";
import { adminRouter, DEBUG_PREFIX } from "../../src/observe/admin_router.ts";
import { type AdminSource, AdminUnavailable } from "../../src/observe/admin_source.ts";
import { bearerTokenCheck } from "../../src/observe/bearer_token.ts";
import {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  dumpQueuesJson,
  dumpRequests,
  dumpRequestsJson,
} from "../../src/observe/dumps.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../../src/observe/registry.ts";
import { dumpSessions, dumpSessionsJson } from "../../src/observe/session_dumps.ts";
import type { SessionsSnapshot } from "../../src/observe/types.ts";

const SESSIONS: SessionsSnapshot = {
  nowMs: 5_000,
  wallClockMs: 1_700_000_005_000,
  leaseMs: 30_000,
  graceMs: 5_000,
  expiredSeats: 1,
  lostSeats: 0,
  sessions: [{
    id: "s-1",
    client: "gw-1",
    state: "connected",
    heldSeats: 2,
    waitingRequests: 0,
    expiredSeats: 1,
    lostSeats: 0,
  }],
  reclaimed: [{
    atMs: 4_000,
    reason: "expired",
    sessionId: "s-1",
    client: "gw-1",
    seatId: 7,
    priorityLevel: "exempt",
    flowSchema: "exempt",
    heldMs: 30_000,
  }],
};

/** An embedded coordinator with one executing request, and a source over it that counts reads. */
async function setup() {
  const clock = new FakeEventClock(1_700_000_000_000);
  const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
    snapshot: () => coordinator.snapshot(),
  });
  const coordinator = new EmbeddedCoordinator(resolveConfiguration(undefined), {
    clock,
    metrics,
  });
  const admission = await coordinator.acquire({
    priorityLevel: "exempt",
    flowSchema: "exempt",
    details: {
      user: "alice",
      verb: "get",
      path: "/api/v1/namespaces/ns/pods/p",
      namespace: "ns",
      name: "p",
      apiGroup: "",
      apiVersion: "v1",
      resource: "pods",
      subresource: "",
    },
  });
  assert.ok(admission.admitted);
  const reads: string[] = [];
  const reloads: { allowEmpty: boolean }[] = [];
  const snapshots: SnapshotOptions[] = [];
  const source: AdminSource = {
    snapshot: (options) => {
      reads.push("snapshot");
      snapshots.push(options);
      return coordinator.snapshot(options);
    },
    metrics: {
      expose: () => {
        reads.push("metrics");
        return metrics.expose();
      },
    },
    sessions: () => {
      reads.push("sessions");
      return SESSIONS;
    },
    reload: (options) => {
      reads.push("reload");
      reloads.push(options);
      return Promise.resolve(
        options.allowEmpty
          ? { applied: true, summary: "no change" }
          : { applied: false, reason: "it would drop every object" },
      );
    },
  };
  return {
    clock,
    coordinator,
    metrics,
    source,
    reads,
    reloads,
    snapshots,
    [Symbol.dispose]() {
      admission.seat.release();
      coordinator.close();
    },
  };
}

/** Lets every pending promise reaction run (the fake clock needs no real time). */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

const url = (path: string) => `http://admin.test${path}`;
const get = (path: string, init: RequestInit = {}) => new Request(url(path), init);

Deno.test("adminRouter serves metrics and every dump, as text and as JSON", async () => {
  using s = await setup();
  const router = adminRouter(s.source, { authorize: () => true });

  const metrics = (await router(get("/metrics")))!;
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers.get("Content-Type"), PROMETHEUS_CONTENT_TYPE);
  assert.match(
    await metrics.text(),
    /^apiserver_flowcontrol_current_executing_requests\{flow_schema="exempt",priority_level="exempt"\} 1$/m,
  );

  const snapshot = s.coordinator.snapshot({ includeRequests: true });
  const cases: Array<[string, string | unknown]> = [
    ["dump_priority_levels", dumpPriorityLevels(snapshot)],
    ["dump_priority_levels?format=json", dumpPriorityLevelsJson(snapshot)],
    ["dump_queues", dumpQueues(snapshot)],
    ["dump_queues?format=json", dumpQueuesJson(snapshot)],
    ["dump_requests", dumpRequests(snapshot)],
    ["dump_requests?format=json", dumpRequestsJson(snapshot)],
    [
      "dump_requests?includeRequestDetails=1",
      dumpRequests(snapshot, { includeRequestDetails: true }),
    ],
    [
      "dump_requests?format=json&includeRequestDetails=true",
      dumpRequestsJson(snapshot, { includeRequestDetails: true }),
    ],
    ["dump_requests?includeRequestDetails=", dumpRequests(snapshot)],
    ["dump_sessions", dumpSessions(SESSIONS)],
    ["dump_sessions?format=json", dumpSessionsJson(SESSIONS)],
  ];
  for (const [path, expected] of cases) {
    const res = (await router(get(`${DEBUG_PREFIX}/${path}`)))!;
    assert.equal(res.status, 200, path);
    if (typeof expected === "string") {
      assert.equal(res.headers.get("Content-Type"), "text/plain; charset=UTF-8", path);
      assert.equal(await res.text(), expected, path);
    } else {
      assert.equal(res.headers.get("Content-Type"), "application/json", path);
      assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(expected)), path);
    }
  }
  // The request rows are there, and the details only when asked for.
  const details = (await router(get(`${DEBUG_PREFIX}/dump_requests?includeRequestDetails=1`)))!;
  assert.match(await details.text(), /^exempt, +exempt, +-1, +-1, .*alice, +get, .* +pods,/m);
  // Only dump_requests asks the source for the request lists.
  assert.deepEqual(s.snapshots.map((o) => o.includeRequests), [
    false,
    false,
    false,
    false,
    true,
    true,
    true,
    true,
    true,
    true,
  ]);
});

Deno.test("adminRouter reloads with POST /reload: applied, refused, allowEmpty passed on", async () => {
  using s = await setup();
  const router = adminRouter(s.source, { authorize: () => true });
  const refused = (await router(get("/reload", { method: "POST" })))!;
  assert.equal(refused.status, 400);
  assert.equal(await refused.text(), "refused: it would drop every object\n");
  const applied = (await router(get("/reload?allowEmpty=true", { method: "POST" })))!;
  assert.equal(applied.status, 200);
  assert.equal(await applied.text(), "reloaded: no change\n");
  assert.deepEqual(s.reloads, [{ allowEmpty: false }, { allowEmpty: true }]);
});

Deno.test("adminRouter answers 403 without authorization and reads nothing", async () => {
  using s = await setup();
  const seen: Array<[string, unknown]> = [];
  // A source that reads no context serves a router whose callers pass one.
  const source: AdminSource<never> = s.source;
  const router = adminRouter<{ operator: boolean }>(source, {
    authorize: (request, context) => {
      seen.push([new URL(request.url).pathname, context]);
      return Promise.resolve(context.operator);
    },
  });
  const paths = [
    "/metrics",
    ...["dump_priority_levels", "dump_queues", "dump_requests", "dump_sessions"].map((k) =>
      `${DEBUG_PREFIX}/${k}`
    ),
  ];
  for (const path of paths) {
    const res = (await router(get(path), { operator: false }))!;
    assert.equal(res.status, 403, path);
    assert.equal(await res.text(), "Forbidden\n");
  }
  const reload = (await router(get("/reload", { method: "POST" }), { operator: false }))!;
  assert.equal(reload.status, 403);
  await reload.body?.cancel();
  assert.deepEqual(s.reads, [], "nothing was read");
  assert.deepEqual(seen.map(([path]) => path), [...paths, "/reload"]);
  assert.deepEqual(seen[0]![1], { operator: false }, "authorize gets the caller's context");
  const ok = (await router(get("/metrics"), { operator: true }))!;
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  // Only `true` lets in: a truthy value that is not `true` does not.
  const truthy = adminRouter(s.source, { authorize: () => 1 as unknown as boolean });
  assert.equal((await truthy(get("/metrics")))!.status, 403);
});

Deno.test("adminRouter answers null for paths that are not its own", async () => {
  using s = await setup();
  const router = adminRouter(s.source, { authorize: () => true });
  for (
    const path of [
      "/",
      "/metrics/",
      "/metricsx",
      "/apf/metrics",
      `${DEBUG_PREFIX}x`,
      `${DEBUG_PREFIX}/dump_everything`,
      `${DEBUG_PREFIX}/live/`,
      `${DEBUG_PREFIX}/dump_queues/x`,
    ]
  ) {
    assert.equal(await router(get(path)), null, path);
  }
  // Without sessions or reload in the source, those routes do not exist.
  const plain = adminRouter({ snapshot: s.source.snapshot, metrics: null }, {
    authorize: () => true,
  });
  assert.equal(await plain(get(`${DEBUG_PREFIX}/dump_sessions`)), null);
  assert.equal(await plain(get("/reload", { method: "POST" })), null);
  const dumps = [
    "GET /metrics",
    `GET ${DEBUG_PREFIX}/dump_priority_levels`,
    `GET ${DEBUG_PREFIX}/dump_queues`,
    `GET ${DEBUG_PREFIX}/dump_requests`,
  ];
  assert.deepEqual(plain.routes.map((r) => `${r.method} ${r.path}`), [
    ...dumps,
    `GET ${DEBUG_PREFIX}`,
    `GET ${DEBUG_PREFIX}/`,
    `GET ${DEBUG_PREFIX}/dashboard.js`,
    `GET ${DEBUG_PREFIX}/dashboard.css`,
    `GET ${DEBUG_PREFIX}/live`,
    `POST ${DEBUG_PREFIX}/sign-in`,
    `POST ${DEBUG_PREFIX}/sign-out`,
  ]);
  // Without the dashboard: the dumps only.
  const bare = adminRouter({ snapshot: s.source.snapshot, metrics: null }, {
    authorize: () => true,
    live: false,
  });
  assert.deepEqual(bare.routes.map((r) => `${r.method} ${r.path}`), dumps);
  assert.equal(await bare(get(`${DEBUG_PREFIX}/`)), null);
  assert.deepEqual(s.reads, []);
});

Deno.test("adminRouter answers HEAD like GET without a body, and 405 to other methods", async () => {
  using s = await setup();
  const router = adminRouter(s.source, { authorize: () => true });
  const head = (await router(get("/metrics", { method: "HEAD" })))!;
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("Content-Type"), PROMETHEUS_CONTENT_TYPE);
  assert.equal(head.body, null);
  for (const method of ["POST", "PUT", "DELETE"]) {
    const res = (await router(get(`${DEBUG_PREFIX}/dump_queues`, { method })))!;
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("Allow"), "GET, HEAD");
    await res.body?.cancel();
  }
  for (const method of ["GET", "HEAD"]) {
    const res = (await router(get("/reload", { method })))!;
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("Allow"), "POST");
    await res.body?.cancel();
  }
  assert.deepEqual(s.reads, ["metrics"], "405 reads nothing; HEAD reads as GET does");
});

Deno.test("adminRouter answers 404 for a source without data, and a source's refusal as is", async () => {
  const router = adminRouter({
    snapshot: () => null,
    metrics: null,
    sessions: (query) =>
      query.get("level") === null ? new AdminUnavailable(400, "Missing ?level=NAME") : null,
  }, { authorize: () => true });
  const cases: Array<[string, number, string]> = [
    ["/metrics", 404, "No metrics here: the coordinator is remote.\n"],
    [
      `${DEBUG_PREFIX}/dump_queues`,
      404,
      "No dump here: the coordinator is remote, and its local fallback limiter has not been needed.\n",
    ],
    [`${DEBUG_PREFIX}/dump_sessions`, 400, "Missing ?level=NAME\n"],
    [`${DEBUG_PREFIX}/dump_sessions?level=a`, 404, "No sessions here.\n"],
  ];
  for (const [path, status, body] of cases) {
    const res = (await router(get(path)))!;
    assert.equal(res.status, status, path);
    assert.equal(await res.text(), body, path);
  }
  const empty = adminRouter({ snapshot: () => null, metrics: { expose: () => null } }, {
    authorize: () => true,
  });
  assert.equal((await empty(get("/metrics")))!.status, 404);
  assert.throws(
    () => new AdminUnavailable(200, "ok"),
    /status must be an integer from 400 to 599, got 200/,
  );
});

Deno.test("adminRouter bounds a slow source with its timeout, on the injected clock", async () => {
  using s = await setup();
  const clock = new FakeEventClock();
  let answer: (() => void) | undefined;
  const router = adminRouter({
    snapshot: () => new Promise(() => {}),
    metrics: {
      expose: () => new Promise<string>((resolve) => answer = () => resolve("late 1\n")),
    },
  }, { authorize: () => true, timeoutMs: 100, clock });

  const slow = router(get(`${DEBUG_PREFIX}/dump_priority_levels`));
  await flush();
  clock.advance(99);
  let settled = false;
  void slow.then(() => settled = true);
  await flush();
  assert.equal(settled, false, "not before its time");
  clock.advance(1);
  const res = (await slow)!;
  assert.equal(res.status, 504);
  assert.equal(await res.text(), "The source did not answer within 100 ms\n");
  assert.equal(clock.pendingTimers, 0);

  // An answer in time cancels the timer.
  const inTime = router(get("/metrics"));
  await flush();
  assert.equal(clock.pendingTimers, 1);
  answer!();
  assert.equal(await (await inTime)!.text(), "late 1\n");
  assert.equal(clock.pendingTimers, 0);

  // A synchronous source sets no timer at all.
  const sync = adminRouter(s.source, { authorize: () => true, timeoutMs: 100, clock });
  await (await sync(get("/metrics")))!.body?.cancel();
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("adminRouter refuses a missing authorize, a source that is not one, a bad timeout", () => {
  const source: AdminSource = { snapshot: () => null, metrics: null };
  for (const options of [undefined, {}, { authorize: true }]) {
    assert.throws(
      () => adminRouter(source, options as never),
      /^TypeError: Cannot create the admin routes: options.authorize must be a function/,
    );
  }
  for (const bad of [null, {}, { snapshot: () => null }]) {
    assert.throws(
      () => adminRouter(bad as never, { authorize: () => true }),
      /the source must have snapshot\(\) and metrics/,
    );
  }
  for (const timeoutMs of [0, -1, NaN, "5"]) {
    assert.throws(
      () => adminRouter(source, { authorize: () => true, timeoutMs: timeoutMs as number }),
      /^RangeError: Cannot create the admin routes: timeoutMs must be a number > 0/,
    );
  }
});

Deno.test("the routes answer whatever method and path they are mounted at", async () => {
  using s = await setup();
  const router = adminRouter(s.source, { authorize: () => true });
  const metrics = router.routes.find((r) => r.path === "/metrics")!;
  const res = await metrics.handle(get("/apf/some/prefix/metrics", { method: "HEAD" }));
  assert.equal(res.status, 200);
  assert.match(await res.text(), /apiserver_flowcontrol_/);
});

Deno.test("bearerTokenCheck lets in its token only, and fails closed on a missing, empty or short one", () => {
  for (const bad of [undefined, null, "", "short", "0123456789abcde"]) {
    assert.throws(
      () => bearerTokenCheck(bad),
      /^TypeError: Cannot authorize the admin routes: the token must be a string of 16 characters or more/,
    );
  }
  const token = "0123456789abcdef";
  const check = bearerTokenCheck(token);
  for (
    const [header, allowed] of [
      [undefined, false],
      ["Bearer undefined", false],
      ["Bearer ", false],
      [`Bearer ${token}x`, false],
      [`bearer ${token}`, false],
      [token, false],
      [`Bearer ${token}`, true],
    ] as const
  ) {
    const headers: Record<string, string> = header === undefined ? {} : { Authorization: header };
    assert.equal(check(get("/metrics", { headers })), allowed, String(header));
  }
});
