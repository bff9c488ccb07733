import assert from "node:assert/strict";
import fc from "fast-check";
import { IDENTITY_LIMITS, IdentityError, normalizeUser } from "../../src/classify/identity.ts";
import {
  frontProxyIdentity,
  type IdentityResolver,
  jwtIdentity,
  jwtPayloadIdentity,
} from "../../src/classify/identity_resolvers.ts";

Deno.test("no identity is system:anonymous in system:unauthenticated", () => {
  const anonymous = { name: "system:anonymous", groups: ["system:unauthenticated"] };
  assert.deepEqual(normalizeUser(undefined), anonymous);
  assert.deepEqual(normalizeUser(null), anonymous);
  assert.deepEqual(normalizeUser({}), anonymous);
  assert.deepEqual(normalizeUser({ name: "", groups: ["admins"] }), anonymous);
});

Deno.test("identified users are added to system:authenticated, as Kubernetes does", () => {
  assert.deepEqual(normalizeUser({ name: "alice" }), {
    name: "alice",
    groups: ["system:authenticated"],
  });
  assert.deepEqual(normalizeUser({ name: "bob", groups: ["dev", "", "dev", "ops"] }), {
    name: "bob",
    groups: ["dev", "ops", "system:authenticated"],
  });
  // Already authenticated or explicitly unauthenticated users are left alone.
  assert.deepEqual(normalizeUser({ name: "c", groups: ["system:authenticated", "x"] }).groups, [
    "system:authenticated",
    "x",
  ]);
  assert.deepEqual(normalizeUser({ name: "d", groups: ["system:unauthenticated"] }).groups, [
    "system:unauthenticated",
  ]);
  // The anonymous user name never gets system:authenticated.
  assert.deepEqual(normalizeUser({ name: "system:anonymous", groups: [] }).groups, []);
  assert.deepEqual(normalizeUser({ name: "e", uid: "42", extra: { scopes: ["a", "b"] } }), {
    name: "e",
    groups: ["system:authenticated"],
    uid: "42",
    extra: { scopes: ["a", "b"] },
  });
});

Deno.test("oversized or malformed identity is refused with a clear error", () => {
  const refuses = (input: unknown, pattern: RegExp) =>
    assert.throws(
      () => normalizeUser(input as never),
      (e: unknown) => e instanceof IdentityError && pattern.test(e.message),
    );
  refuses(
    { name: "x".repeat(IDENTITY_LIMITS.nameLength + 1) },
    /user name is 1025 characters long \(limit 1024\)/,
  );
  refuses({ name: "a\nb" }, /contains control characters/);
  refuses({ name: 42 }, /user name must be a string, got number/);
  refuses({ name: "a", groups: "admins" }, /groups must be a list/);
  refuses(
    { name: "a", groups: Array.from({ length: 257 }, (_, i) => `g${i}`) },
    /257 groups \(limit 256\)/,
  );
  refuses({ name: "a", groups: [null] }, /group name must be a string/);
  refuses({ name: "a", extra: { k: "v" } }, /extra "k" must be a list/);
  assert.deepEqual(normalizeUser({ name: "a", groups: Array(256).fill("g") }).groups, [
    "g",
    "system:authenticated",
  ]);
});

Deno.test("front-proxy headers: user, one group a field, extras (Kubernetes' request-header authenticator)", () => {
  const resolver = frontProxyIdentity();
  const identify = (headers: Headers) =>
    resolver(new Request("http://localhost/", { headers }), undefined);
  const headers = new Headers();
  headers.append("X-Remote-User", "alice");
  headers.append("X-Remote-Group", "dev");
  headers.append("X-Remote-Group", "admins");
  headers.append("X-Remote-Extra-Scopes", "read");
  headers.append("X-Remote-Extra-Scopes", "write");
  headers.append("X-Remote-Extra-Acme.com%2Fproject", "p1");
  // Lower-cased, then unescaped: %41 is "A".
  headers.append("X-Remote-Extra-%41bc", "x");
  assert.deepEqual(identify(headers), {
    name: "alice",
    groups: ["dev", "admins"],
    extra: { scopes: ["read", "write"], "acme.com/project": ["p1"], Abc: ["x"] },
  });
  // A group is a whole field: a bare comma is part of its name (an LDAP name, say), so a field
  // cannot smuggle in another group. A Headers joins repeated fields with ", ", so that is
  // where they part.
  assert.deepEqual(
    identify(new Headers({ "X-Remote-User": "a", "X-Remote-Group": "system:masters,x" }))!.groups,
    ["system:masters,x"],
  );
  assert.deepEqual(
    identify(new Headers({ "X-Remote-User": "a", "X-Remote-Group": "cn=ops,dc=example" }))!
      .groups,
    ["cn=ops,dc=example"],
  );
  assert.equal(identify(new Headers({ "X-Remote-Group": "dev" })), undefined);
  assert.equal(identify(new Headers({ "X-Remote-User": "  " })), undefined);
  // A malformed escape keeps the key as it is ("Always record extra strings").
  assert.deepEqual(
    identify(new Headers({ "X-Remote-User": "a", "X-Remote-Extra-%zz": "v" }))!.extra,
    { "%zz": ["v"] },
  );
});

Deno.test("front-proxy headers: configurable names, first non-empty user header wins", () => {
  const resolver = frontProxyIdentity({
    usernameHeaders: ["X-User", "X-Alt-User"],
    groupHeaders: ["X-Groups"],
    extraHeaderPrefixes: [],
  });
  const identify = (headers: Headers) =>
    resolver(new Request("http://localhost/", { headers }), undefined);
  assert.deepEqual(
    identify(new Headers({ "X-Alt-User": "bob", "X-Groups": "g", "X-Remote-User": "mallory" })),
    {
      name: "bob",
      groups: ["g"],
    },
  );
  assert.throws(() => frontProxyIdentity({ usernameHeaders: [""] }), TypeError);
});

Deno.test("JWT payloads map claims to identity", () => {
  assert.deepEqual(jwtPayloadIdentity({ sub: "alice", groups: ["dev"] }), {
    name: "alice",
    groups: ["dev"],
  });
  assert.deepEqual(jwtPayloadIdentity({ sub: "alice", groups: "dev" }), {
    name: "alice",
    groups: ["dev"],
  });
  assert.deepEqual(
    jwtPayloadIdentity({ email: "a@x.io", roles: ["r"], oid: "u1" }, {
      userClaim: "email",
      usernamePrefix: "oidc:",
      groupsClaim: "roles",
      groupsPrefix: "oidc:",
      uidClaim: "oid",
    }),
    { name: "oidc:a@x.io", groups: ["oidc:r"], uid: "u1" },
  );
  assert.equal(jwtPayloadIdentity(undefined), undefined);
  assert.equal(jwtPayloadIdentity({ groups: ["dev"] }), undefined);
  assert.throws(() => jwtPayloadIdentity("token"), IdentityError);
  assert.throws(() => jwtPayloadIdentity({ sub: 7 }), /claim "sub" is not a string/);
  assert.throws(
    () => jwtPayloadIdentity({ sub: "a", groups: [1] }),
    /claim "groups" is not a string list/,
  );
  assert.throws(
    () => jwtPayloadIdentity({ sub: "a", id: 5 }, { uidClaim: "id" }),
    /claim "id" is not a string/,
  );
});

Deno.test("one resolver shape: front proxy, JWT from the context and custom functions", async () => {
  type Ctx = { vars: Record<string, unknown> };
  const request = new Request("http://localhost/", { headers: { "X-Remote-User": "proxy-user" } });
  const ctx: Ctx = { vars: { jwtPayload: { sub: "jwt-user", groups: ["dev"] } } };
  const resolvers: IdentityResolver<Ctx>[] = [
    frontProxyIdentity(),
    jwtIdentity((_r, c: Ctx) => c.vars.jwtPayload),
    (r) => ({ name: `key:${r.headers.get("X-Remote-User")}` }),
    async () => await Promise.resolve({ name: "async-user", groups: ["a"] }),
  ];
  const names = [];
  for (const resolve of resolvers) names.push((await resolve(request, ctx))?.name);
  assert.deepEqual(names, ["proxy-user", "jwt-user", "key:proxy-user", "async-user"]);
  assert.equal(jwtIdentity((_r, c: Ctx) => c.vars.missing)(request, ctx), undefined);
  assert.throws(() => jwtIdentity("claims" as never), /payloadOf must be a function, got string/);
});

Deno.test("normalizeUser's groups follow the Kubernetes rules for any list: first of each kept, empty dropped, system:authenticated added", () => {
  const group = fc.constantFrom(
    "",
    "dev",
    "ops",
    "a",
    "system:authenticated",
    "system:unauthenticated",
  );
  const name = fc.constantFrom("alice", "system:anonymous");
  fc.assert(
    fc.property(name, fc.array(group, { maxLength: 6 }), (userName, groups) => {
      const expected: string[] = [];
      for (const g of groups) if (g !== "" && !expected.includes(g)) expected.push(g);
      if (
        userName !== "system:anonymous" && !expected.includes("system:authenticated") &&
        !expected.includes("system:unauthenticated")
      ) {
        expected.push("system:authenticated");
      }
      assert.deepEqual(normalizeUser({ name: userName, groups }), {
        name: userName,
        groups: expected,
      });
    }),
  );
});

Deno.test("control characters are refused in short and long names alike", () => {
  for (const control of ["\u0000", "\u001f", "\u007f", "\u0085", "\u009f"]) {
    for (const name of [`a${control}`, `${"a".repeat(100)}${control}`]) {
      assert.throws(() => normalizeUser({ name }), IdentityError, JSON.stringify(name));
      assert.throws(() => normalizeUser({ name: "x", groups: [name] }), IdentityError);
    }
  }
  for (const fine of ["\u00a0", "\u0020", "é", "~", "a".repeat(100)]) {
    assert.equal(normalizeUser({ name: `a${fine}` }).name, `a${fine}`);
  }
});
