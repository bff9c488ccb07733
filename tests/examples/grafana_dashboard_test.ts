/**
 * `examples/grafana/apf.json` imports through Grafana's Import page and
 * queries only what is exposed: every metric of every query exists in the
 * exposition of an embedded coordinator that admitted, queued and rejected
 * requests (for each reason) and of a budget holder, with the labels the
 * query matches, groups by and names in its legend.
 */

import assert from "node:assert/strict";
import { BudgetHolder } from "../../src/budgets/holder.ts";
import { MemoryBudgetStore } from "../../src/budgets/memory_store.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Admission, SeatRequest } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { FlowcontrolMetrics } from "../../src/observe/flowcontrol_metrics.ts";
import { configOf, exempt, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";
import { type Node, parsePromQL, resultLabels, selectors, walk } from "./_promql.ts";
import { SeriesIndex } from "./_series_index.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const dashboard: Json = JSON.parse(
  await Deno.readTextFile(new URL("../../examples/grafana/apf.json", import.meta.url)),
);

/** Every panel, those of collapsed rows included. */
const allPanels: Json[] = dashboard.panels.flatMap((p: Json) => [p, ...(p.panels ?? [])]);
const queryPanels = allPanels.filter((p) => p.type !== "row");
const variables: Json[] = dashboard.templating.list;

/** Labels Prometheus adds to every scraped series. */
const SCRAPE_LABELS = ["instance", "job"];
/** Grafana's own variables a query may use. */
const GRAFANA_VARIABLES = new Set(["__rate_interval", "__range", "__interval"]);
const COUNTER_FUNCTIONS = new Set(["rate", "irate", "increase"]);

const CONFIG = configOf(4, [
  exempt(),
  limited("catch-all"),
  limited("work", { queuing: { queues: 1, handSize: 1, queueLengthLimit: 3 } }),
]);

let flow = 0;
const request = (level: string, flowSchema: string, extra: Partial<SeatRequest> = {}) => ({
  priorityLevel: level,
  flowSchema,
  flowHash: { hi: 0, lo: flow++ },
  waitLimitMs: 10_000,
  ...extra,
});

/** An embedded coordinator's exposition once it admitted, queued and rejected for every reason. */
async function coordinatorExposition(): Promise<string> {
  const clock = new FakeEventClock(1_700_000_000_000);
  const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
    snapshot: () => coordinator.snapshot(),
  });
  const coordinator = new EmbeddedCoordinator(CONFIG, { clock, metrics });
  const outcomes: (Admission | "pending")[] = [];
  const acquire = (r: SeatRequest, signal?: AbortSignal) => {
    const i = outcomes.push("pending") - 1;
    coordinator.acquire(r, signal && { signal }).then((a) => outcomes[i] = a);
  };
  const cancel = new AbortController();
  acquire(request("exempt", "exempt"));
  for (let i = 0; i < 3; i++) acquire(request("catch-all", "catch-all")); // a limit of 2, no queues
  acquire(request("work", "a")); // the work level's 2 seats
  acquire(request("work", "a"));
  acquire(request("work", "b", { waitLimitMs: 500 })); // queued, times out
  acquire(request("work", "b"), cancel.signal); // queued, cancelled
  acquire(request("work", "b")); // queued, still waiting
  acquire(request("work", "b")); // the queue is full
  await settle(20);
  clock.advance(100);
  cancel.abort();
  clock.advance(500);
  await settle(20);
  const catchAll = outcomes[1] as Admission;
  assert.ok(catchAll.admitted);
  catchAll.seat.release(); // an execution time
  await settle(20);
  const decided = outcomes.map((o) => o === "pending" ? o : o.admitted ? "ok" : o.reason);
  assert.deepEqual(decided, [
    "ok",
    "ok",
    "ok",
    "concurrency-limit",
    "ok",
    "ok",
    "time-out",
    "cancelled",
    "pending",
    "queue-full",
  ]);
  const text = metrics.expose();
  coordinator.close();
  await settle(20);
  for (const o of outcomes) if (o !== "pending" && o.admitted) o.seat.release();
  assert.equal(clock.pendingTimers, 0, "no timer left behind");
  return text;
}

/** A budget holder's exposition (`apf_budget_*` beside its own flow-control metrics). */
async function holderExposition(): Promise<string> {
  const clock = new FakeEventClock(1_700_000_000_000);
  const holder = new BudgetHolder(CONFIG, {
    store: new MemoryBudgetStore(),
    clock,
    id: "h0",
    periodMs: 1_000,
    leaseMs: 3_000,
    drainMs: 1_000,
    driftMarginMs: 100,
    random: () => 0,
  });
  let admission: Admission | null = null;
  holder.acquire(request("work", "a")).then((a) => admission = a);
  for (let t = 0; t < 1_500; t += 10) {
    clock.advance(10);
    await settle(20);
  }
  assert.ok(admission !== null && (admission as Admission).admitted, "admitted on a budget");
  const text = holder.metrics.expose();
  (admission as Admission & { admitted: true }).seat.release();
  holder.close();
  assert.equal(clock.pendingTimers, 0, "no timer left behind");
  return text;
}

/** A query of the dashboard, with the legend it names labels in. */
interface Query {
  where: string;
  expr: string;
  legend: string | null;
  /** A variable's selector: read for its labels, not its values (a counter needs no rate()). */
  labelsOnly?: boolean;
}

/** Every query of the dashboard: the panel's, and the query variables'. */
function queries(): Query[] {
  const out = queryPanels.flatMap((p) =>
    p.targets.map((t: Json) => ({
      where: `panel ${p.id} "${p.title}" ${t.refId}`,
      expr: t.expr as string,
      legend: (t.legendFormat ?? null) as string | null,
    }))
  );
  for (const v of variables.filter((v) => v.type === "query")) {
    const m = /^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$/.exec(v.query.query);
    assert.ok(m !== null, `variable ${v.name}: label_values(selector, label)`);
    assert.equal(v.definition, v.query.query, `variable ${v.name}: its definition is its query`);
    // The label it lists must be on the series it reads: as a legend of the selector.
    out.push({ where: `variable ${v.name}`, expr: m[1]!, legend: `{{${m[2]}}}`, labelsOnly: true });
  }
  return out;
}

/** The `$variables` of `text`, without Grafana's own. */
const variablesIn = (text: string): string[] =>
  [...text.matchAll(/\$\{?([a-zA-Z_][a-zA-Z0-9_]*)/g)].map((m) => m[1]!).filter((v) =>
    !GRAFANA_VARIABLES.has(v)
  );

/** What's wrong with `expr` against `index`: one sentence per problem. */
function problems({ expr, legend, labelsOnly }: Query, index: SeriesIndex): string[] {
  const out: string[] = [];
  let tree: Node;
  try {
    tree = parsePromQL(expr);
  } catch (e) {
    return [(e as Error).message];
  }
  const labelsOf = (name: string) => new Set([...index.labels(name), ...SCRAPE_LABELS]);
  for (const { node, ancestors } of walk(tree)) {
    if (node.kind === "selector") {
      const labels = index.samples.get(node.name);
      if (labels === undefined) {
        out.push(`${node.name} is not exposed`);
        continue;
      }
      for (const m of node.matchers) {
        const values = labels.get(m.label);
        if (values === undefined) {
          out.push(`${node.name} has no label ${m.label}`);
        } else if (!m.value.includes("$") && (m.op === "=" || m.op === "=~")) {
          const re = new RegExp(`^(?:${m.op === "=" ? RegExp.escape(m.value) : m.value})$`);
          if (![...values].some((v) => re.test(v))) {
            out.push(`${node.name}{${m.label}${m.op}"${m.value}"} matches no series`);
          }
        }
      }
      const type = index.typeOf(node.name);
      const parent = ancestors[0];
      const inRate = parent?.kind === "call" && COUNTER_FUNCTIONS.has(parent.fn);
      if (inRate && type !== "counter" && type !== "histogram") {
        out.push(`${parent.fn}() of ${node.name}, a ${type}`);
      }
      if (!inRate && type === "counter" && !labelsOnly) {
        out.push(`${node.name}, a counter, read without rate()`);
      }
      if (inRate !== (node.range !== null)) out.push(`${node.name}: a range only inside rate()`);
    }
    if (node.kind === "aggregation" && node.grouping !== null) {
      for (const s of selectors(node)) {
        for (const l of node.grouping.labels) {
          if (!index.labels(s.name).has(l)) {
            out.push(`${node.op} ${node.grouping.mode} ${l}: not on ${s.name}`);
          }
        }
      }
    }
    if (node.kind === "call" && node.fn === "histogram_quantile") {
      const [q, v] = node.args;
      if (q?.kind !== "number" || q.value < 0 || q.value > 1) {
        out.push("a quantile in [0, 1] first");
      }
      for (const s of selectors(v!)) {
        if (!s.name.endsWith("_bucket")) out.push(`histogram_quantile over ${s.name}`);
      }
      if (
        v?.kind === "aggregation" &&
        !(v.grouping?.mode === "by" && v.grouping.labels.includes("le"))
      ) {
        out.push("histogram_quantile needs the sum by le");
      }
    }
  }
  let result: Set<string> | null = null;
  try {
    result = resultLabels(tree, labelsOf);
  } catch (e) {
    out.push((e as Error).message);
  }
  for (const m of (legend ?? "").matchAll(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g)) {
    if (result !== null && !result.has(m[1]!)) out.push(`legend {{${m[1]}}}: not on the result`);
  }
  return out;
}

Deno.test("examples/grafana/apf.json imports through Grafana's Import page", () => {
  assert.equal(dashboard.title, "API Priority and Fairness");
  assert.equal(typeof dashboard.uid, "string");
  assert.ok(/^[a-zA-Z0-9_-]{1,40}$/.test(dashboard.uid), "a uid Grafana accepts");
  assert.equal(dashboard.id, null, "no instance-local id");
  assert.equal(dashboard.schemaVersion, 39);
  assert.equal(dashboard.refresh, "10s");
  assert.deepEqual(dashboard.time, { from: "now-30m", to: "now" });
  assert.deepEqual(
    dashboard.__inputs.map((i: Json) => [i.name, i.type, i.pluginId]),
    [["DS_PROMETHEUS", "datasource", "prometheus"]],
  );
  // The Import page replaces ${DS_PROMETHEUS} with the data source chosen: the variable's default.
  const datasource = variables.find((v) => v.name === "datasource");
  assert.deepEqual([datasource?.type, datasource?.query], ["datasource", "prometheus"]);
  assert.equal(datasource.current.value, "${DS_PROMETHEUS}");
  const level = variables.find((v) => v.name === "priority_level");
  assert.equal(
    level?.query.query,
    "label_values(apiserver_flowcontrol_current_limit_seats, priority_level)",
  );
  assert.deepEqual([level.multi, level.includeAll], [true, true]);
  const names = new Set(variables.map((v) => v.name));
  assert.equal(names.size, variables.length, "variable names are unique");
  for (const v of variables.filter((v) => v.type === "query")) {
    assert.equal(v.datasource.uid, "${datasource}", `variable ${v.name} reads the data source`);
    for (const used of variablesIn(v.query.query)) assert.ok(names.has(used), `$${used}`);
  }
  const required = new Set(dashboard.__requires.map((r: Json) => r.id));
  for (const p of queryPanels) assert.ok(required.has(p.type), `__requires lists ${p.type}`);
});

Deno.test("examples/grafana/apf.json: every panel has its id, its place, the data source and queries", () => {
  assert.deepEqual(
    dashboard.panels.filter((p: Json) => p.type === "row").map((p: Json) => p.title.split(" (")[0]),
    ["Overview", "Seats and borrowing", "Queues and waiting", "Rejections", "Seat budgets"],
  );
  const ids = allPanels.map((p) => p.id);
  assert.ok(ids.every((id) => Number.isInteger(id) && id > 0), "integer ids");
  assert.equal(new Set(ids).size, ids.length, "unique ids");
  const names = new Set(variables.map((v) => v.name));
  const overlaps = (a: Json, b: Json) =>
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  // Panels of a collapsed row are laid out as if it were open: check each layer on its own.
  const layers = [dashboard.panels, ...dashboard.panels.map((p: Json) => p.panels ?? [])];
  for (const layer of layers) {
    for (const [i, p] of layer.entries()) {
      const g = p.gridPos;
      assert.ok(
        [g.x, g.y, g.w, g.h].every(Number.isInteger) && g.x >= 0 && g.w > 0 && g.h > 0 &&
          g.x + g.w <= 24,
        `panel ${p.id}: gridPos ${JSON.stringify(g)}`,
      );
      for (const q of layer.slice(i + 1)) {
        assert.ok(!overlaps(g, q.gridPos), `panels ${p.id} and ${q.id} overlap`);
      }
    }
  }
  for (const p of queryPanels) {
    const where = `panel ${p.id} "${p.title}"`;
    assert.ok(["timeseries", "stat", "bargauge", "table"].includes(p.type), `${where}: ${p.type}`);
    assert.equal(typeof p.title, "string");
    assert.ok(typeof p.description === "string" && p.description.length > 0, `${where}: described`);
    assert.ok(["${datasource}", "${DS_PROMETHEUS}"].includes(p.datasource?.uid), `${where}`);
    assert.equal(p.datasource.type, "prometheus", where);
    assert.equal(typeof p.fieldConfig?.defaults?.unit, "string", `${where}: a unit`);
    assert.ok(Array.isArray(p.targets) && p.targets.length > 0, `${where}: queries`);
    const refIds = p.targets.map((t: Json) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `${where}: unique refIds`);
    for (const t of p.targets) {
      assert.ok(typeof t.expr === "string" && t.expr.trim() !== "", `${where} ${t.refId}: expr`);
      assert.deepEqual(t.datasource ?? p.datasource, p.datasource, `${where} ${t.refId}`);
      for (const used of variablesIn(t.expr)) assert.ok(names.has(used), `${where}: $${used}`);
    }
    if (p.repeat !== undefined) {
      const v = variables.find((v) => v.name === p.repeat);
      assert.ok(v?.multi, `${where} repeats over a multi-value variable`);
    }
    for (const used of variablesIn(p.title)) assert.ok(p.repeat === used, `${where}: $${used}`);
  }
});

Deno.test("examples/grafana/apf.json reads only exposed metrics, with their labels", async () => {
  const index = new SeriesIndex().add(await coordinatorExposition()).add(await holderExposition());
  // The scenario reached every series the dashboard needs.
  for (const reason of ["queue-full", "concurrency-limit", "time-out", "cancelled"]) {
    assert.ok(
      index.samples.get("apiserver_flowcontrol_rejected_requests_total")?.get("reason")?.has(
        reason,
      ),
      reason,
    );
  }
  const wrong = queries().flatMap((q) => problems(q, index).map((p) => `${q.where}: ${p}`));
  assert.deepEqual(wrong, []);
});

Deno.test("examples/grafana/apf.json: the checks catch a wrong metric, label, grouping or rate", () => {
  const index = new SeriesIndex().add([
    "# TYPE apiserver_flowcontrol_dispatched_requests_total counter",
    'apiserver_flowcontrol_dispatched_requests_total{flow_schema="a",priority_level="pl"} 1',
    "# TYPE apiserver_flowcontrol_current_limit_seats gauge",
    'apiserver_flowcontrol_current_limit_seats{priority_level="pl"} 2',
  ].join("\n"));
  const d = "apiserver_flowcontrol_dispatched_requests_total";
  const l = "apiserver_flowcontrol_current_limit_seats";
  const cases: [string, string | null, string][] = [
    [`sum(rate(${d}{priority_level="pl"}[1m]))`, null, ""],
    [`apiserver_flowcontrol_no_such_seats`, null, "is not exposed"],
    [`${l}{flow_schema="a"}`, null, "has no label flow_schema"],
    [`${l}{priority_level="other"}`, null, "matches no series"],
    [`sum by (flow_schema) (${l})`, null, "sum by flow_schema: not on"],
    [`rate(${l}[1m])`, null, "rate() of"],
    [`sum(${d})`, null, "read without rate()"],
    [`sum by (priority_level) (rate(${d}[1m])) / sum(${l})`, null, "different labels"],
    [`sum by (priority_level) (${l})`, "{{flow_schema}}", "not on the result"],
  ];
  for (const [expr, legend, expected] of cases) {
    const found = problems({ where: "", expr, legend }, index).join("; ");
    if (expected === "") assert.equal(found, "", expr);
    else assert.match(found, new RegExp(RegExp.escape(expected)), expr);
  }
});

Deno.test("examples/grafana/apf.json shows every family its rows are about", () => {
  const used = new Set(
    queries().flatMap(({ expr }) => selectors(parsePromQL(expr)).map((s) => s.name)),
  );
  const p = "apiserver_flowcontrol_";
  for (
    const name of [
      `${p}current_executing_seats`,
      `${p}current_limit_seats`,
      `${p}nominal_limit_seats`,
      `${p}lower_limit_seats`,
      `${p}upper_limit_seats`,
      `${p}current_inqueue_requests`,
      `${p}current_executing_requests`,
      `${p}dispatched_requests_total`,
      `${p}rejected_requests_total`,
      `${p}request_wait_duration_seconds_bucket`,
      `${p}request_execution_seconds_bucket`,
      `${p}demand_seats_smoothed`,
      `${p}demand_seats_high_watermark`,
      `${p}target_seats`,
      `${p}seat_fair_frac`,
      "apf_budget_seats",
      "apf_budget_lease_remaining_seconds",
      "apf_budget_policy_in_force",
      "apf_budget_store_operations_total",
    ]
  ) {
    assert.ok(used.has(name), `a panel shows ${name}`);
  }
});
