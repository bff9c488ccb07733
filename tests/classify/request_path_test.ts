import assert from "node:assert/strict";
import fc from "fast-check";
import { requestPathProblem } from "../../src/classify/mod.ts";
import { SMUGGLING_PATHS } from "../_helpers/paths.ts";

Deno.test("requestPathProblem refuses every dot-segment, backslash and bad-escape form", () => {
  for (const path of SMUGGLING_PATHS) {
    assert.notEqual(requestPathProblem(path), null, path);
  }
});

Deno.test("requestPathProblem accepts normal paths, dots inside names included", () => {
  for (
    const path of [
      "/",
      "/load",
      "/healthz",
      "/apis/apps.k8s.io/v1/namespaces/a.b/deployments",
      "/static/app.js",
      "/a..b",
      "/...",
      "/a/.../b",
      "/.well-known/openid-configuration",
      "/a/.hidden",
      "/a/..hidden",
      "/%41%42",
      "/a%2Fb",
      "/a%5Cb",
      "/caf%C3%A9",
    ]
  ) {
    assert.equal(requestPathProblem(path), null, path);
  }
});

Deno.test("requestPathProblem names the problem and quotes the path", () => {
  assert.equal(
    requestPathProblem("/healthz/%2e%2e/load"),
    'a dot segment in the path "/healthz/%2e%2e/load"',
  );
  assert.equal(requestPathProblem("/a\\b"), 'a "\\" in the path "/a\\\\b"');
  assert.equal(requestPathProblem("/a%zz"), 'invalid URL escape "%zz" in "/a%zz"');
});

/** Go's path decoding, enough for the property: %XX of ASCII. */
function decode(path: string): string {
  return path.replace(/%([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

Deno.test("an accepted path is served as classified: fetch() keeps it, decoding finds no dot segment", () => {
  const piece = fc.constantFrom(
    "/",
    ".",
    "..",
    "%2e",
    "%2E",
    "%2F",
    "%2f",
    "%5C",
    "\\",
    "a",
    "healthz",
    ".x",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
      const path = "/" + pieces.join("");
      if (requestPathProblem(path) !== null) return;
      // What the WHATWG parser (fetch, the gateway's upstream call) makes of it.
      assert.equal(new URL(`http://upstream${path}`).pathname, path);
      const segments = decode(path).split(/[\\/]/);
      assert.ok(!segments.includes(".") && !segments.includes(".."), path);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("requestPathProblem reads long paths as short ones: a prefix of plain segments changes nothing", () => {
  const prefix = "/aaaaaaaaaa/bbbbbbbbbb/cccccccccc/dddddddddd"; // longer than a short path alone
  for (const path of SMUGGLING_PATHS) {
    assert.notEqual(requestPathProblem(prefix + path), null, prefix + path);
  }
  for (const path of ["/", "/a..b", "/.well-known/x", "/%41%42", "/caf%C3%A9", "/static/app.js"]) {
    assert.equal(requestPathProblem(prefix + path), null, prefix + path);
  }
});
