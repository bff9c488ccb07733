import assert from "node:assert/strict";
import {
  describeRequest,
  type RequestInfo,
  RequestInfoResolver,
  type ResourceRoute,
} from "../../src/classify/request_info.ts";

const resolver = new RequestInfoResolver();

/** Describes `url` (path with optional query) with the default Kubernetes rules. */
function describe(method: string, url: string): RequestInfo {
  const mark = url.indexOf("?");
  return mark < 0
    ? resolver.describe(method, url)
    : resolver.describe(method, url.slice(0, mark), url.slice(mark));
}

/** The fields the Kubernetes table compares: verb, prefix, group, version, namespace, resource, subresource, name. */
function columns(info: RequestInfo): string {
  return [
    info.verb,
    info.apiPrefix,
    info.apiGroup,
    info.apiVersion,
    info.namespace,
    info.resource,
    info.subresource,
    info.name,
  ].map((c) => c === "" ? "-" : c).join(" ") + " | " + info.parts.join("/");
}

// TestGetAPIRequestInfo (requestinfo_test.go), one row per case: method, URL, then the expected
// verb, prefix, group, version, namespace, resource, subresource and name ("-" for empty) and,
// after "|", the parts joined by "/". The Go table writes "api" as the prefix of the /apis/...
// rows but never compares it; here the prefix is checked, so those rows say "apis".
const KUBERNETES_TABLE: [string, string, string][] = [
  // resource paths
  ["GET", "/api/v1/namespaces", "list api - v1 - namespaces - - | namespaces"],
  ["GET", "/api/v1/namespaces/other", "get api - v1 other namespaces - other | namespaces/other"],
  ["GET", "/api/v1/namespaces/other/pods", "list api - v1 other pods - - | pods"],
  ["GET", "/api/v1/namespaces/other/pods/foo", "get api - v1 other pods - foo | pods/foo"],
  ["HEAD", "/api/v1/namespaces/other/pods/foo", "get api - v1 other pods - foo | pods/foo"],
  ["GET", "/api/v1/pods", "list api - v1 - pods - - | pods"],
  ["HEAD", "/api/v1/pods", "list api - v1 - pods - - | pods"],
  // special verbs
  ["GET", "/api/v1/proxy/namespaces/other/pods/foo", "proxy api - v1 other pods - foo | pods/foo"],
  [
    "GET",
    "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource",
    "proxy api - v1 other pods - foo | pods/foo/subpath/not/a/subresource",
  ],
  ["GET", "/api/v1/watch/pods", "watch api - v1 - pods - - | pods"],
  ["GET", "/api/v1/pods?watch=true", "watch api - v1 - pods - - | pods"],
  ["GET", "/api/v1/pods?watch=false", "list api - v1 - pods - - | pods"],
  ["GET", "/api/v1/watch/namespaces/other/pods", "watch api - v1 other pods - - | pods"],
  ["GET", "/api/v1/namespaces/other/pods?watch=1", "watch api - v1 other pods - - | pods"],
  ["GET", "/api/v1/namespaces/other/pods?watch=0", "list api - v1 other pods - - | pods"],
  // subresource identification
  [
    "GET",
    "/api/v1/namespaces/other/pods/foo/status",
    "get api - v1 other pods status foo | pods/foo/status",
  ],
  [
    "GET",
    "/api/v1/namespaces/other/pods/foo/proxy/subpath",
    "get api - v1 other pods proxy foo | pods/foo/proxy/subpath",
  ],
  [
    "PUT",
    "/api/v1/namespaces/other/finalize",
    "update api - v1 other namespaces finalize other | namespaces/other/finalize",
  ],
  [
    "PUT",
    "/api/v1/namespaces/other/status",
    "update api - v1 other namespaces status other | namespaces/other/status",
  ],
  // verb identification
  ["PATCH", "/api/v1/namespaces/other/pods/foo", "patch api - v1 other pods - foo | pods/foo"],
  ["DELETE", "/api/v1/namespaces/other/pods/foo", "delete api - v1 other pods - foo | pods/foo"],
  ["POST", "/api/v1/namespaces/other/pods", "create api - v1 other pods - - | pods"],
  // deletecollection verb identification
  ["DELETE", "/api/v1/nodes", "deletecollection api - v1 - nodes - - | nodes"],
  ["DELETE", "/api/v1/namespaces", "deletecollection api - v1 - namespaces - - | namespaces"],
  ["DELETE", "/api/v1/namespaces/other/pods", "deletecollection api - v1 other pods - - | pods"],
  [
    "DELETE",
    "/apis/extensions/v1/namespaces/other/pods",
    "deletecollection apis extensions v1 other pods - - | pods",
  ],
  // api group identification
  [
    "POST",
    "/apis/extensions/v1/namespaces/other/pods",
    "create apis extensions v1 other pods - - | pods",
  ],
  // api version identification
  [
    "POST",
    "/apis/extensions/v1beta3/namespaces/other/pods",
    "create apis extensions v1beta3 other pods - - | pods",
  ],
];

Deno.test("RequestInfo matches the Kubernetes TestGetAPIRequestInfo table", () => {
  for (const [method, url, expected] of KUBERNETES_TABLE) {
    const info = describe(method, url);
    assert.equal(info.isResourceRequest, true, `${method} ${url}`);
    assert.equal(info.error, undefined, `${method} ${url}`);
    assert.equal(columns(info), expected, `${method} ${url}`);
    assert.equal(info.path, url.split("?")[0]);
  }
});

/** The columns of a request without a query, for compact expectations. */
function get(method: string, url: string): string {
  return columns(describe(method, url));
}

Deno.test("short paths, unknown prefixes and bare versions are non-resource requests", () => {
  // TestGetAPIRequestInfo error cases and TestGetNonAPIRequestInfo.
  const resource = [
    "/api/version/resource",
    "/apis/group/version/resource/name/subresource",
    "/api/version/resource/name/subresource",
    "/apis/batch/v1/job",
    "/apis/batch/v1/job/foo",
    "/apis/batch/v1/job/foo/scale",
  ];
  const nonResource = [
    "/",
    "",
    "/api",
    "/api/version",
    "/api/version/",
    "/apis/group/version/",
    "/badprefix/version/resource",
    "/not-api/version/resource",
    "/apis/version/resource",
    "/apis/extensions/v1beta1",
    "/apis/extensions/v1beta1/",
    "/healthz",
    "/metrics",
    "/openapi/v2",
  ];
  for (const url of resource) assert.equal(describe("GET", url).isResourceRequest, true, url);
  for (const url of nonResource) {
    const info = describe("GET", url);
    assert.equal(info.isResourceRequest, false, url);
    assert.equal(info.error, undefined, url);
    assert.match(columns(info), /^get (-|apis) - - - - - - \| $/, url);
  }
});

Deno.test("a non-resource request keeps the path and the lower-cased method as verb", () => {
  assert.deepEqual(describe("POST", "/healthz/ping"), {
    isResourceRequest: false,
    path: "/healthz/ping",
    verb: "post",
    apiPrefix: "",
    apiGroup: "",
    apiVersion: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
    parts: [],
  });
  assert.equal(describe("OPTIONS", "/healthz").verb, "options");
  assert.equal(describe("PROPFIND", "/healthz").verb, "propfind");
});

Deno.test("/api/v1 is non-resource without a prefix; /apis/apps/v1 keeps its prefix", () => {
  // Go counts three segments before it looks at the prefix, and records the prefix before it
  // finds the group form too short.
  assert.equal(get("GET", "/api/v1"), "get - - - - - - - | ");
  assert.equal(get("GET", "/apis/apps/v1"), "get apis - - - - - - | ");
  assert.equal(describe("GET", "/apis/apps/v1").isResourceRequest, false);
  assert.equal(get("GET", "/api/v1/pods"), "list api - v1 - pods - - | pods");
});

Deno.test("extra slashes: leading and trailing ones are trimmed, inner ones make empty parts", () => {
  const info = describe("GET", "//api/v1/namespaces/ns/pods/p1///");
  assert.equal(columns(info), "get api - v1 ns pods - p1 | pods/p1");
  assert.equal(info.path, "//api/v1/namespaces/ns/pods/p1///");
  assert.equal(get("GET", "/api//v1/pods"), "get api - - - v1 - pods | v1/pods");
});

Deno.test("methods map to verbs; HEAD is get, unknown methods give an empty verb", () => {
  const cases: [string, string, string][] = [
    ["GET", "/api/v1/namespaces/ns/pods/p", "get"],
    ["HEAD", "/api/v1/namespaces/ns/pods/p", "get"],
    ["HEAD", "/api/v1/namespaces/ns/pods", "list"],
    ["POST", "/api/v1/namespaces/ns/pods", "create"],
    ["PUT", "/api/v1/nodes/n1/status", "update"],
    ["PATCH", "/api/v1/nodes/n1", "patch"],
    ["DELETE", "/api/v1/nodes/n1", "delete"],
    ["OPTIONS", "/api/v1/nodes/n1", ""],
    ["OPTIONS", "/api/v1/nodes", ""],
    ["CONNECT", "/api/v1/nodes/n1", ""],
    ["get", "/api/v1/nodes/n1", ""], // Go compares methods case-sensitively
  ];
  for (const [method, url, verb] of cases) {
    assert.equal(describe(method, url).verb, verb, `${method} ${url}`);
  }
});

Deno.test("namespaces/<ns> with status and finalize stays on the namespace resource", () => {
  const cases: [string, string, string][] = [
    ["GET", "/api/v1/namespaces/foo", "get api - v1 foo namespaces - foo | namespaces/foo"],
    ["PATCH", "/api/v1/namespaces/new", "patch api - v1 new namespaces - new | namespaces/new"],
    [
      "GET",
      "/api/v1/namespaces/foo/status",
      "get api - v1 foo namespaces status foo | namespaces/foo/status",
    ],
    [
      "PUT",
      "/api/v1/namespaces/foo/finalize",
      "update api - v1 foo namespaces finalize foo | namespaces/foo/finalize",
    ],
    [
      "GET",
      "/api/v1/namespaces/foo/status/extra",
      "get api - v1 foo namespaces status foo | namespaces/foo/status/extra",
    ],
    // A namespace called "status": only a third segment can be a namespace subresource.
    [
      "GET",
      "/api/v1/namespaces/status",
      "get api - v1 status namespaces - status | namespaces/status",
    ],
    [
      "GET",
      "/api/v1/namespaces/foo/configmaps/status",
      "get api - v1 foo configmaps - status | configmaps/status",
    ],
    [
      "GET",
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1",
      "get apis coordination.k8s.io v1 kube-node-lease leases - node-1 | leases/node-1",
    ],
  ];
  for (const [method, url, expected] of cases) assert.equal(get(method, url), expected, url);
});

Deno.test("subresources come from the third part, except under the proxy verb", () => {
  assert.equal(
    get("PUT", "/apis/apps/v1/namespaces/ns/deployments/web/scale"),
    "update apis apps v1 ns deployments scale web | deployments/web/scale",
  );
  assert.equal(
    get("PUT", "/api/v1/nodes/n1/status"),
    "update api - v1 - nodes status n1 | nodes/n1/status",
  );
  assert.equal(
    get("GET", "/api/v1/proxy/nodes/n1/status/metrics"),
    "proxy api - v1 - nodes - n1 | nodes/n1/status/metrics",
  );
  // The proxy subresource (as opposed to the verb) is an ordinary subresource.
  assert.equal(
    get("POST", "/api/v1/namespaces/ns/pods/p/proxy/x"),
    "create api - v1 ns pods proxy p | pods/p/proxy/x",
  );
});

Deno.test("legacy /watch/ and /proxy/ prefixes set the verb whatever the method", () => {
  assert.equal(
    get("POST", "/api/v1/watch/namespaces/ns/pods/p1"),
    "watch api - v1 ns pods - p1 | pods/p1",
  );
  assert.equal(get("DELETE", "/api/v1/proxy/pods"), "proxy api - v1 - pods - - | pods");
  // No list rules: a collection watch via the path stays watch, even with watch=false.
  assert.equal(describe("GET", "/api/v1/watch/pods?watch=false").verb, "watch");
  assert.equal(
    get("GET", "/apis/apps/v1/watch/deployments"),
    "watch apis apps v1 - deployments - - | deployments",
  );
});

Deno.test("a /watch/ or /proxy/ prefix with nothing after it gives the partial info and an error", () => {
  const cases: [string, string, string][] = [
    ["/api/v1/watch", "watch", "get api - v1 - - - - | "],
    ["/api/v1/watch/", "watch", "get api - v1 - - - - | "],
    ["/api/v1/proxy", "proxy", "get api - v1 - - - - | "],
    ["/apis/apps/v1/watch", "watch", "get apis apps v1 - - - - | "],
  ];
  for (const [url, verb, expected] of cases) {
    const info = describe("GET", url);
    assert.equal(info.isResourceRequest, true, url);
    assert.equal(columns(info), expected, url);
    assert.equal(
      info.error,
      `Cannot determine kind and namespace from URL: nothing follows the deprecated "${verb}" ` +
        `verb in ${JSON.stringify(url)}`,
    );
  }
  assert.equal(describe("DELETE", "/api/v1/watch").verb, "delete");
  assert.equal(describe("GET", "/api/v1/watch/pods").error, undefined);
});

Deno.test("watch query values follow Go's query bool rule", () => {
  const cases: [string, string][] = [
    ["", "list"],
    ["?watch", "watch"],
    ["?watch=", "watch"],
    ["?watch=0", "list"],
    ["?watch=false", "list"],
    ["?watch=FALSE", "list"],
    ["?watch=False", "list"],
    ["?watch=true", "watch"],
    ["?watch=1", "watch"],
    ["?watch=no", "watch"],
    ["?watch=00", "watch"],
    ["?watch=false%20", "watch"],
    ["?watch=fal%73e", "list"],
    ["?watch=0&watch=1", "list"],
    ["?watch=1&watch=0", "watch"],
    ["?other=1", "list"],
    ["?watch=fal%C5%BFe", "list"], // strings.EqualFold folds U+017F (long s) to "s"
  ];
  for (const [query, verb] of cases) {
    assert.equal(describe("GET", `/api/v1/pods${query}`).verb, verb, query);
    assert.equal(resolver.describe("GET", "/api/v1/pods", query.slice(1)).verb, verb, query);
  }
  // On a named object the watch parameter changes nothing.
  assert.equal(describe("GET", "/api/v1/namespaces/ns/pods/p?watch=true").verb, "get");
});

Deno.test("the query is parsed with Go's url.ParseQuery rules", () => {
  const verbOf = (query: string) => resolver.describe("GET", "/api/v1/pods", query).verb;
  assert.equal(verbOf("?watch=%zz&watch=true"), "watch"); // a malformed escape drops the pair
  assert.equal(verbOf("watch=1;x=2"), "list"); // a pair containing ";" is dropped
  assert.equal(verbOf("x=1;y=2&watch=1"), "watch");
  assert.equal(verbOf("w%61tch=1"), "watch"); // keys are decoded
  assert.equal(verbOf("watch+=1"), "list"); // that key is "watch "
  assert.equal(verbOf("&&watch=1&"), "watch");
  const info = resolver.describe("GET", "/api/v1/pods", "labelSelector=a+in+(x%2Cy)");
  assert.equal(info.labelSelector, "a in (x,y)");
  const params = new URLSearchParams({ watch: "1", labelSelector: "app=web" });
  const parsed = resolver.describe("GET", "/api/v1/pods", params);
  assert.deepEqual([parsed.verb, parsed.labelSelector], ["watch", "app=web"]);
});

Deno.test("a metadata.name field selector names a list or watch (TestSelectorParsing)", () => {
  // method, URL, then name, verb, fieldSelector, labelSelector ("-" for none), space-separated.
  const r = "/apis/group/version/resource";
  const cases: [string, string, string][] = [
    ["GET", r, "- list - -"],
    ["GET", `${r}?fieldSelector=metadata.name=name1`, "name1 list metadata.name=name1 -"],
    [
      "GET",
      `${r}?watch=true&fieldSelector=metadata.name=name1`,
      "name1 watch metadata.name=name1 -",
    ],
    ["GET", `${r}?fieldSelector=foo=bar&labelSelector=baz=qux`, "- list foo=bar baz=qux"],
    ["GET", `${r}?fieldSelector=metadata.name=name1,foo`, "- list metadata.name=name1,foo -"],
    [
      "GET",
      `${r}?fieldSelector=metadata.name=name1,foo&watch=true`,
      "- watch metadata.name=name1,foo -",
    ],
    [
      "GET",
      `${r}?fieldSelector=metadata.name=name1,foo&watch=false`,
      "- list metadata.name=name1,foo -",
    ],
    [
      "DELETE",
      `${r}?fieldSelector=foo=bar&labelSelector=baz=qux`,
      "- deletecollection foo=bar baz=qux",
    ],
    [
      "GET",
      `${r}?fieldSelector=metadata.name=foo&fieldSelector=metadata.name=bar` +
      "&labelSelector=foo=bar&labelSelector=foo=baz",
      "foo list metadata.name=foo foo=bar",
    ],
    ["GET", `${r}/name?fieldSelector=foo=bar&labelSelector=foo=bar`, "name get - -"],
    [
      "GET",
      "/apis/group/version/watch/resource?fieldSelector=metadata.name=foo&labelSelector=foo=bar",
      "- watch - -",
    ],
    [
      "GET",
      "/apis/group/version/watch/resource/name?fieldSelector=metadata.name=foo&labelSelector=a=b",
      "name watch - -",
    ],
  ];
  for (const [method, url, expected] of cases) {
    const info = describe(method, url);
    const actual = [info.name, info.verb, info.fieldSelector, info.labelSelector]
      .map((v) => v === "" || v === undefined ? "-" : v).join(" ");
    assert.equal(actual, expected, `${method} ${url}`);
  }
});

Deno.test("field selector forms: ==, !=, escapes, sorting, invalid segment names", () => {
  const nameOf = (fieldSelector: string) =>
    resolver.describe("GET", "/api/v1/pods", new URLSearchParams({ fieldSelector })).name;
  assert.equal(nameOf("metadata.name==foo"), "foo");
  assert.equal(nameOf("metadata.name!=foo"), "");
  assert.equal(nameOf("spec.nodeName=n1,metadata.name=foo"), "foo");
  assert.equal(nameOf("metadata.name=foo,"), "foo"); // empty terms are skipped
  assert.equal(nameOf("metadata.name=a\\,b"), "a,b");
  assert.equal(nameOf("metadata.name=a\\=b\\\\"), "a=b\\");
  // Go sorts the raw terms and takes the first metadata.name equality.
  assert.equal(nameOf("metadata.name=b,metadata.name=a"), "a");
  assert.equal(nameOf("metadata.name=b,metadata.name==c"), "c"); // "==" sorts before "=b"
  assert.equal(nameOf("metadata.name=\u{1F600},metadata.name=\uFFFD"), "\uFFFD"); // UTF-8 order
  // Not a valid path segment name: no name, still a list.
  for (const value of [".", "..", "a/b", "a%2Fb"]) {
    assert.equal(nameOf(`metadata.name=${value}`), "", value);
  }
  // Parse failures leave no name.
  for (const bad of ["metadata.name=a=b", "metadata.name=a\\x", "metadata.name=a\\", "foo"]) {
    assert.equal(nameOf(bad), "", bad);
  }
  // The field must be exactly metadata.name.
  assert.equal(nameOf(" metadata.name=foo"), "");
  assert.equal(nameOf("metadata.namespace=foo"), "");
  assert.equal(nameOf("metadata.name!==foo"), "");
});

Deno.test("list options that do not decode drop the selector's name but keep watch", () => {
  const base = "/api/v1/pods?fieldSelector=metadata.name%3Dfoo";
  const cases: [string, string][] = [
    ["", "foo list"],
    ["&limit=500&timeoutSeconds=-30", "foo list"],
    ["&limit=%2B9223372036854775807", "foo list"],
    ["&limit=abc", "- list"],
    ["&limit=", "- list"],
    ["&limit=9223372036854775808", "- list"],
    ["&timeoutSeconds=1.5", "- list"],
    ["&timeoutSeconds=1_0", "- list"],
    ["&limit=abc&watch=1", "- watch"],
    ["&labelSelector=app%3Dweb", "foo list"],
    ["&labelSelector=app%3D%3Dweb%20x", "- list"],
    ["&resourceVersion=x&resourceVersionMatch=x&continue=y&sendInitialEvents=z", "foo list"],
  ];
  for (const [extra, expected] of cases) {
    const info = describe("GET", base + extra);
    assert.equal(`${info.name || "-"} ${info.verb}`, expected, extra);
  }
  // The ToLower fallback after a failure does not fold U+017F; EqualFold does.
  assert.equal(describe("GET", "/api/v1/pods?watch=fal%C5%BFe&limit=x").verb, "watch");
  assert.equal(describe("GET", "/api/v1/pods?watch=fal%C5%BFe&limit=1").verb, "list");
  assert.equal(describe("GET", "/api/v1/pods?watch=FALSE&limit=x").verb, "list");
  // An unparsable field selector is a decode failure too, with or without metadata.name.
  assert.equal(describe("GET", "/api/v1/pods?watch=fal%C5%BFe&fieldSelector=foo").verb, "watch");
  assert.equal(describe("GET", "/api/v1/pods?watch=fal%C5%BFe&fieldSelector=a%3Db").verb, "list");
});

Deno.test("label selectors are checked with the labels.Parse grammar and validation", () => {
  const nameWith = (labelSelector: string) =>
    resolver.describe(
      "GET",
      "/api/v1/pods",
      new URLSearchParams({ fieldSelector: "metadata.name=foo", labelSelector }),
    ).name;
  const valid = [
    "",
    "app",
    "!app",
    "app=web",
    "app==web",
    "app!=web",
    "app=",
    "app=,tier",
    "app in (a,b)",
    "app notin (a)",
    "app in ()",
    "app in (,a)",
    "app in (a,)",
    "app in (,,a)",
    "in in (in,notin)",
    "x>1",
    "x<05",
    " app = web , tier ",
    "example.com/app=web",
    "a".repeat(63) + "=" + "b".repeat(63),
    "a\t=\tb",
    // Go's lexer reads NUL as the end of input at the start of a token; elsewhere it ends the
    // identifier or operator and is consumed.
    "app \0garbage(",
    "app\0=x",
    "app=\0x",
  ];
  const invalid = [
    "=web",
    "app=we b",
    "app=web,",
    ",app",
    "-app=web",
    "app-=web",
    "a/b/c=x",
    "/app=x",
    "Example.com/app=x",
    "a".repeat(64),
    "app=" + "b".repeat(64),
    "app=-web",
    "app in (a",
    "app in a",
    "app in (a b)",
    "app in (a,,)",
    "app notin",
    "x>a",
    "x>",
    "x>-1",
    "x<-0",
    "a\tb",
    "!app=web",
    "app=!web",
    "app===web",
    "app=(web)",
    "app\0garbage(",
    "app=\0-x",
  ];
  for (const s of valid) assert.equal(nameWith(s), "foo", `valid: ${JSON.stringify(s)}`);
  for (const s of invalid) assert.equal(nameWith(s), "", `invalid: ${JSON.stringify(s)}`);
});

Deno.test("field and label selectors are recorded only for list, watch and deletecollection", () => {
  const q = "fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb";
  const recorded = (method: string, path: string) => {
    const info = resolver.describe(method, path, q);
    return `${info.verb} ${info.fieldSelector ?? "-"} ${info.labelSelector ?? "-"}`;
  };
  assert.equal(recorded("GET", "/api/v1/pods"), "list spec.nodeName=n1 app=web");
  assert.equal(
    recorded("DELETE", "/api/v1/namespaces/ns/pods"),
    "deletecollection spec.nodeName=n1 app=web",
  );
  assert.equal(recorded("GET", "/api/v1/pods/p"), "get - -");
  assert.equal(recorded("POST", "/api/v1/pods"), "create - -");
  assert.equal(recorded("GET", "/api/v1/watch/pods"), "watch - -");
  assert.equal(recorded("GET", "/healthz"), "get - -");
  const empty = resolver.describe("GET", "/api/v1/pods", "fieldSelector=&labelSelector=");
  assert.equal("fieldSelector" in empty || "labelSelector" in empty, false);
});

Deno.test("the path is percent-decoded once before it is split, as Go's net/http does", () => {
  const dash = describe("GET", "/api/v1/namespaces/kube%2Dsystem/pods");
  assert.equal(dash.namespace, "kube-system");
  assert.equal(dash.path, "/api/v1/namespaces/kube-system/pods");
  assert.equal(get("GET", "/api/v1/namespaces/a%2Fb/pods"), "get api - v1 a b - pods | b/pods");
  assert.equal(describe("GET", "/api/v1/nodes/a+b").name, "a+b");
  assert.equal(describe("GET", "/api/v1/nodes/%C3%A9t%C3%A9").name, "été");
  assert.equal(describe("GET", "/api/v1/nodes/%FF").name, "\uFFFD");
});

Deno.test("a malformed escape in the path yields a non-resource info with an error", () => {
  const cases = [["/api/v1/pods/%zz", "%zz"], ["/api/v1/pods/%4", "%4"], ["/x%", "%"]];
  for (const [path, bad] of cases) {
    const info = describe("DELETE", path!);
    assert.equal(columns(info), "delete - - - - - - - | ", path);
    assert.deepEqual([info.isResourceRequest, info.path], [false, path]);
    assert.equal(
      info.error,
      `Cannot decode path: invalid URL escape "${bad}" in ${JSON.stringify(path)}`,
    );
  }
});

Deno.test("apiPrefixes and grouplessApiPrefixes configure the Kubernetes rules", () => {
  const custom = new RequestInfoResolver({
    apiPrefixes: ["api", "apis", "k8s"],
    grouplessApiPrefixes: ["api", "k8s"],
  });
  assert.equal(
    columns(custom.describe("GET", "/k8s/v1/namespaces/ns/widgets/w")),
    "get k8s - v1 ns widgets - w | widgets/w",
  );
  const none = new RequestInfoResolver({ apiPrefixes: [] });
  assert.equal(none.describe("GET", "/api/v1/pods").isResourceRequest, false);
  const grouped = new RequestInfoResolver({ grouplessApiPrefixes: [] });
  assert.equal(grouped.describe("GET", "/api/v1/pods").isResourceRequest, false);
  assert.equal(
    columns(grouped.describe("GET", "/api/core/v1/pods")),
    "list api core v1 - pods - - | pods",
  );
});

Deno.test("invalid prefixes are refused when the resolver is created", () => {
  assert.throws(() => new RequestInfoResolver({ apiPrefixes: ["api", "/apis"] }), {
    name: "TypeError",
    message: "Cannot create RequestInfoResolver: apiPrefixes[1] must be one path segment without " +
      '"/", received "/apis"',
  });
  assert.throws(() => new RequestInfoResolver({ grouplessApiPrefixes: [""] }), {
    name: "TypeError",
    message:
      "Cannot create RequestInfoResolver: grouplessApiPrefixes[0] must be one path segment " +
      'without "/", received ""',
  });
  assert.throws(() => new RequestInfoResolver({ apiPrefixes: "api" as unknown as string[] }), {
    name: "TypeError",
    message: 'Cannot create RequestInfoResolver: apiPrefixes must be an array, received "api"',
  });
});

Deno.test("describeRequest accepts absolute URLs, URL objects and paths with queries", () => {
  const urls = [
    "https://k8s.example:6443/api/v1/namespaces/ns/pods?watch=1",
    new URL("https://k8s.example/api/v1/namespaces/ns/pods?watch=1"),
    "/api/v1/namespaces/ns/pods?watch=1#fragment",
  ];
  for (const url of urls) {
    const info = describeRequest("GET", url);
    assert.equal(columns(info), "watch api - v1 ns pods - - | pods", String(url));
    assert.equal(info.path, "/api/v1/namespaces/ns/pods");
  }
  assert.equal(describeRequest("GET", "/api/v1/pods#?watch=1").verb, "list");
  assert.equal(describeRequest("GET", "").isResourceRequest, false);
  const routed = describeRequest("GET", "/v1/orders/7", {
    routes: [{ pattern: "/v1/orders/:id", resource: "orders", nameParam: "id" }],
  });
  assert.deepEqual([routed.resource, routed.name], ["orders", "7"]);
  assert.throws(() => describeRequest("GET", "api/v1/pods"), {
    name: "TypeError",
    message: 'Cannot describe request: url must be a path starting with "/" or an absolute URL, ' +
      'received "api/v1/pods"',
  });
  assert.throws(() => describeRequest("GET", 42 as unknown as string), {
    name: "TypeError",
    message: "Cannot describe request: url must be a string or URL, received 42",
  });
});

const ORDERS: ResourceRoute = {
  pattern: "/v1/tenants/:tenant/orders/:id?",
  resource: "orders",
  apiGroup: "shop",
  apiVersion: "v1",
  namespaceParam: "tenant",
  nameParam: "id",
};

Deno.test("a resource route gives an ordinary REST path resource semantics", () => {
  const shop = new RequestInfoResolver({
    routes: [{
      pattern: "/v1/tenants/:tenant/orders/:id",
      resource: "orders",
      apiGroup: "shop",
      namespaceParam: "tenant",
      nameParam: "id",
    }],
  });
  assert.deepEqual(shop.describe("GET", "/v1/tenants/acme/orders/42"), {
    isResourceRequest: true,
    path: "/v1/tenants/acme/orders/42",
    verb: "get",
    apiPrefix: "",
    apiGroup: "shop",
    apiVersion: "",
    namespace: "acme",
    resource: "orders",
    subresource: "",
    name: "42",
    parts: ["orders", "42"],
  });
  // Without the optional marker the collection path does not match.
  assert.equal(shop.describe("GET", "/v1/tenants/acme/orders").isResourceRequest, false);
});

Deno.test("a trailing optional parameter lets a route match the collection", () => {
  const shop = new RequestInfoResolver({ routes: [ORDERS] });
  const cases: [string, string, string, string][] = [
    ["GET", "/v1/tenants/acme/orders", "", "list - | orders"],
    ["GET", "/v1/tenants/acme/orders/", "", "list - | orders"],
    ["HEAD", "/v1/tenants/acme/orders", "", "list - | orders"],
    ["GET", "/v1/tenants/acme/orders", "watch=true", "watch - | orders"],
    ["GET", "/v1/tenants/acme/orders", "watch=false", "list - | orders"],
    ["DELETE", "/v1/tenants/acme/orders", "", "deletecollection - | orders"],
    ["POST", "/v1/tenants/acme/orders", "", "create - | orders"],
    ["PUT", "/v1/tenants/acme/orders/42", "", "update 42 | orders/42"],
    ["PATCH", "/v1/tenants/acme/orders/42", "", "patch 42 | orders/42"],
    ["DELETE", "/v1/tenants/acme/orders/42", "", "delete 42 | orders/42"],
    ["GET", "/v1/tenants/acme/orders/42", "watch=true", "get 42 | orders/42"],
    ["OPTIONS", "/v1/tenants/acme/orders/42", "", " 42 | orders/42"],
  ];
  for (const [method, path, query, expected] of cases) {
    const info = shop.describe(method, path, query);
    const where = `${method} ${path}?${query}`;
    assert.equal(`${info.verb} ${info.name || "-"} | ${info.parts.join("/")}`, expected, where);
    assert.deepEqual(
      [info.isResourceRequest, info.namespace, info.apiGroup, info.apiVersion, info.resource],
      [true, "acme", "shop", "v1", "orders"],
      where,
    );
  }
  const list = shop.describe("GET", "/v1/tenants/acme/orders", "labelSelector=state%3Dopen");
  assert.equal(list.labelSelector, "state=open");
  const named = shop.describe("GET", "/v1/tenants/acme/orders", "fieldSelector=metadata.name%3D9");
  assert.deepEqual([named.verb, named.name], ["list", "9"]);
});

Deno.test("a route can capture a subresource", () => {
  const shop = new RequestInfoResolver({
    routes: [{
      pattern: "/v1/tenants/:tenant/orders/:id/:subresource",
      resource: "orders",
      namespaceParam: "tenant",
      nameParam: "id",
      subresourceParam: "subresource",
    }],
  });
  assert.equal(
    columns(shop.describe("POST", "/v1/tenants/acme/orders/42/cancel")),
    "create - - - acme orders cancel 42 | orders/42/cancel",
  );
});

Deno.test("routes are tried in order, and unmatched paths fall back to the Kubernetes rules", () => {
  const shop = new RequestInfoResolver({
    routes: [
      { pattern: "/v1/orders/export", resource: "exports" },
      { pattern: "/v1/orders/:id?", resource: "orders", nameParam: "id" },
      { pattern: "/v1/orders/:other", resource: "never" },
    ],
  });
  assert.equal(
    columns(shop.describe("GET", "/v1/orders/export")),
    "list - - - - exports - - | exports",
  );
  assert.equal(columns(shop.describe("GET", "/v1/orders/7")), "get - - - - orders - 7 | orders/7");
  for (const path of ["/v1/orders/7/items", "/v1/order", "/v1", "/v2/orders/7", "/v1//orders"]) {
    assert.equal(columns(shop.describe("GET", path)), "get - - - - - - - | ", path);
  }
  assert.equal(
    columns(shop.describe("GET", "/api/v1/namespaces/ns/pods")),
    "list api - v1 ns pods - - | pods",
  );
});

Deno.test("a route that fails part-way leaves nothing behind for the next one", () => {
  const routes = new RequestInfoResolver({
    routes: [
      {
        pattern: "/v1/:tenant/things/:id",
        resource: "things",
        namespaceParam: "tenant",
        nameParam: "id",
      },
      { pattern: "/v1/:tenant/:id", resource: "others", nameParam: "id" },
    ],
  });
  assert.equal(
    columns(routes.describe("GET", "/v1/acme/widgets")),
    "get - - - - others - widgets | others/widgets",
  );
});

Deno.test("route parameters are percent-decoded one segment at a time", () => {
  const shop = new RequestInfoResolver({ routes: [ORDERS] });
  const info = shop.describe("GET", "/v1/tenants/ac%20me/orders/a%2Fb");
  assert.deepEqual([info.namespace, info.name, info.parts], ["ac me", "a/b", ["orders", "a/b"]]);
  assert.equal(info.path, "/v1/tenants/ac me/orders/a/b");
  // Literal segments compare decoded; an empty parameter never matches.
  assert.equal(shop.describe("GET", "/v1/tenants/acme/%6Frders/1").name, "1");
  assert.equal(shop.describe("GET", "/v1/tenants//orders/1").isResourceRequest, false);
  assert.match(shop.describe("GET", "/v1/tenants/acme/orders/%zz").error ?? "", /"%zz"/);
});

Deno.test("routes are validated when the resolver is created", () => {
  const refused = (route: unknown, message: string) =>
    assert.throws(() => new RequestInfoResolver({ routes: [ORDERS, route as ResourceRoute] }), {
      name: "TypeError",
      message,
    });
  const r = (o: Partial<ResourceRoute>) => ({
    pattern: "/v1/orders/:id",
    resource: "orders",
    ...o,
  });
  const at = (pattern: string) => `Cannot compile routes[1] ${JSON.stringify(pattern)}: `;
  refused(null, "Cannot compile routes[1]: expected a ResourceRoute, received null");
  refused(
    r({ pattern: "v1/orders" }),
    'Cannot compile routes[1]: pattern must be a string starting with "/", received "v1/orders"',
  );
  const empty = 'empty segment (a pattern has no "//" and no trailing "/")';
  refused(r({ pattern: "/v1//orders" }), at("/v1//orders") + empty);
  refused(r({ pattern: "/v1/orders/" }), at("/v1/orders/") + empty);
  const badName = 'must be ":" and a name of letters, digits and "_"';
  refused(
    r({ pattern: "/v1/:order-id" }),
    at("/v1/:order-id") + `parameter ":order-id" ${badName}`,
  );
  refused(r({ pattern: "/v1/:" }), at("/v1/:") + `parameter ":" ${badName}`);
  refused(
    r({ pattern: "/v1/:a?/orders" }),
    at("/v1/:a?/orders") + 'only the last segment can be optional, received ":a?"',
  );
  refused(
    r({ pattern: "/v1/orders?" }),
    at("/v1/orders?") + 'only a parameter can be optional, received segment "orders?"',
  );
  refused(r({ pattern: "/v1/:id/x/:id" }), at("/v1/:id/x/:id") + 'parameter ":id" appears twice');
  refused(
    r({ nameParam: "name" }),
    at("/v1/orders/:id") + 'nameParam "name" is not a parameter of the pattern (it has :id)',
  );
  refused(
    r({ pattern: "/v1/orders", namespaceParam: "ns" }),
    at("/v1/orders") + 'namespaceParam "ns" is not a parameter of the pattern (it has none)',
  );
  refused(
    r({ namespaceParam: "id", nameParam: "id" }),
    at("/v1/orders/:id") + 'parameter ":id" cannot hold two roles',
  );
  refused(
    r({ pattern: "/v1/orders/:id/:sub", subresourceParam: "sub" }),
    at("/v1/orders/:id/:sub") +
      "subresourceParam needs a nameParam (a subresource belongs to a named object)",
  );
  refused(
    r({ resource: "" }),
    at("/v1/orders/:id") + 'resource must be a non-empty string without "/", received ""',
  );
  refused(
    r({ apiGroup: 1 as unknown as string }),
    at("/v1/orders/:id") + "apiGroup must be a string, received 1",
  );
  assert.throws(() => new RequestInfoResolver({ routes: {} as unknown as ResourceRoute[] }), {
    name: "TypeError",
    message: "Cannot create RequestInfoResolver: routes must be an array, received [object Object]",
  });
});

Deno.test("one resolver gives independent results across calls", () => {
  const first = describe("GET", "/api/v1/pods?fieldSelector=metadata.name%3Da&labelSelector=x");
  const second = describe("GET", "/api/v1/pods");
  assert.deepEqual([first.name, first.labelSelector], ["a", "x"]);
  assert.deepEqual([second.name, second.labelSelector, second.fieldSelector], [
    "",
    undefined,
    undefined,
  ]);
  first.parts.push("mutated");
  assert.deepEqual(describe("GET", "/api/v1/pods").parts, ["pods"]);
});
