/**
 * `FieldHeaders` (`src/deno/_field_headers.ts`): the part of `Headers` that
 * identity resolvers read, over fields as the gateway's server received
 * them, checked against `Headers` itself.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { frontProxyIdentity } from "../../src/classify/identity_resolvers.ts";
import { FieldHeaders } from "../../src/deno/_field_headers.ts";

Deno.test("FieldHeaders.get: any case of the name, repeated values joined, null when absent", () => {
  const h = new FieldHeaders([
    "Host",
    "a",
    "X-Remote-User",
    "alice",
    "x-remote-group",
    "dev",
    "X-REMOTE-GROUP",
    "ops",
    "X-Remote-Usex",
    "mallory",
  ]);
  assert.equal(h.get("X-Remote-User"), "alice");
  assert.equal(h.get("x-remote-user"), "alice");
  assert.equal(h.get("X-REMOTE-USER"), "alice");
  assert.equal(h.get("X-Remote-Group"), "dev, ops");
  assert.deepEqual(h.lines("X-Remote-Group"), ["dev", "ops"]);
  assert.deepEqual(h.lines("X-Remote-Extra-Scopes"), []);
  assert.equal(h.get("X-Remote-Extra-Scopes"), null);
  assert.equal(h.has("host"), true);
  assert.equal(h.has("X-Remote-Use"), false);
  const seen: [string, string][] = [];
  h.forEach((value, name) => seen.push([name, value]));
  assert.deepEqual(seen, [
    ["host", "a"],
    ["x-remote-user", "alice"],
    ["x-remote-group", "dev"],
    ["x-remote-group", "ops"],
    ["x-remote-usex", "mallory"],
  ]);
});

Deno.test("FieldHeaders.get reads as Headers.get, for names asked in any case", () => {
  const name = fc.constantFrom("X-Remote-User", "x-remote-user", "X-Remote-Usex", "Host", "a-b");
  const caseOf = (text: string, upper: boolean[]) =>
    Array.from(text, (c, i) => upper[i % upper.length] ? c.toUpperCase() : c.toLowerCase()).join(
      "",
    );
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          name,
          fc.array(fc.boolean(), { minLength: 1 }),
          fc.stringMatching(/^[a-z0-9]{0,3}$/),
        ),
        {
          maxLength: 6,
        },
      ),
      name,
      fc.array(fc.boolean(), { minLength: 1 }),
      (fields, asked, askedCase) => {
        const flat = fields.flatMap(([n, upper, v]) => [caseOf(n, upper), v]);
        const headers = new Headers(fields.map(([n, upper, v]) => [caseOf(n, upper), v]));
        const askedAs = caseOf(asked, askedCase);
        assert.equal(new FieldHeaders(flat).get(askedAs), headers.get(askedAs));
      },
    ),
    { numRuns: 500, seed: 20261128 },
  );
});

Deno.test("frontProxyIdentity over FieldHeaders reads fields apart: the first user field, each field one value", () => {
  // The gateway's own server hands the resolver its fields as received (FieldHeaders), where
  // Kubernetes' reading of http.Header holds exactly: h.Get is the first field, h[key] each one.
  const fields = [
    "X-Remote-User",
    "alice",
    "X-Remote-User",
    "mallory",
    "X-Remote-Group",
    "dev, ops",
    "x-remote-group",
    "admins",
    "X-Remote-Extra-Scopes",
    "read, write",
  ];
  const request = { headers: new FieldHeaders(fields) } as unknown as Request;
  assert.deepEqual(frontProxyIdentity()(request), {
    name: "alice",
    groups: ["dev, ops", "admins"],
    extra: { scopes: ["read, write"] },
  });
});
