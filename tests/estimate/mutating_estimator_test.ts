import assert from "node:assert/strict";
import { kubernetesEstimator } from "../../src/estimate/kubernetes.ts";
import type { ResolvedWorkEstimate } from "../../src/estimate/types.ts";
import { WatchTracker } from "../../src/estimate/watch_tracker.ts";
import { fixedWatches, input } from "./_helpers.ts";

/** The estimate of `method url` when `watches` watches are interested, on a level with `maxSeats`. */
function mutating(
  method: string,
  url: string,
  watches: number,
  maxSeats: number,
): ResolvedWorkEstimate {
  const estimate = kubernetesEstimator({ watchCounts: fixedWatches(watches) });
  return estimate(input(method, url, maxSeats));
}

function work(initialSeats: number, finalSeats: number, additionalLatencyMs: number) {
  return { initialSeats, finalSeats, additionalLatencyMs };
}

const FOOS = "/apis/foo.bar/v1/foos";
const MYFOO = "/apis/foo.bar/v1/foos/myfoo";

// TestWorkEstimator (width_test.go), mutating rows: method, URL, watch count, max seats, expected.
const ROWS: [string, string, number, number, ReturnType<typeof work>][] = [
  ["POST", FOOS, 0, 10, work(1, 0, 0)],
  ["POST", FOOS, 29, 10, work(1, 3, 5)],
  ["POST", FOOS, 5, 10, work(1, 0, 0)],
  // 199 watches want 20 final seats; capped at 10, they are held twice as long.
  ["POST", FOOS, 199, 10, work(1, 10, 10)],
  ["PUT", MYFOO, 0, 10, work(1, 0, 0)],
  ["PUT", MYFOO, 29, 10, work(1, 3, 5)],
  ["PATCH", MYFOO, 0, 10, work(1, 0, 0)],
  ["PATCH", MYFOO, 29, 10, work(1, 3, 5)],
  ["PATCH", MYFOO, 100, 5, work(1, 5, 10)],
  ["DELETE", MYFOO, 0, 10, work(1, 0, 0)],
  ["DELETE", MYFOO, 29, 10, work(1, 3, 5)],
  // Creating a service account token produces no watch event.
  ["POST", "/api/v1/namespaces/foo/serviceaccounts/default/token", 5777, 10, work(1, 0, 0)],
  // Creating a service account does; max seats 20 is above the mutating limit of 10.
  ["POST", "/api/v1/namespaces/foo/serviceaccounts", 1000, 20, work(1, 10, 50)],
];

for (const [method, url, watches, maxSeats, expected] of ROWS) {
  Deno.test(`Mutating estimator: ${method} ${url} with ${watches} watches, max seats ${maxSeats}`, () => {
    assert.deepEqual(mutating(method, url, watches, maxSeats), expected);
  });
}

Deno.test("Mutating estimator charges from one seat-worth of watches (10) on", () => {
  assert.deepEqual(mutating("POST", FOOS, 9, 10), work(1, 0, 0));
  assert.deepEqual(mutating("POST", FOOS, 10, 10), work(1, 1, 5));
  assert.deepEqual(mutating("POST", FOOS, 11, 10), work(1, 2, 5));
  assert.deepEqual(mutating("POST", FOOS, 100, 10), work(1, 10, 5));
  assert.deepEqual(mutating("POST", FOOS, 101, 10), work(1, 10, 5.5));
});

Deno.test("Mutating estimator caps final seats by min(maxSeats(PL), 10), keeping the final work", () => {
  // `docs/semantics.md` §6.3: the default levels' max seats are 12 (system), 15, 4, 15, 37, 8;
  // catch-all none.
  const cases: [number, number, number][] = [
    [12, 10, 10],
    [15, 10, 10],
    [4, 4, 25],
    [37, 10, 10],
    [8, 8, 12.5],
    [0, 10, 10],
  ];
  for (const [maxSeats, finalSeats, latency] of cases) {
    assert.deepEqual(mutating("PUT", MYFOO, 199, maxSeats), work(1, finalSeats, latency));
  }
  // Latency is in whole nanoseconds, truncated: 20 x 5 ms / 7 = 14.285714 ms.
  assert.deepEqual(mutating("PUT", MYFOO, 199, 7), work(1, 7, 14.285714));
});

Deno.test("Mutating estimator honours a custom config", () => {
  const estimate = kubernetesEstimator({
    watchCounts: fixedWatches(45),
    config: { watchesPerSeat: 20, eventAdditionalDurationMs: 2, maximumMutatingSeatsLimit: 2 },
  });
  // ceil(45 / 20) = 3 seats of 2 ms, capped at 2 seats: 3 ms each.
  assert.deepEqual(estimate(input("POST", FOOS, 0)), work(1, 2, 3));
});

Deno.test("Mutating estimator gives the write one seat whatever the minimum, but a token the minimum", () => {
  // Kubernetes' mutatingWorkEstimator ends in InitialSeats: 1; its early answers use MinimumSeats.
  const estimate = kubernetesEstimator({
    watchCounts: fixedWatches(25),
    config: { minimumSeats: 2 },
  });
  assert.deepEqual(estimate(input("POST", FOOS, 10)), work(1, 3, 5));
  const few = kubernetesEstimator({ watchCounts: fixedWatches(5), config: { minimumSeats: 2 } });
  assert.deepEqual(few(input("DELETE", MYFOO, 10)), work(1, 0, 0));
  assert.deepEqual(
    estimate(input("POST", "/api/v1/namespaces/foo/serviceaccounts/default/token", 10)),
    work(2, 0, 0),
  );
  const off = kubernetesEstimator({ mutatingEnabled: false, config: { minimumSeats: 2 } });
  assert.deepEqual(off(input("PUT", MYFOO, 10)), work(2, 0, 0));
});

Deno.test("Mutating estimator switched off gives every write one seat", () => {
  const estimate = kubernetesEstimator({ watchCounts: fixedWatches(500), mutatingEnabled: false });
  for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
    assert.deepEqual(estimate(input(method, MYFOO, 10)), work(1, 0, 0), method);
  }
});

Deno.test("Mutating estimator without a watch source or with a failing one counts no watches", () => {
  assert.deepEqual(kubernetesEstimator()(input("POST", FOOS, 10)), work(1, 0, 0));
  const failing = kubernetesEstimator({
    watchCounts: {
      interestedWatchCount() {
        throw new Error("boom");
      },
    },
  });
  assert.deepEqual(failing(input("POST", FOOS, 10)), work(1, 0, 0));
});

Deno.test("Mutating estimator reads the counts of a WatchTracker", () => {
  const watches = new WatchTracker();
  const forgets = [];
  for (let i = 0; i < 25; i++) {
    forgets.push(
      watches.register(input("GET", "/api/v1/namespaces/ns/configmaps?watch=1", 0).requestInfo),
    );
  }
  const estimate = kubernetesEstimator({ watchCounts: watches });
  assert.deepEqual(estimate(input("PUT", "/api/v1/namespaces/ns/configmaps/c", 0)), work(1, 3, 5));
  assert.deepEqual(
    estimate(input("PUT", "/api/v1/namespaces/other/configmaps/c", 0)),
    work(1, 0, 0),
  );
  for (const forget of forgets.slice(0, 16)) forget?.();
  assert.deepEqual(estimate(input("PUT", "/api/v1/namespaces/ns/configmaps/c", 0)), work(1, 0, 0));
});
