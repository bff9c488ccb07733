/**
 * The package's dependencies are deno.json's imports; the tests, benchmarks
 * and Workers tooling add theirs in dev/import_map.json (with their own lock,
 * dev/deno.lock), so that `deno task start` and the published package
 * install only what they run. The two must agree on what they share.
 */

import assert from "node:assert/strict";

const read = async (path: string) =>
  JSON.parse(await Deno.readTextFile(new URL(`../${path}`, import.meta.url))).imports as Record<
    string,
    string
  >;

Deno.test("dev/import_map.json maps every package import exactly as deno.json does", async () => {
  const pkg = await read("deno.json");
  const dev = await read("dev/import_map.json");
  for (const [name, target] of Object.entries(pkg)) {
    assert.equal(dev[name], target, name);
  }
  assert.deepEqual(Object.keys(pkg).sort(), [
    "@noble/hashes/",
    "@redis/client",
    "hono",
    "hono/",
    "http-parser-js",
    "yaml",
    "zod",
  ]);
});
