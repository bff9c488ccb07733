import assert from "node:assert/strict";
import { run } from "../_helpers/cli.ts";

const VALID_LEVEL = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: tenants
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 55
    lendablePercent: 10
    limitResponse:
      type: Queue
      queuing: {queues: 32, handSize: 4, queueLengthLimit: 20}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: tenants
spec:
  priorityLevelConfiguration: {name: tenants}
  matchingPrecedence: 300
  distinguisherMethod: {type: ByNamespace}
  rules:
  - subjects: [{kind: Group, group: {name: system:authenticated}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}]
`;

const INVALID = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: bad}
spec:
  priorityLevelConfiguration: {name: tenants}
  matchingPrecedence: 20000
  rules: [{subjects: []}]
`;

const DANGLING = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: lost}
spec:
  priorityLevelConfiguration: {name: nowhere}
`;

Deno.test("apf validate: a valid file exits 0 with a one-line summary", async () => {
  const r = await run(["validate", "a.yaml"], { "a.yaml": VALID_LEVEL });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "valid: 1 file, 1 FlowSchemas, 1 PriorityLevelConfigurations\n");
  assert.equal(r.stderr, "");
});

Deno.test("apf validate: an invalid file exits 1 and prints every error", async () => {
  const r = await run(["validate", "a.yaml", "b.yaml"], {
    "a.yaml": VALID_LEVEL,
    "b.yaml": INVALID,
  });
  assert.equal(r.code, 1);
  assert.deepEqual(r.stdout.trimEnd().split("\n"), [
    "FlowSchema/bad: spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000",
    "FlowSchema/bad: spec.rules[0].subjects: Required value: subjects must contain at least one value",
    "FlowSchema/bad: spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
  ]);
  assert.equal(r.stderr, "invalid: 3 errors\n");
});

Deno.test("apf validate: duplicates across files are errors", async () => {
  const r = await run(["validate", "a.yaml", "b.yaml"], {
    "a.yaml": VALID_LEVEL,
    "b.yaml": VALID_LEVEL,
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stdout,
    /^b\.yaml: document 1, line 1: duplicate PriorityLevelConfiguration\/tenants: already defined at a\.yaml: document 1, line 1$/m,
  );
});

Deno.test("apf validate: unreadable input exits 2, no file is a usage error", async () => {
  const missing = await run(["validate", "a.yaml", "missing.yaml"], { "a.yaml": VALID_LEVEL });
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, "cannot read missing.yaml: No such file\n");
  const none = await run(["validate"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /usage: apf validate/);
});

Deno.test("apf validate: dangling FlowSchemas are valid but warned about", async () => {
  const r = await run(["validate", "d.yaml"], { "d.yaml": DANGLING });
  assert.equal(r.code, 0);
  assert.match(
    r.stderr,
    /warning: FlowSchema\/lost: .*no PriorityLevelConfiguration named "nowhere"/,
  );
});

Deno.test("apf config print --json: the built-in configuration (docs/semantics.md §6.3)", async () => {
  const r = await run(["config", "print", "--json"]);
  assert.equal(r.code, 0);
  const json = JSON.parse(r.stdout);
  assert.equal(json.nominalSum, 602);
  const system = json.priorityLevels.find((pl: { name: string }) => pl.name === "system");
  assert.deepEqual(system, {
    name: "system",
    type: "Limited",
    limitResponse: "Queue",
    shares: 30,
    nominal: 74,
    lendable: 24,
    borrowing: 600,
    min: 50,
    max: 674,
    currentLimit: 117,
    queues: 64,
    handSize: 6,
    queueLengthLimit: 50,
    maxSeats: 12,
  });
  assert.deepEqual(
    json.priorityLevels.map((pl: { currentLimit: number }) => pl.currentLimit),
    [0, 30, 117, 170, 58, 114, 56, 56],
  );
  assert.deepEqual(json.flowSchemas[0], {
    precedence: 1,
    name: "exempt",
    priorityLevel: "exempt",
    distinguisher: null,
  });
  assert.equal(json.flowSchemas.length, 11);
});

Deno.test("apf config print: user config, server concurrency and mandatory-only", async () => {
  const files = { "t.yaml": VALID_LEVEL, "d.yaml": DANGLING };
  const r = await run(
    [
      "config",
      "print",
      "--config",
      "t.yaml",
      "--config=d.yaml",
      "--server-concurrency",
      "120",
      "--mandatory-only",
      "--json",
    ],
    files,
  );
  assert.equal(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout);
  assert.equal(json.serverConcurrencyLimit, 120);
  // Shares: exempt 0 + catch-all 5 + tenants 55 = 60.
  assert.deepEqual(
    json.priorityLevels.map((pl: { name: string; nominal: number }) => [pl.name, pl.nominal]),
    [
      ["exempt", 0],
      ["catch-all", 10],
      ["tenants", 110],
    ],
  );
  assert.deepEqual(json.flowSchemas.map((fs: { name: string }) => fs.name), [
    "exempt",
    "tenants",
    "catch-all",
  ]);
  assert.deepEqual(json.dangling, [{
    precedence: 1000,
    name: "lost",
    priorityLevel: "nowhere",
    distinguisher: null,
  }]);
});

Deno.test("apf config print: the table lists levels and schemas in matching order", async () => {
  const r = await run(["config", "print"]);
  assert.equal(r.code, 0);
  const lines = r.stdout.split("\n");
  assert.equal(
    lines[0],
    "Priority levels (server concurrency limit 600, shares 245, nominal sum 602)",
  );
  assert.match(
    lines[1]!,
    /^NAME\s+TYPE\s+SHARES\s+NOMINAL\s+LENDABLE\s+BORROWING\s+MIN\s+MAX\s+CURRENT\s+QUEUES\s+HANDSIZE\s+QUEUELENGTH\s+MAXSEATS$/,
  );
  assert.match(
    r.stdout,
    /^workload-low\s+Limited\/Queue\s+100\s+245\s+221\s+600\s+24\s+845\s+56\s+128\s+6\s+50\s+37$/m,
  );
  assert.match(
    r.stdout,
    /^catch-all\s+Limited\/Reject\s+5\s+13\s+0\s+600\s+13\s+613\s+30\s+-\s+-\s+-\s+-$/m,
  );
  const schemas = lines.slice(lines.indexOf("Flow schemas (matching order)") + 2).filter((l) =>
    l !== ""
  );
  assert.deepEqual(schemas.map((l) => l.split(/\s+/)[1]), [
    "exempt",
    "probes",
    "system-leader-election",
    "system-node-high",
    "system-nodes",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-system-service-accounts",
    "service-accounts",
    "global-default",
    "catch-all",
  ]);
});

Deno.test("apf config print: bad input", async () => {
  const invalid = await run(["config", "print", "--config", "b.yaml"], { "b.yaml": INVALID });
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /FlowSchema\/bad: spec.matchingPrecedence/);
  for (
    const args of [
      ["--server-concurrency", "0"],
      ["--server-concurrency", "1.5"],
      ["--server-concurrency"],
      ["--bogus"],
      ["extra"],
    ]
  ) {
    const r = await run(["config", "print", ...args]);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /usage: apf config print/);
  }
  assert.equal((await run(["config", "print", "--config", "nope.yaml"])).code, 2);
});

Deno.test("apf: help, version and unknown commands", async () => {
  assert.equal((await run(["help"])).code, 0);
  assert.match((await run(["version"])).stdout, /^apf 0\.1\.0\n$/);
  const unknown = await run(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  assert.equal((await run([])).code, 2);
  assert.equal((await run(["config", "show"])).code, 2);
});

Deno.test("apf: --help and -h on every command print its usage to stdout and exit 0", async () => {
  const cases: [string[], RegExp][] = [
    [["validate", "--help"], /^usage: apf validate <file>\.\.\./],
    [["validate", "-h"], /^usage: apf validate <file>\.\.\./],
    [["validate", "a.yaml", "--help"], /^usage: apf validate /],
    [["config", "print", "--help"], /^usage: apf config print \[--config <file>\.\.\.\]/],
    [["config", "print", "-h"], /^usage: apf config print /],
    [["config", "--help"], /^usage: apf config print /],
    [["config", "-h"], /^usage: apf config print /],
    [["classify", "--help"], /^usage: apf classify /],
    [["classify", "-h"], /^usage: apf classify /],
    [["simulate", "--help"], /^usage: apf simulate <scenario\.json\|->\n/],
    [["simulate", "-h"], /^usage: apf simulate /],
    [["--help"], /^apf: Kubernetes API Priority and Fairness/],
    [["-h"], /^apf: Kubernetes API Priority and Fairness/],
  ];
  for (const [args, usage] of cases) {
    const r = await run(args, {}, ['{"method":"GET","path":"/"}']);
    assert.equal(r.code, 0, args.join(" "));
    assert.match(r.stdout, usage, args.join(" "));
    assert.equal(r.stderr, "", args.join(" "));
  }
  // A value that looks like -h is still the option's value.
  const value = await run(["config", "print", "--config", "-h"]);
  assert.equal(value.code, 2);
  assert.equal(value.stderr, "cannot read -h: No such file\n");
});
