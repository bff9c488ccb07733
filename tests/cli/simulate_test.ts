import assert from "node:assert/strict";
import { run } from "../_helpers/cli.ts";

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

Deno.test("apf simulate prints the result JSON in the documented shape", async () => {
  const scenario = JSON.stringify({
    name: "two-flows",
    durationMs: 20000,
    clients: [
      { name: "a", threads: 4 },
      { name: "b", flowHash: "2002002002", threads: 4, split: true },
    ],
  });
  const r = await run(["simulate", "s.json"], { "s.json": scenario });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const out = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(out), ["name", "checkpointsMs", "clients", "seatDemand"]);
  assert.equal(out.name, "two-flows");
  assert.deepEqual(out.checkpointsMs, [10000, 20000]);
  assert.deepEqual(Object.keys(out.clients[0]), ["name", "averageSeats", "dispatched", "rejected"]);
  assert.deepEqual(Object.keys(out.clients[0].rejected), [
    "queue-full",
    "concurrency-limit",
    "time-out",
    "cancelled",
  ]);
  assert.deepEqual(Object.keys(out.seatDemand), ["average", "stdDev", "highWatermark"]);
  // First half: a has 4 threads (demand 2), b has 2 (demand 1), capacity 4: both satisfied.
  const [a, b] = out.clients;
  assert.ok(Math.abs(a.averageSeats[0] - 2) < 0.02, `a: ${a.averageSeats}`);
  assert.ok(Math.abs(b.averageSeats[0] - 1) < 0.02, `b: ${b.averageSeats}`);
  assert.equal(a.dispatched, 4 * 20);
  assert.equal(b.dispatched, 2 * 20 + 2 * 10);
});

Deno.test("apf simulate reads the scenario from standard input with -", async () => {
  const r = await run(["simulate", "-"], {
    "-": '{"durationMs": 5000, "clients": [{"calls": 2}]}',
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.clients[0].dispatched, 16);
  assert.deepEqual(out.checkpointsMs, [5000]);
});

Deno.test("apf simulate runs the example scenarios", async () => {
  for (const file of ["uniform_handsize_1.json", "noisy_neighbour.json"]) {
    const path = new URL(`../../examples/scenarios/${file}`, import.meta.url).pathname;
    const r = await run(["simulate", path], { [path]: await Deno.readTextFile(path) });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    for (const client of out.clients) {
      assert.equal(Object.values(client.rejected).reduce((x: number, y) => x + Number(y), 0), 0);
    }
    if (file === "noisy_neighbour.json") {
      // The quiet flows get what they ask for (0.4 seats each) despite the noisy one.
      assert.ok(out.clients[1].averageSeats[0] > 0.38);
      assert.ok(out.clients[2].averageSeats[0] > 0.38);
    } else {
      assert.ok(Math.abs(out.clients[0].averageSeats[0] - 2) < 0.02);
    }
  }
});
