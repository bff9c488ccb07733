import assert from "node:assert/strict";
import { describeRequest, type RequestInfo } from "../../src/classify/request_info.ts";
import { WatchTracker } from "../../src/estimate/watch_tracker.ts";

function info(method: string, url: string): RequestInfo {
  return describeRequest(method, url);
}

/** Registers `GET url` with its raw query, as a server would. */
function register(tracker: WatchTracker, url: string) {
  const mark = url.indexOf("?");
  return tracker.register(info("GET", url), mark < 0 ? undefined : url.slice(mark + 1));
}

/**
 * The key a single registered watch was counted under, found with writes: a create in another
 * namespace sees only the cluster-wide key, a create in `ns` also the namespace key, an update
 * of `ns/name` also the object key.
 */
function keyOf(tracker: WatchTracker, group: string, resource: string, ns: string, name: string) {
  const base = group === "" ? "/api/v1" : `/apis/${group}/v1`;
  const cluster = tracker.interestedWatchCount(info("POST", `${base}/namespaces/zz/${resource}`));
  const inNs = ns === "" ? cluster : tracker.interestedWatchCount(
    info("POST", `${base}/namespaces/${ns}/${resource}`),
  );
  const obj = tracker.interestedWatchCount(
    info(
      "PUT",
      ns === "" ? `${base}/${resource}/${name}` : `${base}/namespaces/${ns}/${resource}/${name}`,
    ),
  );
  return { cluster, inNs, obj };
}

// TestRegisterWatch (watch_tracker_test.go): the key each watch is counted under.
Deno.test("WatchTracker.register counts a watch under its group, resource, namespace and name", () => {
  const cases: [string, string, string, string, string][] = [
    ["/api/v1/pods?watch=true", "", "pods", "", ""],
    ["/api/v1/namespaces/foo/pods?watch=true", "", "pods", "foo", ""],
    [
      "/api/v1/namespaces/foo/pods?watch=true&fieldSelector=metadata.name=mypod",
      "",
      "pods",
      "foo",
      "mypod",
    ],
    // The Go table has namespaces/myns here; see the next test for why nodes probe better.
    ["/api/v1/nodes?watch=true&fieldSelector=metadata.name=mynode", "", "nodes", "", "mynode"],
    ["/apis/group/v1/pods?watch=true", "group", "pods", "", ""],
    ["/apis/group/v1/namespaces/foo/pods?watch=true", "group", "pods", "foo", ""],
    [
      "/apis/group/v1/namespaces/foo/pods?watch=true&fieldSelector=metadata.name=mypod",
      "group",
      "pods",
      "foo",
      "mypod",
    ],
    [
      "/apis/group/v1/namespaces/foo/pods?watch=true&fieldSelector=spec.nodeName=",
      "group",
      "pods",
      "foo",
      "",
    ],
  ];
  for (const [url, group, resource, ns, name] of cases) {
    const tracker = new WatchTracker();
    const forget = register(tracker, url);
    assert.equal(typeof forget, "function", url);
    assert.equal(tracker.size, 1, url);
    const probeName = name === "" ? "other" : name;
    const expected = name !== ""
      ? { cluster: 0, inNs: 0, obj: 1 }
      : ns !== ""
      ? { cluster: 0, inNs: 1, obj: 1 }
      : { cluster: 1, inNs: 1, obj: 1 };
    assert.deepEqual(keyOf(tracker, group, resource, ns, probeName), expected, url);
    forget!();
    assert.equal(tracker.size, 0, url);
    assert.deepEqual(keyOf(tracker, group, resource, ns, probeName), {
      cluster: 0,
      inNs: 0,
      obj: 0,
    });
  }
});

Deno.test("WatchTracker never counts a one-namespace watch for writes to that namespace", () => {
  // The watch's key is {"", namespaces, "", myns}, but a write to /api/v1/namespaces/myns has
  // namespace "myns" (Kubernetes' RequestInfo), so it looks up {.., myns, ""} and
  // {.., myns, myns}: as in Kubernetes, only cluster-wide namespaces watches are seen.
  const tracker = new WatchTracker();
  register(tracker, "/api/v1/namespaces?watch=true&fieldSelector=metadata.name=myns");
  register(tracker, "/api/v1/namespaces?watch=true");
  assert.equal(tracker.size, 2);
  assert.equal(tracker.interestedWatchCount(info("PUT", "/api/v1/namespaces/myns")), 1);
  assert.equal(tracker.interestedWatchCount(info("DELETE", "/api/v1/namespaces/myns")), 1);
});

Deno.test("WatchTracker.register ignores requests that are not watches", () => {
  const tracker = new WatchTracker();
  assert.equal(register(tracker, "/api/v1/pods"), undefined);
  assert.equal(register(tracker, "/api/v1/pods?watch=false"), undefined);
  assert.equal(tracker.register(info("POST", "/api/v1/namespaces/a/pods")), undefined);
  assert.equal(tracker.size, 0);
});

// TestGetInterestedWatchCount (watch_tracker_test.go).
Deno.test("WatchTracker.interestedWatchCount sums the resource, namespace and object keys", () => {
  const tracker = new WatchTracker();
  for (
    const url of [
      "api/v1/pods?watch=true",
      "api/v1/namespaces/foo/pods?watch=true",
      "api/v1/namespaces/foo/pods?watch=true&fieldSelector=metadata.name=mypod",
      "api/v1/namespaces/bar/pods?watch=true&fieldSelector=metadata.name=mypod",
      "apis/group/v1/namespaces/foo/pods?watch=true",
      "apis/group/v1/namespaces/bar/pods?watch=true&fieldSelector=metadata.name=mypod",
    ]
  ) {
    assert.notEqual(register(tracker, "/" + url), undefined, url);
  }
  const cases: [string, string, number][] = [
    ["POST", "/api/v1/namespaces/foo/pods", 2],
    ["PUT", "/api/v1/namespaces/foo/pods/mypod", 3],
    ["PATCH", "/api/v1/namespaces/foo/pods/mypod", 3],
    ["DELETE", "/api/v1/namespaces/foo/pods/mypod", 3],
    ["PUT", "/api/v1/namespaces/foo/pods/otherpod", 2],
    ["GET", "/api/v1/namespaces/foo/pods/mypod", 0],
    ["GET", "/api/v1/namespaces/foo/pods", 0],
    ["GET", "/api/v1/namespaces/foo/pods?watch=true", 0],
    ["GET", "/api/v1/proxy/namespaces/foo/pods/mypod", 0],
    ["POST", "/api/v1/namespaces/bar/pods", 1],
    ["PUT", "/api/v1/namespaces/bar/pods/mypod", 2],
    ["PUT", "/apis/group/v1/namespaces/foo/pods/mypod", 1],
    ["PUT", "/apis/group/v1/namespaces/foo/pods/otherpod", 1],
    ["PUT", "/apis/group/v1/namespaces/bar/pods/mypod", 1],
    ["PUT", "/apis/group/v1/namespaces/bar/pods/otherpod", 0],
    // Not in the Go table: deletecollection is not read-only; a subresource counts as its object.
    ["DELETE", "/api/v1/namespaces/foo/pods", 2],
    ["PUT", "/api/v1/namespaces/foo/pods/mypod/status", 3],
  ];
  for (const [method, url, expected] of cases) {
    assert.equal(tracker.interestedWatchCount(info(method, url)), expected, `${method} ${url}`);
  }
});

// TestGetInterestedWatchCountWithIndex (watch_tracker_test.go).
Deno.test("WatchTracker does not count pods watches that require a spec.nodeName", () => {
  const tracker = new WatchTracker();
  for (
    const url of [
      "/api/v1/pods?watch=true",
      "/api/v1/namespaces/foo/pods?watch=true",
      "/api/v1/namespaces/foo/pods?watch=true&fieldSelector=metadata.name=mypod",
      "/api/v1/namespaces/foo/pods?watch=true&fieldSelector=spec.nodeName=",
      // Ignored: the watch cache's index serves them only for their node's pods.
      "/api/v1/namespaces/foo/pods?watch=true&fieldSelector=spec.nodeName=node1",
      "/api/v1/namespaces/foo/pods?watch=true&fieldSelector=spec.nodeName=node2",
    ]
  ) {
    assert.equal(typeof register(tracker, url), "function", url);
  }
  assert.equal(tracker.size, 4);
  const cases: [string, string, number][] = [
    ["POST", "/api/v1/namespaces/foo/pods", 3],
    ["PUT", "/api/v1/namespaces/foo/pods/mypod", 4],
    ["PATCH", "/api/v1/namespaces/foo/pods/mypod", 4],
    ["DELETE", "/api/v1/namespaces/foo/pods/mypod", 4],
  ];
  for (const [method, url, expected] of cases) {
    assert.equal(tracker.interestedWatchCount(info(method, url)), expected, `${method} ${url}`);
  }
});

Deno.test("WatchTracker applies the spec.nodeName rule to exact matches only", () => {
  const counted = (url: string) => {
    const tracker = new WatchTracker();
    register(tracker, url);
    return tracker.size;
  };
  const pods = "/api/v1/namespaces/foo/pods?watch=1&";
  assert.equal(counted(pods + "fieldSelector=spec.nodeName%3D%3Dnode1"), 0);
  assert.equal(counted(pods + "fieldSelector=status.phase%3DRunning,spec.nodeName%3Dn"), 0);
  assert.equal(counted(pods + "fieldSelector=spec.nodeName!%3Dnode1"), 1);
  assert.equal(counted(pods + "fieldSelector=status.phase%3DRunning"), 1);
  // List options that do not decode leave the index value unset: counted.
  assert.equal(counted(pods + "fieldSelector=spec.nodeName%3Dn1&labelSelector=%3D%3D"), 1);
  assert.equal(counted(pods + "fieldSelector=spec.nodeName%3Dn1&limit=x"), 1);
  assert.equal(counted(pods + "fieldSelector=spec.nodeName"), 1);
  // Other resources have no index: a nodes watch with any field selector counts.
  assert.equal(counted("/api/v1/nodes?watch=1&fieldSelector=spec.nodeName%3Dn1"), 1);
  // The index is by resource name, whatever the group.
  assert.equal(counted("/apis/g/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1"), 0);
});

Deno.test("WatchTracker reads the RequestInfo's selectors when no query is given", () => {
  const tracker = new WatchTracker();
  tracker.register(info("GET", "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1"));
  assert.equal(tracker.size, 0);
  tracker.register(info("GET", "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3D"));
  // A legacy /watch/ path records no selectors: no index value, counted.
  tracker.register(info("GET", "/api/v1/watch/pods?fieldSelector=spec.nodeName%3Dn1"));
  assert.equal(tracker.size, 2);
  tracker.register(
    info("GET", "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1&labelSelector=%3D%3D"),
  );
  assert.equal(tracker.size, 3);
});

Deno.test("WatchTracker's forget function acts once", () => {
  const tracker = new WatchTracker();
  const first = register(tracker, "/api/v1/namespaces/a/secrets?watch=1")!;
  register(tracker, "/api/v1/namespaces/a/secrets?watch=1");
  const update = info("PUT", "/api/v1/namespaces/a/secrets/s");
  assert.equal(tracker.interestedWatchCount(update), 2);
  first();
  first();
  assert.equal(tracker.interestedWatchCount(update), 1);
  const skipped = register(tracker, "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn")!;
  skipped();
  assert.equal(tracker.interestedWatchCount(update), 1);
});

Deno.test("WatchTracker keys cannot collide, whatever the names hold", () => {
  const tracker = new WatchTracker();
  register(tracker, "/apis/ab/v1/c?watch=1");
  assert.equal(tracker.interestedWatchCount(info("POST", "/apis/a/v1/bc")), 0);
  assert.equal(tracker.interestedWatchCount(info("POST", "/apis/ab/v1/c")), 1);
  assert.throws(
    () => tracker.register(null as never),
    new TypeError("Cannot register a watch: info must be a RequestInfo, got null"),
  );
});
