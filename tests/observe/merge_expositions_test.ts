import assert from "node:assert/strict";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";
import { mergeExpositions } from "../../src/observe/merge_expositions.ts";
import { parseExposition } from "../../src/observe/_parse.ts";

Deno.test("mergeExpositions: one family each, every series once, histograms kept whole", () => {
  const a = `# HELP g A gauge
# TYPE g gauge
g{level="a"} 1
g 7
# HELP h A histogram
# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 2
h_sum 3
h_count 2
`;
  const b = `# HELP g A gauge
# TYPE g gauge
g{level="b"} 2
g 8
`;
  const merged = mergeExpositions([a, b]);
  assert.equal(
    merged,
    `# HELP g A gauge
# TYPE g gauge
g{level="a"} 1
g 7
g{level="b"} 2
# HELP h A histogram
# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 2
h_sum 3
h_count 2
`,
  );
});

Deno.test("mergeExpositions of two level objects' flow-control metrics parses as one exposition", async () => {
  const config = configOf(10, [limited("a", { shares: 10 }), limited("b", { shares: 10 })]);
  const clock = new FakeEventClock();
  const texts: string[] = [];
  for (const level of ["a", "b"]) {
    const metrics = new FlowcontrolMetrics();
    const part = new EmbeddedCoordinator(config, {
      clock,
      metrics,
      levels: [level],
      borrowing: "external",
    });
    const admission = await part.acquire({ priorityLevel: level, flowSchema: level });
    if (admission.admitted) admission.seat.release();
    texts.push(metrics.expose());
    part.close();
  }
  const families = parseExposition(mergeExpositions(texts)); // strict: throws on a repeated family
  const dispatched = families.get("apiserver_flowcontrol_dispatched_requests_total")!;
  assert.deepEqual(
    dispatched.samples.map((s) => s.labels.priority_level).sort(),
    ["a", "b"],
  );
});
