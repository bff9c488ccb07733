import assert from "node:assert/strict";
import {
  headerValue,
  isPlainConstant,
  isPlainValue,
  listHas,
  mutableHeaderList,
} from "../../src/hono/_header_list.ts";

Deno.test("on Deno, a response's own headers expose their list, and a pair pushed there is served", async () => {
  const res = new Response("hello", { headers: { "X-Own": "1" } });
  const list = mutableHeaderList(res.headers);
  assert.ok(list !== null, "Deno keeps the list where the probe found it");
  // What Headers.get() saw before the push must not hide the new pair (its name cache).
  assert.equal(res.headers.get("x-added"), null);
  list.push(["X-Added", "2"]);
  assert.equal(res.headers.get("x-added"), "2");
  assert.deepEqual([...res.headers].map(([name]) => name), [
    "content-type",
    "x-added",
    "x-own",
  ]);
  assert.equal(await res.text(), "hello");

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const served = new Response("served");
    mutableHeaderList(served.headers)!.push(["X-Added", "3"]);
    return served;
  });
  try {
    const got = await fetch(`http://127.0.0.1:${server.addr.port}/`);
    assert.equal(await got.text(), "served");
    assert.equal(got.headers.get("X-Added"), "3");
  } finally {
    await server.shutdown();
  }
});

Deno.test("headers that are not a response's own mutable ones give no list", async () => {
  assert.equal(mutableHeaderList(new Headers({ a: "1" })), null, "guard none");
  assert.equal(mutableHeaderList(new Request("http://127.0.0.1/").headers), null, "guard request");
  assert.equal(mutableHeaderList(Response.redirect("http://127.0.0.1/", 302).headers), null);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    return new Response("x");
  });
  try {
    const fetched = await fetch(`http://127.0.0.1:${server.addr.port}/`);
    assert.equal(mutableHeaderList(fetched.headers), null, "a fetched response's are immutable");
    await fetched.body?.cancel();
  } finally {
    await server.shutdown();
  }
});

Deno.test("listHas and headerValue compare names without case; plain values are printable ASCII without edge blanks", () => {
  const list: [string, string][] = [["Content-Type", "text/plain"], ["X-A", "1"]];
  assert.ok(listHas(list, "content-type"));
  assert.ok(listHas(list, "x-a"));
  assert.ok(!listHas(list, "x-b"));
  const res = new Response("x", { headers: [["X-A", "1"], ["x-a", "2"]] });
  assert.equal(headerValue(res.headers, "x-a"), "1, 2");
  assert.equal(headerValue(res.headers, "content-type"), "text/plain;charset=UTF-8");
  assert.equal(headerValue(res.headers, "x-b"), null);
  assert.equal(headerValue(new Headers({ "X-A": "3" }), "x-a"), "3", "without a list: get()");
  for (const value of ["", "a", "apf;dur=1.5", "0b1d2a5c-5d8e-4c0b-9e2a-6f1f3c2d4e5f", "a b\tc"]) {
    assert.ok(isPlainValue(value), JSON.stringify(value));
    assert.ok(isPlainConstant(value), JSON.stringify(value));
  }
  for (const value of [" a", "a ", "\ta", "a\r\nb", "a\0", "é", "\u0100", "a\u007f"]) {
    assert.ok(!isPlainValue(value), JSON.stringify(value));
    assert.ok(!isPlainConstant(value), JSON.stringify(value));
  }
});
