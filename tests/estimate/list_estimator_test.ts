import assert from "node:assert/strict";
import { shouldDelegateList } from "../../src/estimate/_list.ts";
import { kubernetesEstimator } from "../../src/estimate/kubernetes.ts";
import type { ObjectStats } from "../../src/estimate/object_count_tracker.ts";
import { fixedCounts, input } from "./_helpers.ts";

const EVENTS = "/apis/foo.bar/v1/events";

type Answer = ObjectStats | undefined | "stale" | (() => never);

/** Initial seats of `GET url` with the given count answer, as Kubernetes' unit tests run it. */
function listSeats(
  url: string,
  answer: Answer,
  maxSeats = 100,
  options: { sizeBased?: boolean; consistentReadsFromCache?: boolean } = {},
): number {
  const estimate = kubernetesEstimator({
    objectCounts: fixedCounts(answer),
    sizeBasedListCostEstimate: options.sizeBased ?? true,
    // Kubernetes' unit tests run without an etcd that reports progress: consistent lists
    // go to storage there.
    consistentReadsFromCache: options.consistentReadsFromCache ?? false,
  });
  const work = estimate(input("GET", url, maxSeats));
  assert.equal(work.finalSeats, 0);
  assert.equal(work.additionalLatencyMs, 0);
  return work.initialSeats;
}

const unknownError = (): never => {
  throw new Error("unknown error");
};

/** Stats of `count` objects of `size` bytes (size unknown when omitted). */
function st(count: number, size?: number): ObjectStats {
  return size === undefined ? { count } : { count, avgSizeBytes: size };
}

const KB10 = 10_000;
const NAME = "?fieldSelector=metadata.name%3Dtest";
const LABEL = "?labelSelector=app%3Dtest";

// TestWorkEstimator (width_test.go, size-based), list and watch rows, then a few more: query,
// count answer, the level's max seats, expected initial seats, and why. As in Kubernetes' unit
// tests, lists without a resource version go to storage.
const SIZE_BASED: [string, Answer, number, number, string][] = [
  ["?limit=invalid", st(799, KB10), 100, 100, "ListOptions do not decode"],
  ["?limit=399&resourceVersion=1", st(699, KB10), 100, 40, "RV 1, limit 399: 4 MB from etcd"],
  ["?resourceVersion=1", st(699, KB10), 100, 10, "RV 1: capped by the cache"],
  ["?resourceVersion=1", st(69, KB10), 100, 7, "RV 1: 690 kB from the cache"],
  ["?limit=399", st(699, KB10), 100, 40, "limit 399: 4 MB from etcd"],
  ["", st(399, KB10), 100, 40, "no options: 4 MB from etcd"],
  ["", undefined, 100, 1, "count not found"],
  ["?continue=token&limit=399", st(699, KB10), 100, 40, "continue, limit 399: 4 MB from etcd"],
  ["?limit=299&resourceVersion=0", st(399, KB10), 100, 10, "RV 0, limit 299: cache cap"],
  ["?limit=20&resourceVersion=0", st(399, KB10), 100, 2, "RV 0, limit 20: 200 kB from cache"],
  ["?resourceVersion=0", st(799, KB10), 100, 10, "RV 0: capped by the cache"],
  ["?resourceVersion=0", st(79, KB10), 100, 8, "RV 0: 790 kB from the cache"],
  [
    "?resourceVersion=1&resourceVersionMatch=Exact&limit=399",
    st(699, KB10),
    100,
    40,
    "Exact, limit 399: 4 MB from etcd",
  ],
  [
    "?resourceVersion=1&resourceVersionMatch=NotOlderThan",
    st(799, KB10),
    100,
    10,
    "NotOlderThan: capped by the cache",
  ],
  [
    "?resourceVersion=1&resourceVersionMatch=NotOlderThan",
    st(79, KB10),
    100,
    8,
    "NotOlderThan: 790 kB from the cache",
  ],
  [
    "?resourceVersion=1&resourceVersionMatch=Exact",
    st(5000, KB10),
    20,
    20,
    "Exact, 50 MB from etcd: capped by max seats 20",
  ],
  ["?resourceVersionMatch=foo", st(200, KB10), 100, 20, "unknown match: 2 MB from etcd"],
  [
    "?resourceVersion=foo&resourceVersionMatch=Exact&limit=399",
    st(699, KB10),
    100,
    40,
    "Exact with a bad RV, limit 399: 4 MB from etcd",
  ],
  ["?resourceVersion=0", undefined, 100, 1, "RV 0, count not found"],
  ["", "stale", 100, 100, "count stale: 1e9 objects of 1.5 MB"],
  ["", st(1), 100, 15, "no object size: 1.5 MB assumed"],
  ["", unknownError, 100, 100, "count source fails: as if stale"],
  ["?resourceVersion=0&limit=1", undefined, 100, 1, "RV 0, limit 1, count not found"],
  ["?limit=1", "stale", 100, 15, "count stale, limit 1: one 1.5 MB object from etcd"],
  ["?limit=1", unknownError, 100, 15, "count source fails, limit 1: one 1.5 MB object"],
  ["?resourceVersion=0&limit=499", undefined, 100, 1, "RV 0, limit 499, count not found"],
  ["?limit=499", "stale", 100, 100, "count stale, limit 499: max seats"],
  ["?limit=499", st(1), 100, 15, "no object size, limit 499: one 1.5 MB object"],
  ["?resourceVersion=0&limit=499", st(1), 100, 10, "no size, RV 0, limit 499: cache cap"],
  ["?limit=499", undefined, 100, 1, "count not found, limit 499"],
  ["?limit=499", unknownError, 100, 100, "count source fails, limit 499: max seats"],
  [NAME, st(799, 200_000), 100, 2, "metadata.name: one 200 kB object"],
  [NAME, st(799, 1_500_000), 100, 15, "metadata.name: one 1.5 MB object"],
  [
    NAME + "&limit=500&resourceVersion=0",
    st(799, 200_000),
    100,
    2,
    "metadata.name, RV 0, limit 500: one 200 kB object from the cache",
  ],
  [
    NAME + "&limit=500&resourceVersion=0",
    st(799, 1_500_000),
    100,
    10,
    "metadata.name, RV 0, limit 500: one 1.5 MB object, capped by the cache",
  ],
  [LABEL, st(799, KB10), 100, 80, "labelSelector: 8 MB from etcd"],
  [LABEL + "&limit=49", st(799, KB10), 100, 40, "labelSelector, limit 49: half the objects"],
  [LABEL + "&limit=699", st(799, KB10), 100, 70, "labelSelector, limit 699: 7 MB from etcd"],
  [LABEL + "&resourceVersion=0", st(799, KB10), 100, 10, "labelSelector, RV 0: cache cap"],
  [
    LABEL + "&resourceVersion=0&limit=29",
    st(799, KB10),
    100,
    3,
    "labelSelector, RV 0, limit 29: 290 kB from the cache",
  ],
  ["?fieldSelector=spec.x%3Dy", st(799, KB10), 100, 80, "fieldSelector: 8 MB from etcd"],
  [
    "?watch=true&sendInitialEvents=true",
    st(799, 1_000),
    100,
    8,
    "watch, sendInitialEvents: 799 kB from the cache",
  ],
  ["?watch=true", st(799, 1_000), 100, 8, "legacy watch (no RV) sends initial events"],
  ["?watch=true&resourceVersion=0", st(799, 1_000), 100, 8, "legacy watch (RV 0) as well"],
  ["?watch=true&resourceVersion=1", st(799, 1_000), 100, 1, "watch from RV 1: no initial events"],
  [
    "?watch=true&resourceVersion=1&sendInitialEvents=false",
    st(799, 1_000),
    100,
    1,
    "watch from RV 1, sendInitialEvents=false",
  ],
  [
    "?watch=true&resourceVersion=1&sendInitialEvents=true",
    st(799, 1_000),
    100,
    8,
    "watch from RV 1, sendInitialEvents=true",
  ],
  [
    "?watch=true&resourceVersion=1&sendInitialEvents=0",
    st(799, 1_000),
    100,
    1,
    "watch from RV 1, sendInitialEvents=0",
  ],
  [
    "?watch=true&resourceVersion=1&sendInitialEvents=",
    st(799, 1_000),
    100,
    8,
    "watch from RV 1, sendInitialEvents= (an empty value is true)",
  ],
  [
    "?watch=1&resourceVersion=0&limit=5",
    st(799, KB10),
    100,
    1,
    "legacy watch, limit 5: 50 kB from the cache",
  ],
  ["", st(0), 100, 1, "no objects: the minimum"],
];

for (const [query, answer, maxSeats, expected, why] of SIZE_BASED) {
  Deno.test(`List estimator (by size): ${why} -> ${expected} seats`, () => {
    assert.equal(listSeats(EVENTS + query, answer, maxSeats), expected);
  });
}

// The rows of the count-based TestWorkEstimator (Kubernetes <= 1.33) that HEAD's formula keeps,
// and a few more, estimated by object count (SizeBasedListCostEstimate off): seats =
// ceil(objects / 100), at most 10.
const COUNT_BASED: [string, Answer, number, number, string][] = [
  ["?limit=invalid", st(799), 10, 10, "ListOptions do not decode"],
  ["?limit=399&resourceVersion=1", st(699), 10, 8, "RV 1, limit 399: two pages from etcd"],
  ["?resourceVersion=1", st(699), 10, 7, "RV 1: 699 from the cache"],
  ["?limit=399", st(699), 10, 8, "limit 399: two pages of 399 from etcd"],
  ["", st(399), 10, 8, "no options, 399 objects: twice from etcd"],
  ["", undefined, 10, 1, "count not found"],
  ["?continue=token&limit=399", st(699), 10, 8, "continue, limit 399"],
  ["?limit=299&resourceVersion=0", st(399), 10, 4, "RV 0, limit 299: all 399 from the cache"],
  ["?resourceVersion=0", st(799), 10, 8, "RV 0: 799 from the cache"],
  [
    "?resourceVersion=foo&resourceVersionMatch=Exact&limit=399",
    st(699),
    10,
    8,
    "Exact, limit 399",
  ],
  [
    "?resourceVersion=foo&resourceVersionMatch=NotOlderThan",
    st(799),
    10,
    8,
    "NotOlderThan: 799 from the cache",
  ],
  ["?resourceVersion=foo", st(1999), 10, 10, "1999 from the cache: capped at 10"],
  ["?resourceVersion=foo", st(1999), 5, 5, "1999 from the cache: capped at max seats 5"],
  ["?limit=499", "stale", 10, 10, "count stale, limit 499: two pages from etcd, capped"],
  ["", "stale", 0, 10, "count stale: 1e9 objects, capped"],
  ["?labelSelector=a%3Db&limit=49", st(799), 10, 9, "labelSelector, limit 49: all and a page"],
  [
    "?labelSelector=a%3Db&resourceVersion=0&limit=49",
    st(599),
    10,
    6,
    "labelSelector, RV 0, limit 49: all from the cache",
  ],
  [NAME, st(799), 10, 1, "metadata.name: one object"],
  [NAME + "&limit=500&resourceVersion=0", st(799), 10, 1, "metadata.name, RV 0: one object"],
  ["?watch=true&sendInitialEvents=true", st(799), 10, 8, "watch, sendInitialEvents: 799"],
  ["?watch=true&resourceVersion=5", st(799), 10, 1, "watch from RV 5: no initial events"],
];

for (const [query, answer, maxSeats, expected, why] of COUNT_BASED) {
  Deno.test(`List estimator (by count): ${why} -> ${expected} seats`, () => {
    assert.equal(listSeats(EVENTS + query, answer, maxSeats, { sizeBased: false }), expected);
  });
}

Deno.test("List estimator by count with a custom config uses its objects per seat and limit", () => {
  const estimate = kubernetesEstimator({
    objectCounts: fixedCounts({ count: 699 }),
    sizeBasedListCostEstimate: false,
    config: { maximumListSeatsLimit: 50, objectsPerSeat: 500 },
  });
  assert.equal(estimate(input("GET", EVENTS + "?limit=399&resourceVersion=1", 0)).initialSeats, 2);
  assert.equal(estimate(input("GET", EVENTS + "?limit=invalid", 0)).initialSeats, 50);
});

Deno.test("List estimator looks counts up by resource.group, or by resource in the core group", () => {
  const counts = fixedCounts({ count: 1 });
  const estimate = kubernetesEstimator({ objectCounts: counts });
  estimate(input("GET", "/apis/foo.bar/v1/events", 0));
  estimate(input("GET", "/api/v1/namespaces/ns/pods", 0));
  estimate(input("GET", "/apis/apps/v1/deployments?watch=1", 0));
  assert.deepEqual(counts.keys, ["events.foo.bar", "pods", "deployments.apps"]);
});

Deno.test("List estimator serves consistent lists from the cache by default", () => {
  const stats = { count: 399, avgSizeBytes: 10_000 };
  // From storage 399 x 10 kB = 4 MB is 40 seats; the cache streams at most 1 MB: 10 seats.
  assert.equal(listSeats(EVENTS, stats, 100, { consistentReadsFromCache: true }), 10);
  assert.equal(listSeats(EVENTS, stats, 100, { consistentReadsFromCache: false }), 40);
  const estimate = kubernetesEstimator({ objectCounts: fixedCounts(stats) });
  assert.equal(estimate(input("GET", EVENTS, 100)).initialSeats, 10);
});

Deno.test("List estimator caps seats by the level's max seats, or by 100 when the level has none", () => {
  const stats = { count: 5000, avgSizeBytes: 10_000 }; // 50 MB from etcd: 500 seats
  const url = EVENTS + "?resourceVersion=1&resourceVersionMatch=Exact";
  assert.equal(listSeats(url, stats, 0), 100);
  assert.equal(listSeats(url, stats, 37), 37);
  assert.equal(listSeats(url, stats, 100), 100);
  assert.equal(listSeats(url, stats, 150), 100);
  assert.equal(listSeats(url, stats, -1), 100);
  assert.equal(listSeats(url, stats, NaN), 100);
  // `docs/semantics.md` §6.3: min(maxSeats(PL), 100) for the default levels.
  for (const [level, maxSeats] of [["workload-low", 37], ["node-high", 15], ["catch-all", 0]]) {
    assert.equal(listSeats(url, stats, maxSeats as number), maxSeats || 100, String(level));
  }
});

Deno.test("List estimator accepts parsed query parameters", () => {
  const estimate = kubernetesEstimator({
    objectCounts: fixedCounts({ count: 699, avgSizeBytes: 10_000 }),
  });
  const parsed = input("GET", EVENTS, 100);
  parsed.query = new URLSearchParams({ limit: "399", resourceVersion: "1" });
  assert.equal(estimate(parsed).initialSeats, 40);
});

Deno.test("List estimator reads the first value of a repeated parameter, as Go does", () => {
  const stats = { count: 699, avgSizeBytes: 10_000 };
  assert.equal(listSeats(EVENTS + "?resourceVersion=1&limit=399&limit=1", stats), 40);
  assert.equal(listSeats(EVENTS + "?resourceVersion=0&resourceVersion=1&limit=399", stats), 10);
  // A pair containing ";" is dropped by url.ParseQuery: no limit, so from the cache.
  assert.equal(listSeats(EVENTS + "?resourceVersion=1&limit=399;x", stats), 10);
  // A bad timeoutSeconds fails the conversion too.
  assert.equal(listSeats(EVENTS + "?timeoutSeconds=soon", stats, 30), 30);
  // An invalid label selector does not: v1 ListOptions keeps selectors as strings.
  assert.equal(listSeats(EVENTS + "?labelSelector=%3D%3D%3D", stats), 70);
});

Deno.test("shouldDelegateList follows resourceVersionMatch, continue, limit and RV", () => {
  const base = {
    resourceVersionMatch: "",
    resourceVersion: "",
    continueToken: "",
    limit: 0,
    consistentReadsFromCache: true,
  };
  const cases: [Partial<typeof base>, boolean][] = [
    [{ resourceVersionMatch: "Exact", resourceVersion: "5" }, true],
    [{ resourceVersionMatch: "Exact", resourceVersion: "0" }, true],
    [{ resourceVersionMatch: "NotOlderThan", resourceVersion: "5", limit: 10 }, false],
    [{ resourceVersionMatch: "NotOlderThan", continueToken: "x" }, false],
    [{ resourceVersionMatch: "exact" }, true],
    [{ resourceVersionMatch: "Bogus", resourceVersion: "0" }, true],
    [{ continueToken: "x", resourceVersion: "0" }, true],
    [{ limit: 10, resourceVersion: "5" }, true],
    [{ limit: 10, resourceVersion: "0" }, false],
    [{ limit: 10 }, false],
    [{ limit: 10, consistentReadsFromCache: false }, true],
    [{}, false],
    [{ consistentReadsFromCache: false }, true],
    [{ resourceVersion: "5" }, false],
    [{ resourceVersion: "0", consistentReadsFromCache: false }, false],
    [{ limit: -1, resourceVersion: "5" }, false],
  ];
  for (const [override, expected] of cases) {
    assert.equal(shouldDelegateList({ ...base, ...override }), expected, JSON.stringify(override));
  }
});
