import assert from "node:assert/strict";
import { run } from "../_helpers/cli.ts";

const lines = (out: string) => out.trimEnd().split("\n").map((l) => JSON.parse(l));

Deno.test("apf classify: one NDJSON line out per request line in", async () => {
  const r = await run(["classify"], {}, [
    JSON.stringify({
      user: "alice",
      groups: [],
      method: "GET",
      path: "/api/v1/namespaces/x/pods",
      query: "watch=true",
    }),
    "",
    JSON.stringify({ method: "GET", path: "/healthz" }),
    JSON.stringify({
      user: "system:serviceaccount:default:x",
      groups: ["system:serviceaccounts"],
      method: "GET",
      path: "/api/v1/namespaces/default/pods",
    }),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const [alice, probe, sa] = lines(r.stdout);
  assert.deepEqual(
    [alice.flowSchema, alice.priorityLevel, alice.distinguisher, alice.flowHash, alice.hand],
    ["global-default", "global-default", "alice", "17644606172554983095", [
      55,
      62,
      126,
      125,
      105,
      1,
    ]],
  );
  assert.deepEqual(alice.requestInfo.verb, "watch");
  assert.deepEqual(alice.requestInfo.namespace, "x");
  assert.deepEqual([probe.flowSchema, probe.priorityLevel, probe.flowHash, probe.hand], [
    "probes",
    "exempt",
    null,
    null,
  ]);
  assert.deepEqual([sa.flowSchema, sa.flowHash, sa.hand], [
    "service-accounts",
    "9267409685745014192",
    [48, 52, 46, 15, 25, 35],
  ]);
  assert.equal("explain" in alice, false);
});

Deno.test("apf classify: malformed lines get an error line and processing continues", async () => {
  const r = await run(["classify"], {}, [
    "{not json",
    "[1]",
    JSON.stringify({ method: "GET" }),
    JSON.stringify({ method: "G E T", path: "/" }),
    JSON.stringify({ method: "GET", path: "relative" }),
    JSON.stringify({ method: "GET", path: "/", groups: "admins" }),
    JSON.stringify({ method: "GET", path: "/", user: "a\u0000b" }),
    JSON.stringify({ method: "GET", path: "/version" }),
  ]);
  assert.equal(r.code, 0);
  const out = lines(r.stdout);
  assert.equal(out.length, 8);
  assert.match(out[0].error, /^invalid JSON/);
  assert.equal(out[1].error, "expected a JSON object");
  assert.equal(out[2].error, '"path" is required');
  assert.match(out[3].error, /"method" must be an HTTP method/);
  assert.match(out[4].error, /"path" must start with "\/"/);
  assert.equal(out[5].error, '"groups" must be a list of strings');
  assert.match(out[6].error, /control characters/);
  assert.equal(out[7].flowSchema, "global-default");
});

Deno.test("apf classify --explain names the matching rule; --config is honoured", async () => {
  const config = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: health}
spec:
  priorityLevelConfiguration: {name: workload-low}
  matchingPrecedence: 1
  rules: []
`;
  const bad = await run(["classify", "--config", "c.yaml"], { "c.yaml": config }, []);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /only the schema named 'exempt' may have matchingPrecedence 1/);
  const r = await run(["classify", "--explain"], {}, [
    JSON.stringify({ method: "GET", path: "/livez" }),
  ]);
  const [probe] = lines(r.stdout);
  assert.deepEqual(probe.explain, {
    flowSchema: "probes",
    rule: "spec.rules[0].nonResourceRules[0]",
    subject: "spec.rules[0].subjects[0]",
    matchedSubject: { kind: "Group", group: { name: "system:unauthenticated" } },
    matchedRule: { verbs: ["get"], nonResourceURLs: ["/healthz", "/readyz", "/livez"] },
  });
  assert.equal((await run(["classify", "--bogus"])).code, 2);
});
