/**
 * What the live dashboard costs the server: one sample of `LiveView` (the
 * data behind `GET /debug/api_priority_and_fairness/live`) on a gateway-like
 * source, and ten viewers polling it once a second.
 *
 * The source is an `EmbeddedCoordinator` with the default configuration
 * (8 levels, 600 seats) on the fake clock, with its metrics, under overload:
 * every limited level's seats in use, and N requests waiting (0, 1,000 and
 * 10,000), spread over the queuing levels by their number of queues, each
 * request its own flow. Borrowing is `external` (no adjustment runs), so the
 * limits and N stay put while the clock advances.
 *
 * Table 1, per N: the median over `samples` samples (one each after
 * advancing the fake clock 1 s) of the sample's parts (the snapshot with
 * every request, the metrics text, the rest: parsing it and building the
 * frame), of `JSON.stringify` of the frame, and the JSON's size; and the
 * size of the first poll's answer (`?history=1`) with five minutes of
 * history.
 *
 * Table 2: `viewers` pages polling `live` through the admin router, each
 * every 1,003 ms (a page polls 1 s after its last answer), their phases
 * spread over the second, for 40 s of the fake clock, with N = 10,000:
 * samples per second (the router samples at most once a second, whoever
 * asks), requests per second, and the server's time per second of the
 * clock (real time spent in the router, answers read).
 *
 * Run: `deno run --import-map=dev/import_map.json --lock=dev/deno.lock
 * --allow-read --allow-env=LOG_TOKENS,LOG_STREAM --allow-sys=loadavg
 * bench/dashboard_bench.ts [samples=40]`
 */

import { resolveConfiguration } from "../src/config/mod.ts";
import { EmbeddedCoordinator } from "../src/coordinator/embedded.ts";
import type { Admission, SeatRequest } from "../src/coordinator/types.ts";
import { FakeEventClock } from "../src/fairqueuing/clock.ts";
import { adminRouter, DASHBOARD_PATH } from "../src/observe/admin_router.ts";
import type { AdminSource } from "../src/observe/admin_source.ts";
import { FlowcontrolMetrics } from "../src/observe/flowcontrol_metrics.ts";
import { type LiveSource, LiveView } from "../src/observe/live_view.ts";

const SAMPLES = Number(Deno.args[0] ?? 40);
// Waiting requests time out after 60 s of the fake clock: the samples must fit before.
if (!(Number.isInteger(SAMPLES) && SAMPLES >= 5 && SAMPLES <= 50)) {
  throw new RangeError(`Cannot run: samples must be an integer from 5 to 50, got ${Deno.args[0]}`);
}
const WAITING = [0, 1_000, 10_000];
const VIEWERS = [1, 10];

/** A splitmix32-style mix, for flow hashes spread over every queue. */
const mix = (x: number) => {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
};

interface Overloaded extends Disposable {
  clock: FakeEventClock;
  coordinator: EmbeddedCoordinator;
  metrics: FlowcontrolMetrics;
  /** Requests in the queues. */
  waiting: number;
  /** Seats in use. */
  seats: number;
}

/** Let the admissions settle (a microtask turn each). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The default configuration, every limited level full, `n` requests waiting. */
async function overloaded(n: number): Promise<Overloaded> {
  const clock = new FakeEventClock(Date.UTC(2026, 10, 26));
  const metrics: FlowcontrolMetrics = new FlowcontrolMetrics({
    snapshot: () => coordinator.snapshot(),
  });
  const coordinator = new EmbeddedCoordinator(resolveConfiguration(undefined), {
    clock,
    metrics,
    borrowing: "external",
  });
  const admissions: Promise<Admission>[] = [];
  let flow = 0;
  const request = (level: string): SeatRequest => {
    flow++;
    return {
      priorityLevel: level,
      flowSchema: `${level}-schema`,
      distinguisher: `user-${flow}`,
      flowHash: { hi: mix(2 * flow + 1), lo: mix(2 * flow + 2) },
      waitLimitMs: 60_000,
    };
  };
  const limited = coordinator.snapshot().levels.filter((l) => l.type === "Limited");
  for (const level of limited) {
    for (let i = 0; i < level.currentLimit; i++) {
      admissions.push(coordinator.acquire(request(level.name)));
    }
  }
  // By number of queues: 19 or so a queue at 10,000, under every level's queue length limit (50).
  const queuing = limited.filter((l) => l.queueSet.queues.length > 0);
  const queues = queuing.reduce((sum, l) => sum + l.queueSet.queues.length, 0);
  let sent = 0;
  for (const [i, level] of queuing.entries()) {
    const share = i === queuing.length - 1
      ? n - sent
      : Math.round((n * level.queueSet.queues.length) / queues);
    for (let k = 0; k < share; k++) admissions.push(coordinator.acquire(request(level.name)));
    sent += share;
  }
  await settle();
  const snapshot = coordinator.snapshot();
  const waiting = snapshot.levels.reduce((sum, l) => sum + l.queueSet.waitingRequests, 0);
  const seats = snapshot.levels.reduce((sum, l) => sum + l.queueSet.seatsInUse, 0);
  if (waiting !== n) throw new Error(`Cannot measure: ${waiting} requests wait, not ${n}`);
  return {
    clock,
    coordinator,
    metrics,
    waiting,
    seats,
    [Symbol.dispose]() {
      coordinator.close();
      void Promise.all(admissions);
    },
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (x: number) => x.toFixed(2);
const kb = (bytes: number) => (bytes / 1024).toFixed(1);

interface SampleRow {
  n: number;
  seats: number;
  snapshotMs: number;
  metricsMs: number;
  restMs: number;
  sampleMs: number;
  stringifyMs: number;
  bytes: number;
  historyBytes: number;
}

async function sampleCost(n: number): Promise<SampleRow> {
  using g = await overloaded(n);
  let snapshotMs = 0, metricsMs = 0;
  const source: LiveSource = {
    snapshot: () => {
      const t = performance.now();
      const s = g.coordinator.snapshot({ includeRequests: true });
      snapshotMs = performance.now() - t;
      return s;
    },
    metrics: () => {
      const t = performance.now();
      const text = g.metrics.expose();
      metricsMs = performance.now() - t;
      return text;
    },
  };
  const view = new LiveView({ clock: g.clock });
  const parts = { snapshot: [] as number[], metrics: [] as number[], rest: [] as number[] };
  const total: number[] = [], stringify: number[] = [], bytes: number[] = [];
  for (let i = -5; i < SAMPLES; i++) {
    g.clock.advance(1_000);
    const t0 = performance.now();
    const frame = (await view.frame(source))!;
    const t1 = performance.now();
    const json = JSON.stringify(frame);
    const t2 = performance.now();
    if (i < 0) continue; // warming up
    total.push(t1 - t0);
    parts.snapshot.push(snapshotMs);
    parts.metrics.push(metricsMs);
    parts.rest.push(t1 - t0 - snapshotMs - metricsMs);
    stringify.push(t2 - t1);
    bytes.push(new TextEncoder().encode(json).length);
  }
  if (view.samplesTaken !== SAMPLES + 5) throw new Error("Cannot measure: a frame was not fresh");
  return {
    n,
    seats: g.seats,
    snapshotMs: median(parts.snapshot),
    metricsMs: median(parts.metrics),
    restMs: median(parts.rest),
    sampleMs: median(total),
    stringifyMs: median(stringify),
    bytes: median(bytes),
    historyBytes: await historyBytes(),
  };
}

/** The first poll's answer (`?history=1`) once five minutes of samples are kept (idle source). */
async function historyBytes(): Promise<number> {
  const clock = new FakeEventClock(Date.UTC(2026, 10, 26));
  const coordinator = new EmbeddedCoordinator(resolveConfiguration(undefined), { clock });
  try {
    const view = new LiveView({ clock });
    const source: LiveSource = {
      snapshot: () => coordinator.snapshot({ includeRequests: true }),
      metrics: () => null,
    };
    for (let i = 0; i < 300; i++) {
      clock.advance(1_000);
      await view.frame(source);
    }
    const frame = await view.frame(source, { history: true });
    return new TextEncoder().encode(JSON.stringify(frame)).length;
  } finally {
    coordinator.close();
  }
}

interface ViewerRow {
  viewers: number;
  seconds: number;
  samplesPerSecond: number;
  requestsPerSecond: number;
  serverMsPerSecond: number;
  maxRequestMs: number;
}

/** `viewers` pages polling `live` through the router for 40 s of the fake clock, N = 10,000. */
async function viewerCost(viewers: number): Promise<ViewerRow> {
  using g = await overloaded(10_000);
  let samples = 0;
  const source: AdminSource = {
    snapshot: (options) => {
      if (options.includeRequests) samples++;
      return g.coordinator.snapshot(options);
    },
    metrics: g.metrics,
  };
  const router = adminRouter(source, { authorize: () => true, clock: g.clock });
  const url = `http://127.0.0.1:9090${DASHBOARD_PATH}live`;
  const PERIOD_MS = 1_003;
  const SECONDS = 40;
  // Phases spread over the second (a prime step, so they do not line up with the period).
  const next = Array.from({ length: viewers }, (_, i) => (i * 997) / viewers);
  const start = g.clock.now();
  let requests = 0, spentMs = 0, maxRequestMs = 0;
  for (;;) {
    const at = Math.min(...next);
    if (at >= SECONDS * 1_000) break;
    g.clock.advance(start + at - g.clock.now());
    for (let v = 0; v < viewers; v++) {
      if (next[v]! > at) continue;
      const t = performance.now();
      const res = (await router(new Request(url)))!;
      await res.text();
      const took = performance.now() - t;
      if (res.status !== 200) throw new Error(`Cannot measure: live answered ${res.status}`);
      requests++;
      spentMs += took;
      maxRequestMs = Math.max(maxRequestMs, took);
      next[v] = at + PERIOD_MS;
    }
  }
  return {
    viewers,
    seconds: SECONDS,
    samplesPerSecond: samples / SECONDS,
    requestsPerSecond: requests / SECONDS,
    serverMsPerSecond: spentMs / SECONDS,
    maxRequestMs,
  };
}

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${
      cells.map((c, i) => i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join(" | ")
    } |`;
  return [line(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)]
    .join("\n");
}

const load = () => {
  try {
    return Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
  } catch {
    return "?";
  }
};

console.log(`dashboard_bench: ${SAMPLES} samples a row; load average ${load()}\n`);
const sampleRows: SampleRow[] = [];
for (const n of WAITING) sampleRows.push(await sampleCost(n));
console.log(table(
  [
    "waiting",
    "seats in use",
    "snapshot ms",
    "metrics ms",
    "parse + build ms",
    "sample ms",
    "stringify ms",
    "JSON KB",
    "with 5 min history KB",
  ],
  sampleRows.map((r) => [
    r.n.toLocaleString("en-US"),
    String(r.seats),
    ms(r.snapshotMs),
    ms(r.metricsMs),
    ms(r.restMs),
    ms(r.sampleMs),
    ms(r.stringifyMs),
    kb(r.bytes),
    kb(r.historyBytes),
  ]),
));
console.log();
const viewerRows: ViewerRow[] = [];
for (const v of VIEWERS) viewerRows.push(await viewerCost(v));
console.log(table(
  ["viewers", "samples/s", "requests/s", "server ms per s", "slowest request ms"],
  viewerRows.map((r) => [
    String(r.viewers),
    r.samplesPerSecond.toFixed(2),
    r.requestsPerSecond.toFixed(2),
    ms(r.serverMsPerSecond),
    ms(r.maxRequestMs),
  ]),
));
console.log(`\nload average ${load()}`);
