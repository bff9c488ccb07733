import assert from "node:assert/strict";
import { run } from "./_run.ts";

Deno.test("apf simulate: no scenario or two scenarios is a usage error", async () => {
  const none = await run(["simulate"]);
  assert.equal(none.code, 2);
  assert.equal(none.stdout, "");
  assert.equal(
    none.stderr,
    "apf simulate: no scenario file given\nusage: apf simulate <scenario.json|->\n",
  );

  const two = await run(["simulate", "a.json", "b.json"], { "a.json": "{}", "b.json": "{}" });
  assert.equal(two.code, 2);
  assert.equal(two.stdout, "");
  assert.match(two.stderr, /^apf simulate: expected one scenario file, got 2\nusage: apf simulate/);

  const option = await run(["simulate", "--fast", "a.json"], { "a.json": "{}" });
  assert.equal(option.code, 2);
  assert.match(option.stderr, /^apf simulate: unknown option --fast\n/);
});

Deno.test("apf simulate --help prints the usage and exits 0", async () => {
  const r = await run(["simulate", "--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^usage: apf simulate <scenario\.json\|->\n/);
  assert.equal(r.stderr, "");
});

Deno.test("apf help lists simulate", async () => {
  const r = await run(["help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /\n {2}apf simulate <scenario\.json\|->\n/);
});

Deno.test("apf simulate: an unreadable file exits 2", async () => {
  const r = await run(["simulate", "missing.json"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "apf simulate: cannot read missing.json: No such file\n");
});

Deno.test("apf simulate: an invalid scenario exits 1 naming the field", async () => {
  const r = await run(["simulate", "s.json"], {
    "s.json": JSON.stringify({ clients: [{ name: "a" }, { name: "b", threads: 0 }] }),
  });
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr,
    "apf simulate: s.json: clients[1].threads: must be an integer >= 1, got 0\n",
  );

  const unknown = await run(["simulate", "u.json"], {
    "u.json": '{"priorityLevel": {"queuing": {"queues": 9, "handsize": 2}}}',
  });
  assert.equal(unknown.code, 1);
  assert.match(
    unknown.stderr,
    /^apf simulate: u\.json: priorityLevel\.queuing\.handsize: unknown field/,
  );
});

Deno.test("apf simulate: invalid JSON on standard input exits 1", async () => {
  const r = await run(["simulate", "-"], { "-": "{ not json" });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^apf simulate: <stdin>: invalid JSON: /);
});
