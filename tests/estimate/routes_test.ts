import assert from "node:assert/strict";
import fc from "fast-check";
import { kubernetesEstimator } from "../../src/estimate/kubernetes.ts";
import { type RouteCost, routeCostEstimator } from "../../src/estimate/routes.ts";
import type { ResolvedWorkEstimate, WorkEstimator } from "../../src/estimate/types.ts";
import { fixedWatches, input } from "./_helpers.ts";

/** A fallback that marks its answers with 99 final seats. */
const MARK: WorkEstimator = () => ({ initialSeats: 1, finalSeats: 99, additionalLatencyMs: 0 });

/** Initial seats for `method url`, or "fallback" when no route matched. */
function seatsOf(estimate: WorkEstimator, method: string, url: string): number | "fallback" {
  const work = estimate(input(method, url, 0));
  return work.finalSeats === 99 ? "fallback" : work.initialSeats;
}

Deno.test("routeCostEstimator matches literal, parameter and wildcard segments", () => {
  const estimate = routeCostEstimator([
    { pattern: "/", seats: 2 },
    { pattern: "/v1/reports/:id/export", seats: 8 },
    { pattern: "/v1/search/*", seats: 3 },
    { pattern: "/v1/users/:id", seats: 4 },
    { pattern: "/*", seats: 5 },
  ], MARK);
  const cases: [string, number | "fallback"][] = [
    ["/", 2],
    ["/v1/reports/42/export", 8],
    ["/v1/reports/42/export/", 5], // one more (empty) segment: not the export route
    ["/v1/reports//export", 5], // a parameter is never empty
    ["/v1/reports/42", 5],
    ["/v1/search/", 3], // the wildcard may match nothing after the slash
    ["/v1/search/a/b/c", 3],
    ["/v1/search", 5], // but needs the slash
    ["/v1/users/7", 4],
    ["/v1/users/7/x", 5],
    ["/V1/users/7", 5], // case-sensitive
    ["/anything", 5],
  ];
  for (const [url, expected] of cases) {
    assert.equal(seatsOf(estimate, "GET", url), expected, url);
  }
});

Deno.test("routeCostEstimator asks the fallback when no route matches", () => {
  const estimate = routeCostEstimator([{ pattern: "/v1/search/*", seats: 3 }], MARK);
  assert.equal(seatsOf(estimate, "GET", "/v1/search/q"), 3);
  for (const url of ["/", "/v1", "/v1/search", "/v2/search/q", "/v1/searches/q"]) {
    assert.equal(seatsOf(estimate, "GET", url), "fallback", url);
  }
});

Deno.test("routeCostEstimator takes the first matching route, across first segments", () => {
  const estimate = routeCostEstimator([
    { pattern: "/api/special", seats: 7 },
    { pattern: "/:any/special", seats: 6 },
    { pattern: "/api/:name", seats: 5 },
    { pattern: "/api/special", seats: 4 }, // shadowed
    { pattern: "/*", seats: 2 },
    { pattern: "/other/x", seats: 9 }, // shadowed by "/*"
  ], MARK);
  assert.equal(seatsOf(estimate, "GET", "/api/special"), 7);
  assert.equal(seatsOf(estimate, "GET", "/web/special"), 6);
  assert.equal(seatsOf(estimate, "GET", "/api/plain"), 5);
  assert.equal(seatsOf(estimate, "GET", "/other/x"), 2);
  assert.equal(seatsOf(estimate, "GET", "/unknown/x/y"), 2);
});

Deno.test("routeCostEstimator filters by method, given in any case", () => {
  const estimate = routeCostEstimator([
    { method: "post", pattern: "/v1/orders", seats: 4 },
    { method: ["PUT", "Patch"], pattern: "/v1/orders/:id", seats: 3 },
    { pattern: "/v1/orders/:id", seats: 2 },
  ], MARK);
  assert.equal(seatsOf(estimate, "POST", "/v1/orders"), 4);
  assert.equal(seatsOf(estimate, "GET", "/v1/orders"), "fallback");
  assert.equal(seatsOf(estimate, "PUT", "/v1/orders/1"), 3);
  assert.equal(seatsOf(estimate, "PATCH", "/v1/orders/1"), 3);
  assert.equal(seatsOf(estimate, "DELETE", "/v1/orders/1"), 2);
});

Deno.test("routeCostEstimator matches the percent-decoded path", () => {
  const estimate = routeCostEstimator([{ pattern: "/files/a b", seats: 3 }], MARK);
  assert.equal(seatsOf(estimate, "GET", "/files/a%20b"), 3);
});

Deno.test("routeCostEstimator returns the route's cost with defaults", () => {
  const estimate = routeCostEstimator([
    { pattern: "/a" },
    { pattern: "/b", seats: 3, finalSeats: 2, additionalLatencyMs: 7.5 },
  ], MARK);
  assert.deepEqual(estimate(input("GET", "/a", 0)), {
    initialSeats: 1,
    finalSeats: 0,
    additionalLatencyMs: 0,
  });
  assert.deepEqual(estimate(input("GET", "/b", 0)), {
    initialSeats: 3,
    finalSeats: 2,
    additionalLatencyMs: 7.5,
  });
  const first = estimate(input("GET", "/b", 0));
  first.initialSeats = 100;
  assert.equal(estimate(input("GET", "/b", 0)).initialSeats, 3);
});

Deno.test("routeCostEstimator caps a route's seats by the level's max seats, keeping the final work", () => {
  const estimate = routeCostEstimator([
    { pattern: "/wide", seats: 12, finalSeats: 6, additionalLatencyMs: 10 },
  ], MARK);
  const at = (maxSeats: number): ResolvedWorkEstimate => estimate(input("GET", "/wide", maxSeats));
  assert.deepEqual(at(0), { initialSeats: 12, finalSeats: 6, additionalLatencyMs: 10 });
  assert.deepEqual(at(20), { initialSeats: 12, finalSeats: 6, additionalLatencyMs: 10 });
  assert.deepEqual(at(8), { initialSeats: 8, finalSeats: 6, additionalLatencyMs: 10 });
  assert.deepEqual(at(4), { initialSeats: 4, finalSeats: 4, additionalLatencyMs: 15 });
  assert.deepEqual(at(1), { initialSeats: 1, finalSeats: 1, additionalLatencyMs: 60 });
});

Deno.test("routeCostEstimator falls back to Kubernetes' estimator by default", () => {
  const estimate = routeCostEstimator([{ pattern: "/v1/export", seats: 6 }]);
  assert.equal(estimate(input("GET", "/v1/export", 0)).initialSeats, 6);
  assert.deepEqual(estimate(input("GET", "/v1/other", 0)), {
    initialSeats: 1,
    finalSeats: 0,
    additionalLatencyMs: 0,
  });
  const chained = routeCostEstimator(
    [{ pattern: "/healthz" }],
    kubernetesEstimator({ watchCounts: fixedWatches(50) }),
  );
  assert.deepEqual(chained(input("POST", "/api/v1/namespaces/a/configmaps", 0)), {
    initialSeats: 1,
    finalSeats: 5,
    additionalLatencyMs: 5,
  });
  assert.equal(routeCostEstimator([])(input("GET", "/", 0)).initialSeats, 1);
});

Deno.test("routeCostEstimator rejects bad routes with the received value", () => {
  const what = "Cannot create route cost estimator";
  const cases: [unknown, new (...args: never[]) => Error, string][] = [
    ["/a", TypeError, `${what}: routes must be an array, got "/a"`],
    [[null], TypeError, `${what}: routes[0] must be an object, got null`],
    [
      [{}],
      TypeError,
      `${what}: routes[0].pattern must be a string starting with "/", got undefined`,
    ],
    [
      [{ pattern: "a/b" }],
      TypeError,
      `${what}: routes[0].pattern must be a string starting with "/", got "a/b"`,
    ],
    [[{ pattern: "/a//b" }], TypeError, `${what}: routes[0].pattern "/a//b": segment 2 is empty`],
    [[{ pattern: "/a/" }], TypeError, `${what}: routes[0].pattern "/a/": segment 2 is empty`],
    [
      [{ pattern: "/*/a" }],
      TypeError,
      `${what}: routes[0].pattern "/*/a": "*" must be the last segment`,
    ],
    [
      [{ pattern: "/a*" }],
      TypeError,
      `${what}: routes[0].pattern "/a*": "*" must be a whole segment, got "a*"`,
    ],
    [
      [{ pattern: "/a/:" }],
      TypeError,
      `${what}: routes[0].pattern "/a/:": parameter 2 has no name`,
    ],
    [
      [{ pattern: "/a" }, { pattern: "/b" }, { pattern: "/c", seats: 0 }],
      RangeError,
      `${what}: routes[2].seats must be an integer >= 1, got 0`,
    ],
    [
      [{ pattern: "/c", seats: 1.5 }],
      RangeError,
      `${what}: routes[0].seats must be an integer >= 1, got 1.5`,
    ],
    [
      [{ pattern: "/c", seats: "2" }],
      TypeError,
      `${what}: routes[0].seats must be an integer >= 1, got "2"`,
    ],
    [
      [{ pattern: "/c", finalSeats: -1 }],
      RangeError,
      `${what}: routes[0].finalSeats must be an integer >= 0, got -1`,
    ],
    [
      [{ pattern: "/c", additionalLatencyMs: NaN }],
      RangeError,
      `${what}: routes[0].additionalLatencyMs must be a finite number >= 0, got NaN`,
    ],
    [
      [{ pattern: "/c", additionalLatencyMs: "5" }],
      TypeError,
      `${what}: routes[0].additionalLatencyMs must be a finite number >= 0, got "5"`,
    ],
    [
      [{ pattern: "/c", method: [] }],
      TypeError,
      `${what}: routes[0].method must be a method name or a non-empty array of them, got []`,
    ],
    [
      [{ pattern: "/c", method: "GE T" }],
      TypeError,
      `${what}: routes[0].method must be an HTTP method name, got "GE T"`,
    ],
    [
      [{ pattern: "/c", method: ["GET", 3] }],
      TypeError,
      `${what}: routes[0].method[1] must be an HTTP method name, got 3`,
    ],
  ];
  for (const [routes, type, message] of cases) {
    assert.throws(
      () => routeCostEstimator(routes as RouteCost[]),
      (e: unknown) => e instanceof type && (e as Error).message === message,
      message,
    );
  }
  assert.throws(
    () => routeCostEstimator([], "fallback" as never),
    new TypeError(`${what}: fallback must be a function, got "fallback"`),
  );
});

/** The reference: try every route in order, segment by segment. */
function naiveMatch(routes: readonly RouteCost[], method: string, path: string): number {
  const rest = path.startsWith("/") ? path.slice(1) : path;
  const parts = rest === "" ? [] : rest.split("/");
  return routes.findIndex((route) => {
    const methods = route.method === undefined
      ? undefined
      : [route.method].flat().map((m) => m.toUpperCase());
    if (methods !== undefined && !methods.includes(method)) return false;
    const segments = route.pattern === "/" ? [] : route.pattern.slice(1).split("/");
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      // The wildcard needs the slash before it: path "/a" has no segment after "a".
      if (segment === "*") return rest === "" ? i === 0 : i < parts.length;
      if (i >= parts.length) return false;
      if (segment.startsWith(":") ? parts[i] === "" : parts[i] !== segment) return false;
    }
    return segments.length === parts.length;
  });
}

Deno.test("routeCostEstimator picks the same route as trying each route in order", () => {
  const segment = fc.constantFrom("a", "b", "ab", ":p", ":q");
  const pattern = fc.tuple(fc.array(segment, { maxLength: 3 }), fc.boolean()).map(
    ([segments, wildcard]) => "/" + [...segments, ...(wildcard ? ["*"] : [])].join("/"),
  );
  const route = fc.record({
    method: fc.option(fc.constantFrom("GET", "post", ["PUT", "GET"]), { nil: undefined }),
    pattern,
  });
  const path = fc.array(fc.constantFrom("a", "b", "ab", "c", ""), { maxLength: 4 }).map((p) =>
    "/" + p.join("/")
  );
  fc.assert(
    fc.property(
      fc.array(route, { maxLength: 8 }),
      path,
      fc.constantFrom("GET", "POST", "PUT"),
      (routes, p, method) => {
        const clean = routes.map((r, i) => {
          const rc: RouteCost = { pattern: r.pattern, seats: i + 1 };
          if (r.method !== undefined) rc.method = r.method;
          return rc;
        });
        const expected = naiveMatch(clean, method, p);
        const work = routeCostEstimator(clean, MARK)(input(method, p, 0));
        const got = work.finalSeats === 99 ? -1 : work.initialSeats - 1;
        assert.equal(got, expected, `${method} ${p} in ${JSON.stringify(clean)}`);
      },
    ),
    { numRuns: 2000 },
  );
});
