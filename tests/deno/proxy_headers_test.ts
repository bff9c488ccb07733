import assert from "node:assert/strict";
import {
  clientAddressOf,
  endToEndFields,
  endToEndHeaders,
  HOP_BY_HOP_HEADERS,
  upstreamRequestHeaders,
} from "../../src/deno/_forwarded_headers.ts";

Deno.test("endToEndHeaders drops hop-by-hop headers and those Connection names", () => {
  const headers = new Headers({
    "Connection": "keep-alive, X-One ,x-two, bad header, ",
    "X-One": "1",
    "X-Two": "2",
    "X-Three": "3",
    "Keep-Alive": "timeout=5",
    "Transfer-Encoding": "chunked",
    "Upgrade": "websocket",
    "Proxy-Authorization": "Basic eA==",
    "TE": "trailers",
    "Trailer": "X-Sum",
    "Content-Type": "text/plain",
  });
  assert.deepEqual([...endToEndHeaders(headers)], [
    ["content-type", "text/plain"],
    ["x-three", "3"],
  ]);
  assert.ok(HOP_BY_HOP_HEADERS.includes("proxy-authenticate"));
  assert.equal(headers.get("x-one"), "1", "the input is not changed");
});

Deno.test("endToEndFields drops the fields Connection lists, whatever their case, and skips what is no token", () => {
  assert.deepEqual(
    endToEndFields([
      "Content-Type",
      "text/plain",
      "CONNECTION",
      "Keep-Alive, X-One , bad header",
      "connection",
      "x-two",
      "X-One",
      "1",
      "X-TWO",
      "2",
      "bad header",
      "3",
      "Transfer-Encoding",
      "chunked",
    ]),
    ["Content-Type", "text/plain", "bad header", "3"],
  );
  const plain = ["Content-Length", "5", "Server", "nginx", "Keep-Alive-Not", "1"];
  assert.equal(endToEndFields(plain), plain, "none is hop-by-hop: the same array");
  assert.deepEqual(
    endToEndFields(["Connection", "close", "Close", "x", "ETag", '"a"']),
    ["ETag", '"a"'],
    "a field named as the option Connection lists goes too",
  );
});

Deno.test("endToEndFields drops hop-by-hop fields and any name Connection lists, of any length", () => {
  const plain = ["Content-Length", "5", "Server", "nginx"];
  assert.equal(endToEndFields(plain), plain, "nothing to drop: the same array");
  assert.deepEqual(
    endToEndFields([
      "Connection",
      "keep-alive",
      "Keep-Alive",
      "timeout=5",
      "Content-Type",
      "text/plain",
      "Server",
      "nginx",
    ]),
    ["Content-Type", "text/plain", "Server", "nginx"],
  );
  assert.deepEqual(
    endToEndFields([
      "X-Private-Trace-Identifier",
      "1",
      "connection",
      "close, X-Private-Trace-Identifier",
      "ETag",
      '"a"',
    ]),
    ["ETag", '"a"'],
  );
});

Deno.test("upstreamRequestHeaders extends X-Forwarded-For, drops Host, asks for identity", () => {
  const out = upstreamRequestHeaders(
    new Headers({ "Host": "gw", "X-Forwarded-For": "10.0.0.1", "Accept-Encoding": "gzip" }),
    "127.0.0.1",
  );
  assert.deepEqual([...out], [
    ["accept-encoding", "identity"],
    ["x-forwarded-for", "10.0.0.1, 127.0.0.1"],
  ]);
  assert.equal(upstreamRequestHeaders(new Headers(), "::1").get("x-forwarded-for"), "::1");
  assert.equal(upstreamRequestHeaders(new Headers(), null).get("x-forwarded-for"), null);
  assert.equal(clientAddressOf({ transport: "tcp", hostname: "::1", port: 1 }), "::1");
  assert.equal(clientAddressOf({ transport: "unix", path: "/tmp/s" }), null);
  assert.equal(clientAddressOf(undefined), null);
});
