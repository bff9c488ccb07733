import assert from "node:assert/strict";
import { formatValue } from "../../src/observe/_exposition.ts";
import { parseExposition, sampleValue } from "../../src/observe/_parse.ts";
import { Registry } from "../../src/observe/registry.ts";

Deno.test("formatValue prints floats like Go's strconv.FormatFloat(x, 'g', -1, 64)", () => {
  const cases: Array<[number, string]> = [
    [0, "0"],
    [-0, "0"],
    [1, "1"],
    [-1, "-1"],
    [0.005, "0.005"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [0.000015, "1.5e-05"],
    [123456, "123456"],
    [1000000, "1e+06"],
    [1234567, "1.234567e+06"],
    [2.5, "2.5"],
    [1e21, "1e+21"],
    [1.5e-300, "1.5e-300"],
    [0.1 + 0.2, "0.30000000000000004"],
    [Infinity, "+Inf"],
    [-Infinity, "-Inf"],
    [NaN, "NaN"],
  ];
  for (const [x, want] of cases) assert.equal(formatValue(x), want, `formatValue(${x})`);
});

Deno.test("Registry exposes counters, gauges and histograms in text format 0.0.4", () => {
  const r = new Registry();
  const h = r.histogram({
    name: "req_seconds",
    help: "Latency.",
    labelNames: ["zone", "app"],
    buckets: [0.1, 1, 1e6],
  });
  const c = r.counter({ name: "a_total", help: 'Back\\slash "and"\nnewline', labelNames: ["v"] });
  const g = r.gauge({ name: "temp", help: "No labels." });
  c.labels('quo"te\\back\nline').inc();
  c.labels("b").inc(2.5);
  c.labels("a").inc();
  g.labels().set(-Infinity);
  const child = h.labels("z1", "api");
  child.observe(0.1);
  child.observe(0.5);
  child.observe(5e6);
  h.labels("z0", "web").observe(NaN);
  assert.equal(
    r.expose(),
    [
      '# HELP a_total Back\\\\slash "and"\\nnewline',
      "# TYPE a_total counter",
      'a_total{v="a"} 1',
      'a_total{v="b"} 2.5',
      'a_total{v="quo\\"te\\\\back\\nline"} 1',
      "# HELP req_seconds Latency.",
      "# TYPE req_seconds histogram",
      'req_seconds_bucket{app="api",zone="z1",le="0.1"} 1',
      'req_seconds_bucket{app="api",zone="z1",le="1"} 2',
      'req_seconds_bucket{app="api",zone="z1",le="1e+06"} 2',
      'req_seconds_bucket{app="api",zone="z1",le="+Inf"} 3',
      'req_seconds_sum{app="api",zone="z1"} 5.0000006e+06',
      'req_seconds_count{app="api",zone="z1"} 3',
      'req_seconds_bucket{app="web",zone="z0",le="0.1"} 0',
      'req_seconds_bucket{app="web",zone="z0",le="1"} 0',
      'req_seconds_bucket{app="web",zone="z0",le="1e+06"} 0',
      'req_seconds_bucket{app="web",zone="z0",le="+Inf"} 1',
      'req_seconds_sum{app="web",zone="z0"} NaN',
      'req_seconds_count{app="web",zone="z0"} 1',
      "# HELP temp No labels.",
      "# TYPE temp gauge",
      "temp -Inf",
      "",
    ].join("\n"),
  );
});

Deno.test("Registry exposition parses back to the recorded values", () => {
  const r = new Registry();
  const c = r.counter({ name: "x_total", help: "X.", labelNames: ["a", "b"] });
  const h = r.histogram({ name: "h", help: "H.", buckets: [1, 2, Infinity] });
  c.labels("1", "2").inc(3);
  c.labels('a"b', "\\n").inc();
  h.labels().observe(1.5);
  const fams = parseExposition(r.expose());
  assert.deepEqual([...fams.keys()], ["h", "x_total"]);
  assert.equal(fams.get("h")!.type, "histogram");
  assert.equal(sampleValue(fams, "x_total", { a: "1", b: "2" }), 3);
  assert.equal(sampleValue(fams, "x_total", { a: 'a"b', b: "\\n" }), 1);
  assert.equal(sampleValue(fams, "h_bucket", { le: "1" }), 0);
  assert.equal(sampleValue(fams, "h_bucket", { le: "2" }), 1);
  assert.equal(sampleValue(fams, "h_bucket", { le: "+Inf" }), 1);
  assert.equal(sampleValue(fams, "h_sum"), 1.5);
});

Deno.test("Registry caches children and leaves out labelled families without series", () => {
  const r = new Registry();
  const g = r.gauge({ name: "g", help: "G.", labelNames: ["a", "b"] });
  assert.equal(r.expose(), "");
  assert.equal(g.labels("x", "y"), g.labels("x", "y"));
  // Length-prefixed keys: these tuples must not share a child.
  assert.notEqual(g.labels("1:a", ""), g.labels("1", ":a"));
  g.labels("x", "y").set(4);
  g.labels("x", "y").dec();
  assert.equal(g.labels("x", "y").value, 3);
  assert.equal(g.remove("x", "y"), true);
  assert.equal(g.labels("x", "y").value, 0);
  g.reset();
  assert.equal(r.expose(), "");
});

Deno.test("Registry runs collect hooks before exposing, until removed", () => {
  const r = new Registry();
  const g = r.gauge({ name: "limit", help: "L.", labelNames: ["pl"] });
  let n = 0;
  const off = r.onCollect(() => {
    g.reset();
    g.labels(`pl${++n}`).set(n);
  });
  assert.equal(r.expose(), '# HELP limit L.\n# TYPE limit gauge\nlimit{pl="pl1"} 1\n');
  assert.equal(r.expose(), '# HELP limit L.\n# TYPE limit gauge\nlimit{pl="pl2"} 2\n');
  off();
  assert.equal(r.expose(), '# HELP limit L.\n# TYPE limit gauge\nlimit{pl="pl2"} 2\n');
});

Deno.test("Registry validates names, labels and buckets eagerly", () => {
  const r = new Registry();
  assert.throws(
    () => r.counter({ name: "9bad", help: "" }),
    { name: "TypeError", message: 'Cannot create metric: invalid metric name "9bad"' },
  );
  assert.throws(
    () => r.gauge({ name: "ok", help: "", labelNames: ["a-b"] }),
    { name: "TypeError", message: 'Cannot create metric ok: invalid label name "a-b"' },
  );
  assert.throws(
    () => r.gauge({ name: "ok", help: "", labelNames: ["__x"] }),
    { name: "TypeError", message: 'Cannot create metric ok: invalid label name "__x"' },
  );
  assert.throws(
    () => r.histogram({ name: "ok", help: "", labelNames: ["le"], buckets: [1] }),
    { name: "TypeError", message: 'Cannot create metric ok: label name "le" is reserved' },
  );
  assert.throws(
    () => r.histogram({ name: "ok", help: "", buckets: [1, 1] }),
    {
      name: "RangeError",
      message: "Cannot create metric ok: buckets must be strictly increasing numbers, got [1,1]",
    },
  );
  r.counter({ name: "ok", help: "", labelNames: ["a"] });
  assert.throws(
    () => r.counter({ name: "ok", help: "" }),
    { name: "TypeError", message: "Cannot register metric ok: the name is already registered" },
  );
  const c = r.get("ok")!;
  assert.throws(
    () => c.labels("a", "b"),
    {
      name: "TypeError",
      message: 'Cannot get series of ok: expected 1 string label values (a), got ["a","b"]',
    },
  );
  assert.throws(() => (c as ReturnType<Registry["counter"]>).labels("x").inc(-1), {
    name: "RangeError",
    message: "Cannot decrease a counter: got -1",
  });
});

Deno.test("parseExposition refuses malformed input", () => {
  assert.throws(() => parseExposition("x 1\n"), {
    name: "SyntaxError",
    message: 'line 1: sample outside its family: "x 1"',
  });
  assert.throws(() => parseExposition('# HELP x X\n# TYPE x gauge\nx{a="\\q"} 1\n'), {
    name: "SyntaxError",
    message: 'line 3: bad escape \\q: "x{a=\\"\\\\q\\"} 1"',
  });
  assert.throws(() => parseExposition("# HELP x X\n# TYPE x gauge\nx one\n"), SyntaxError);
});
