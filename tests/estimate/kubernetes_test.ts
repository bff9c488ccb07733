import assert from "node:assert/strict";
import { kubernetesEstimator } from "../../src/estimate/kubernetes.ts";
import { defaultWorkEstimatorConfig } from "../../src/estimate/work_estimator_config.ts";
import { fixedCounts, fixedWatches, input } from "./_helpers.ts";

const ONE = { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 };

// Every list costs 8 seats (799 x 10 kB from the cache), every write 3 final seats (29 watches).
const estimate = kubernetesEstimator({
  objectCounts: fixedCounts({ count: 799, avgSizeBytes: 1_000 }),
  watchCounts: fixedWatches(29),
});

Deno.test("Kubernetes estimator dispatches by verb", () => {
  const cases: [string, string, number, number][] = [
    ["GET", "/api/v1/namespaces/ns/pods", 8, 0], // list
    ["GET", "/api/v1/namespaces/ns/pods?watch=1", 8, 0], // watch with initial events
    ["GET", "/api/v1/watch/namespaces/ns/pods", 8, 0], // legacy watch path
    ["POST", "/api/v1/namespaces/ns/pods", 1, 3], // create
    ["PUT", "/api/v1/namespaces/ns/pods/p", 1, 3], // update
    ["PATCH", "/api/v1/namespaces/ns/pods/p", 1, 3], // patch
    ["DELETE", "/api/v1/namespaces/ns/pods/p", 1, 3], // delete
    ["GET", "/api/v1/namespaces/ns/pods/p", 1, 0], // get
    ["HEAD", "/api/v1/namespaces/ns/pods/p", 1, 0], // get
    ["DELETE", "/api/v1/namespaces/ns/pods", 1, 0], // deletecollection
    ["GET", "/api/v1/proxy/namespaces/ns/pods/p", 1, 0], // proxy
    ["OPTIONS", "/api/v1/namespaces/ns/pods", 1, 0], // verb ""
    ["GET", "/healthz", 1, 0], // non-resource
    ["DELETE", "/metrics", 1, 0], // non-resource, verb "delete"
    ["POST", "/apis/apps/v1", 1, 0], // non-resource (group discovery)
  ];
  for (const [method, url, initialSeats, finalSeats] of cases) {
    const work = estimate(input(method, url, 0));
    assert.equal(work.initialSeats, initialSeats, `${method} ${url}`);
    assert.equal(work.finalSeats, finalSeats, `${method} ${url}`);
  }
});

Deno.test("Kubernetes estimator gives one seat to a request whose RequestInfo has an error", () => {
  // Nothing after the deprecated /watch/ prefix: Kubernetes fails the request before APF.
  const prefixOnly = input("GET", "/api/v1/watch?sendInitialEvents=true", 0);
  assert.equal(prefixOnly.requestInfo.isResourceRequest, true);
  assert.equal(typeof prefixOnly.requestInfo.error, "string");
  assert.deepEqual(estimate(prefixOnly), ONE);
  const broken = input("GET", "/api/v1/pods", 0);
  assert.equal(estimate(broken).initialSeats, 8);
  broken.requestInfo = { ...broken.requestInfo, error: "Cannot decode path" };
  assert.deepEqual(estimate(broken), ONE);
});

Deno.test("Kubernetes estimator with WatchList off gives every watch one seat", () => {
  const noWatchList = kubernetesEstimator({
    objectCounts: fixedCounts({ count: 799, avgSizeBytes: 1_000 }),
    watchList: false,
  });
  assert.deepEqual(
    noWatchList(input("GET", "/api/v1/pods?watch=1&sendInitialEvents=true", 0)),
    ONE,
  );
  assert.deepEqual(noWatchList(input("GET", "/api/v1/watch/pods", 0)), ONE);
  assert.equal(noWatchList(input("GET", "/api/v1/pods", 0)).initialSeats, 8);
});

Deno.test("Kubernetes estimator with default options costs one seat for everything", () => {
  const plain = kubernetesEstimator();
  for (const [method, url] of [["GET", "/api/v1/pods"], ["POST", "/api/v1/namespaces/a/pods"]]) {
    assert.deepEqual(plain(input(method!, url!, 0)), ONE);
  }
});

Deno.test("Kubernetes estimator returns a fresh object for every request", () => {
  const a = estimate(input("GET", "/healthz", 0));
  const b = estimate(input("GET", "/healthz", 0));
  assert.notEqual(a, b);
  a.initialSeats = 99;
  assert.equal(estimate(input("GET", "/healthz", 0)).initialSeats, 1);
});

Deno.test("Kubernetes estimator applies the minimum seats of its config", () => {
  const wide = kubernetesEstimator({ config: { minimumSeats: 2 } });
  assert.deepEqual(wide(input("GET", "/healthz", 0)), { ...ONE, initialSeats: 2 });
  assert.deepEqual(wide(input("GET", "/api/v1/pods", 0)), { ...ONE, initialSeats: 2 });
});

Deno.test("defaultWorkEstimatorConfig holds Kubernetes' defaults", () => {
  assert.deepEqual(defaultWorkEstimatorConfig(), {
    minimumSeats: 1,
    maximumListSeatsLimit: 100,
    maximumMutatingSeatsLimit: 10,
    objectsPerSeat: 100,
    bytesPerSeat: 100_000,
    cacheWithStreamingMaxMemoryUsage: 1_000_000,
    maxObjectSize: 1_500_000,
    infiniteObjectCount: 1_000_000_000,
    watchesPerSeat: 10,
    eventAdditionalDurationMs: 5,
  });
  assert.equal(
    defaultWorkEstimatorConfig({ sizeBasedListCostEstimate: false }).maximumListSeatsLimit,
    10,
  );
  assert.notEqual(defaultWorkEstimatorConfig(), defaultWorkEstimatorConfig());
});

Deno.test("kubernetesEstimator rejects bad options with the received value", () => {
  const cases: [unknown, new (...args: never[]) => Error, string][] = [
    [
      null,
      TypeError,
      "Cannot create Kubernetes work estimator: options must be an object, got null",
    ],
    [
      { objectCounts: {} },
      TypeError,
      "Cannot create Kubernetes work estimator: objectCounts must have a get() method, got [object Object]",
    ],
    [
      { watchCounts: 3 },
      TypeError,
      "Cannot create Kubernetes work estimator: watchCounts must have an interestedWatchCount() method, got 3",
    ],
    [
      { watchList: "yes" },
      TypeError,
      'Cannot create Kubernetes work estimator: watchList must be a boolean, got "yes"',
    ],
    [
      { config: { minimumSeats: 0 } },
      RangeError,
      "Cannot create Kubernetes work estimator: config.minimumSeats must be a finite integer >= 1, got 0",
    ],
    [
      { config: { objectsPerSeat: 0 } },
      RangeError,
      "Cannot create Kubernetes work estimator: config.objectsPerSeat must be a finite number > 0, got 0",
    ],
    [
      { config: { eventAdditionalDurationMs: -1 } },
      RangeError,
      "Cannot create Kubernetes work estimator: config.eventAdditionalDurationMs must be a finite number >= 0, got -1",
    ],
    [
      { config: { maximumListSeatsLimit: 2.5 } },
      RangeError,
      "Cannot create Kubernetes work estimator: config.maximumListSeatsLimit must be a finite integer >= 1, got 2.5",
    ],
    [
      { config: { bytesPerSeat: Infinity } },
      RangeError,
      "Cannot create Kubernetes work estimator: config.bytesPerSeat must be a finite number > 0, got Infinity",
    ],
    [
      { config: { minimumSeats: 20, maximumListSeatsLimit: 10 } },
      RangeError,
      "Cannot create Kubernetes work estimator: config.minimumSeats (20) must not exceed config.maximumListSeatsLimit (10)",
    ],
    [
      { config: "big" },
      TypeError,
      "Cannot create Kubernetes work estimator: config must be an object, got big",
    ],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(
      () => kubernetesEstimator(options as never),
      (e: unknown) => e instanceof type && (e as Error).message === message,
      message,
    );
  }
});
