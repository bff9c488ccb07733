/**
 * `apf demo` (what `deno task start` runs): watch fairness happen. A small
 * built-in upstream with a fixed number of worker slots is flooded by one
 * "elephant" flow while a few "mice" send one request at a time: first
 * straight to the upstream, then through the APF gateway. A live table shows
 * each flow and priority level; a summary compares the mice's latency.
 * With `--adaptive`, a third phase runs through a gateway told nothing of the
 * upstream, which learns its server concurrency limit from its latency
 * (`serverConcurrencyLimit: "auto"`).
 *
 * @module
 */

import { parseDurationMs } from "../_shared/duration.ts";
import {
  type EffectiveConfiguration,
  loadConfiguration,
  resolveConfiguration,
} from "../config/mod.ts";
import { type Clock, systemClock, type Timer } from "../fairqueuing/clock.ts";
import {
  DEFAULT_MIN_RTT_REQUESTS,
  DEFAULT_SAMPLE_WINDOW_MS,
} from "../adaptive/gradient_options.ts";
import type { GradientSnapshot } from "../adaptive/types.ts";
import { serveGateway } from "../deno/gateway.ts";
import type { Gateway } from "../deno/gateway_types.ts";
import { addressOption, httpUrlOf, withFlagNames } from "./_address.ts";
import { DASHBOARD_PATH } from "../observe/admin_router.ts";
import { type FlowStats, type LoadShape, percentile, startLoad } from "./_demo_load.ts";
import { type DemoUpstream, startDemoUpstream } from "./_demo_upstream.ts";
import {
  type AdaptiveRow,
  type DemoFrame,
  type LevelRow,
  type PhaseResult,
  phaseResult,
  renderAdaptiveLine,
  renderFrame,
  renderProgress,
  renderSummary,
  type SettledPhase,
  timerLag,
} from "./_demo_view.ts";
import { helpText, parseArgs } from "./args.ts";
import type { CliIO, ExitCode } from "./io.ts";

/** Usage line of the command. */
export const DEMO_USAGE = "apf demo [--duration 20s] [--adaptive] [--dashboard-listen 127.0.0.1:0]";

const SLOTS = 8;
const SHAPE: LoadShape = { elephantLoops: 64, elephantPauseMs: 100, mice: 4, mouseThinkMs: 100 };

const HELP = helpText(
  DEMO_USAGE,
  `
Shows API Priority and Fairness at work, on 127.0.0.1 only. A built-in
upstream handles ${SLOTS} requests at a time (20-40 ms each; more wait in line
inside it). One "elephant" user keeps ${SHAPE.elephantLoops} requests in flight; ${SHAPE.mice} "mice"
send one request at a time with ${SHAPE.mouseThinkMs} ms think time. The run has two phases
of equal length: without APF, then through the APF gateway, where the
elephant and the mice share one priority level of ${SLOTS} seats but are
separate flows. A live table shows each flow and level (redrawn in place on a
terminal, a progress line every few seconds otherwise); a summary compares the
mice's latency in the two phases. The first line is the address of the live
dashboard of the gateway (its admin listener, on 127.0.0.1), served for the
whole run: open it in a browser to watch the queues.

With --adaptive a third phase runs through a gateway told nothing of the
upstream: it learns its server concurrency limit from the upstream's
latency (serverConcurrencyLimit "auto"), shown once a sample window; the
summary then compares the last half of each phase: the requests inside the
upstream, its throughput against its ${SLOTS} workers' capacity, the mice's
latency.

  --duration <d>              Go duration of the whole run (default 20s, at least 1s;
                              with --adaptive 30s, at least 3s)
  --adaptive                  add the phase where the gateway learns its limit
  --dashboard-listen <h:p>    where the dashboard listens (default 127.0.0.1:0, a free port)
`,
);

/** The demo's configuration: one level for everyone, one flow per user. */
const DEMO_MANIFEST = `
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: { name: demo }
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 95
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse:
      type: Queue
      queuing: { queues: 64, handSize: 2, queueLengthLimit: 10 }
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: { name: demo }
spec:
  priorityLevelConfiguration: { name: demo }
  matchingPrecedence: 1000
  distinguisherMethod: { type: ByUser }
  rules:
    - subjects: [{ kind: Group, group: { name: system:authenticated } }]
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }]
`;

/** The demo's effective configuration: the mandatory objects and `demo`, at `SLOTS` seats. */
export function demoConfiguration(): EffectiveConfiguration {
  const user = loadConfiguration({ manifests: [{ name: "demo", text: DEMO_MANIFEST }] });
  return resolveConfiguration(user, { mandatoryOnly: true, serverConcurrencyLimit: SLOTS });
}

/**
 * The learned limit's options for an adaptive phase of `phaseMs`: the
 * controller's defaults (1 s sample windows, a minRTT of 50 requests) from
 * 10 s phases on (the default 30 s run); a shorter phase scales both down,
 * a window a tenth of the phase, so that the limit settles within the
 * phase's first half, the half the summary does not measure.
 */
export function demoAdaptiveOptions(
  phaseMs: number,
): { sampleWindowMs: number; minRttRequests: number } {
  const sampleWindowMs = Math.min(DEFAULT_SAMPLE_WINDOW_MS, Math.round(phaseMs / 10));
  const minRttRequests = Math.max(
    10,
    Math.round((DEFAULT_MIN_RTT_REQUESTS * sampleWindowMs) / DEFAULT_SAMPLE_WINDOW_MS),
  );
  return { sampleWindowMs, minRttRequests };
}

/** Runs the demo; exits 0 when it is done, 2 on a usage error. */
export async function demoCommand(
  args: readonly string[],
  io: CliIO,
  clock: Clock = systemClock,
): Promise<ExitCode> {
  const parsed = parseArgs(args, {
    booleans: ["adaptive"],
    strings: ["duration", "dashboard-listen"],
  });
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(HELP);
    return 0;
  }
  const fail = (msg: string): ExitCode => {
    io.stderr(`apf demo: ${msg}\nusage: ${DEMO_USAGE}\n`);
    return 2;
  };
  if (!parsed.ok) return fail(parsed.error);
  if (parsed.positionals.length > 0) return fail(`unexpected argument ${parsed.positionals[0]}`);
  const adaptive = parsed.booleans.has("adaptive");
  const durationText = parsed.strings.get("duration")?.at(-1) ?? (adaptive ? "30s" : "20s");
  const durationMs = parseDurationMs(durationText);
  if (durationMs === undefined || !(durationMs >= (adaptive ? 3000 : 1000))) {
    return fail(
      adaptive
        ? `--duration must be a duration of 3s or more with --adaptive, like 30s, got ${durationText}`
        : `--duration must be a duration of 1s or more, like 20s, got ${durationText}`,
    );
  }
  const listenText = parsed.strings.get("dashboard-listen")?.at(-1) ?? "127.0.0.1:0";
  const dashboardListen = addressOption(listenText, "dashboard-listen", null);
  if (typeof dashboardListen === "string") return fail(dashboardListen);
  const phaseCount = adaptive ? 3 : 2;
  const phaseMs = durationMs / phaseCount;
  const adaptiveOptions = demoAdaptiveOptions(phaseMs);
  const terminal = io.isTerminal?.() === true;
  const upstream = startDemoUpstream({ slots: SLOTS, minMs: 20, maxMs: 40, clock });
  // The gateway and its dashboard serve the whole run; the first phase goes around it.
  let gateway: Gateway;
  try {
    gateway = serveGateway({
      upstream: upstream.url,
      config: demoConfiguration(),
      listen: { hostname: "127.0.0.1", port: 0 },
      adminListen: dashboardListen,
      trustIdentityHeaders: true,
      clock,
    });
  } catch (e) {
    await upstream.close();
    io.stderr(
      `apf demo: cannot serve the dashboard on ${listenText}: ${
        withFlagNames(e instanceof Error ? e.message : String(e))
      }\n`,
    );
    return 1;
  }
  const admin = gateway.adminAddr!;
  io.stdout(
    `Live dashboard: ${httpUrlOf(admin)}${DASHBOARD_PATH} ` +
      `(open it in a browser; served until the demo ends)\n`,
  );
  io.stdout(
    `apf demo: an upstream with ${SLOTS} worker slots; one elephant keeps ${SHAPE.elephantLoops} ` +
      `requests in flight, ${SHAPE.mice} mice send one at a time.\n` +
      `Phase 1: without APF. Phase 2: through the APF gateway (${SLOTS} seats, one priority ` +
      `level, one flow per user).${
        adaptive
          ? ` Phase 3: through a gateway told nothing of the upstream, which learns ` +
            `its server concurrency limit from its latency (serverConcurrencyLimit auto, ` +
            `${adaptiveOptions.sampleWindowMs / 1000}s sample windows, a minRTT of ` +
            `${adaptiveOptions.minRttRequests} requests).`
          : ""
      } ${(phaseMs / 1000).toFixed(1)}s each.\n\n`,
  );
  const lag = timerLag(clock);
  let learning: Gateway | null = null;
  try {
    const without = await runPhase(io, clock, terminal, {
      name: "without APF",
      number: 1,
      count: phaseCount,
      url: `${upstream.url}/work`,
      durationMs: phaseMs,
      upstream,
      levels: () => null,
    });
    const withApf = await runPhase(io, clock, terminal, {
      name: "with APF",
      number: 2,
      count: phaseCount,
      url: `http://127.0.0.1:${gateway.addr.port}/work`,
      durationMs: phaseMs,
      upstream,
      levels: () => levelRows(gateway.middleware.snapshot()?.levels ?? []),
    });
    if (!adaptive) {
      io.stdout(renderSummary(without.result, withApf.result, lag.stop()));
      return 0;
    }
    // The dashboard passes to the learning gateway, at the same address.
    await gateway.shutdown();
    learning = serveLearningGateway(io, upstream.url, admin, adaptiveOptions, clock);
    const auto = learning;
    const withAuto = await runPhase(io, clock, terminal, {
      name: "with APF, auto",
      number: 3,
      count: phaseCount,
      url: `http://127.0.0.1:${auto.addr.port}/work`,
      durationMs: phaseMs,
      upstream,
      levels: () => levelRows(auto.middleware.snapshot()?.levels ?? []),
      adaptive: {
        snapshot: () => auto.middleware.adaptiveSnapshot(),
        everyMs: adaptiveOptions.sampleWindowMs,
      },
    });
    const last = withAuto.trace.at(-1);
    const settled = withAuto.trace.filter((r) => r.elapsedMs >= phaseMs / 2).map((r) => r.limit);
    const low = Math.min(...settled), high = Math.max(...settled);
    const range = settled.length === 0
      ? (last === undefined ? "-" : String(last.limit))
      : low === high
      ? String(low)
      : `${low}-${high}`;
    io.stdout(renderSummary(without.result, withApf.result, lag.stop(), {
      auto: withAuto.result,
      settled: [
        { phase: without.result.phase, serverLimit: "-", ...without.lastHalf },
        { phase: withApf.result.phase, serverLimit: String(SLOTS), ...withApf.lastHalf },
        { phase: withAuto.result.phase, serverLimit: range, ...withAuto.lastHalf },
      ],
      workers: SLOTS,
      capacityPerSecond: upstream.capacityPerSecond,
      // Nothing learned while the minRTT is still being measured (a phase too short or too busy).
      learned: last === undefined || last.minRttMs === null
        ? null
        : { limit: last.limit, minRttMs: last.minRttMs },
    }));
    return 0;
  } finally {
    lag.stop();
    await gateway.shutdown();
    await learning?.shutdown();
    await upstream.close();
  }
}

/**
 * The adaptive phase's gateway: the demo's configuration, its server
 * concurrency limit learned, its dashboard where the first gateway's was
 * (or, should that address not be free again, at a new one, printed).
 */
function serveLearningGateway(
  io: CliIO,
  upstream: string,
  admin: Deno.NetAddr,
  serverConcurrencyLimit: { sampleWindowMs: number; minRttRequests: number },
  clock: Clock,
): Gateway {
  const serve = (port: number) =>
    serveGateway({
      upstream,
      config: demoConfiguration(),
      serverConcurrencyLimit,
      listen: { hostname: "127.0.0.1", port: 0 },
      adminListen: { hostname: admin.hostname, port },
      trustIdentityHeaders: true,
      clock,
    });
  try {
    return serve(admin.port);
  } catch {
    const gateway = serve(0);
    io.stdout(`Live dashboard, moved: ${httpUrlOf(gateway.adminAddr!)}${DASHBOARD_PATH}\n`);
    return gateway;
  }
}

interface Phase {
  name: string;
  number: number;
  /** Phases of the run. */
  count: number;
  url: string;
  durationMs: number;
  upstream: DemoUpstream;
  levels: () => LevelRow[] | null;
  /** In the adaptive phase: the learned limit's state, and how often to show it. */
  adaptive?: { snapshot: () => GradientSnapshot | null; everyMs: number };
}

/** What a phase gave: its result, its last half, the learned limit's rows. */
interface PhaseRun {
  result: PhaseResult;
  lastHalf: Omit<SettledPhase, "phase" | "serverLimit">;
  trace: AdaptiveRow[];
}

/**
 * Redraws every half second on a terminal; prints a line every 2.5 s
 * otherwise. In the adaptive phase, prints a line of the learned limit each
 * sample window and at each change of the controller's phase (on a
 * terminal, above the live table).
 */
async function runPhase(
  io: CliIO,
  clock: Clock,
  terminal: boolean,
  phase: Phase,
): Promise<PhaseRun> {
  const load = startLoad(phase.url, SHAPE, clock);
  const start = clock.now();
  const lastHalf = watchLastHalf(clock, phase.upstream, load.flows, phase.durationMs / 2);
  const adaptive = phase.adaptive;
  const tickMs = adaptive === undefined
    ? (terminal ? 500 : 2500)
    : (terminal ? Math.min(500, adaptive.everyMs) : adaptive.everyMs);
  const trace: AdaptiveRow[] = [];
  let nextRowMs = adaptive?.everyMs ?? Infinity;
  let printedRows = 0;
  let controllerPhase = "warming-up";
  let drawnLines = 0;
  const elapsed = () => Math.min(clock.now() - start, phase.durationMs);
  const frame = (): DemoFrame => ({
    phase: phase.name,
    phaseNumber: phase.number,
    ...(phase.count !== 2 && { phaseCount: phase.count }),
    elapsedMs: elapsed(),
    durationMs: phase.durationMs,
    flows: load.flows,
    levels: phase.levels(),
    upstream: { busy: phase.upstream.busy, waiting: phase.upstream.waiting, slots: SLOTS },
  });
  const pushRow = (s: GradientSnapshot) => {
    controllerPhase = s.phase;
    trace.push({
      elapsedMs: elapsed(),
      limit: s.limit,
      phase: s.phase,
      minRttMs: s.minRttMs,
      sampleRttMs: s.sampleRttMs,
      gradient: s.gradient,
      upstreamBusy: phase.upstream.busy,
      upstreamWaiting: phase.upstream.waiting,
    });
  };
  /** A row of the learned limit once a window (a timer may fire a hair early). */
  const record = () => {
    const at = elapsed();
    if (adaptive === undefined || at < nextRowMs - 1) return;
    nextRowMs = (Math.floor((at + 1) / adaptive.everyMs) + 1) * adaptive.everyMs;
    const s = adaptive.snapshot();
    if (s !== null) pushRow(s);
  };
  // And a row as soon as the controller's phase changes: the minRTT's pin shows.
  let watcher: Timer | null = null;
  const watch = () => {
    const s = adaptive?.snapshot() ?? null;
    if (s !== null && s.phase !== controllerPhase) pushRow(s);
    watcher = clock.setTimer(PHASE_WATCH_MS, watch);
  };
  if (adaptive !== undefined) watcher = clock.setTimer(PHASE_WATCH_MS, watch);
  const draw = () => {
    record();
    // The learned limit's new rows: lines that stay (on a terminal, above the live table).
    let rows = "";
    while (printedRows < trace.length) {
      rows += renderAdaptiveLine(phase.name, trace[printedRows++]!, SLOTS);
    }
    if (!terminal) {
      if (adaptive === undefined) io.stdout(renderProgress(frame()));
      else if (rows !== "") io.stdout(rows);
      return;
    }
    const text = renderFrame(frame());
    // Back to the first line of the previous frame, clear to the end, draw again.
    io.stdout((drawnLines > 0 ? `\x1b[${drawnLines}F\x1b[J` : "") + rows + text);
    drawnLines = text.split("\n").length - 1;
  };
  let run: PhaseRun;
  try {
    for (;;) {
      const at = clock.now() - start;
      const left = phase.durationMs - at;
      if (left <= 0) break;
      // On the tick's multiples: a late timer does not delay the next ones.
      const wait = (Math.floor((at + 1) / tickMs) + 1) * tickMs - at;
      await new Promise<void>((resolve) => clock.setTimer(Math.min(wait, left), resolve));
      if (clock.now() - start < phase.durationMs) draw();
    }
    // The final state of the phase, before the abandoned requests leave.
    draw();
    run = {
      result: phaseResult(phase.name, load.flows.map((f) => ({ ...f }))),
      lastHalf: lastHalf.stop(),
      trace,
    };
  } finally {
    watcher?.cancel();
    lastHalf.stop();
    // Also when the output fails (a closed pipe): the load must not outlive the demo.
    await load.stop();
  }
  if (terminal) io.stdout("\n");
  return run;
}

/** How often the adaptive phase looks for a change of the controller's phase, ms. */
const PHASE_WATCH_MS = 20;

/** How often the requests inside the upstream are counted, ms. */
const IN_FLIGHT_EVERY_MS = 50;

/**
 * Watches a phase's last half, from `halfMs` on (by then the learned limit
 * has settled): the requests inside the upstream (counted every
 * {@linkcode IN_FLIGHT_EVERY_MS}), its completions, the mice's latencies.
 * What the summary of `--adaptive` compares the phases on.
 */
function watchLastHalf(
  clock: Clock,
  upstream: DemoUpstream,
  flows: readonly FlowStats[],
  halfMs: number,
): { stop(): PhaseRun["lastHalf"] } {
  let from: { at: number; completed: number; latencies: number[] } | null = null;
  let result: PhaseRun["lastHalf"] | null = null;
  const inFlight: number[] = [];
  let timer: Timer | null = clock.setTimer(halfMs, () => {
    from = {
      at: clock.now(),
      completed: upstream.completed,
      latencies: flows.map((f) => f.latencies.length),
    };
    const count = () => {
      inFlight.push(upstream.busy + upstream.waiting);
      timer = clock.setTimer(IN_FLIGHT_EVERY_MS, count);
    };
    count();
  });
  return {
    stop() {
      timer?.cancel();
      timer = null;
      if (result !== null) return result;
      const since = from;
      if (since === null) return result = { throughputPerSecond: 0 };
      const seconds = (clock.now() - since.at) / 1000;
      // The mice: every flow but the elephant, the first.
      const mice = flows.slice(1).flatMap((f, i) => f.latencies.slice(since.latencies[i + 1]));
      const p90 = percentile(inFlight, 0.9);
      const p50 = percentile(mice, 0.5);
      const p99 = percentile(mice, 0.99);
      return result = {
        throughputPerSecond: seconds > 0 ? (upstream.completed - since.completed) / seconds : 0,
        ...(p90 !== undefined && { upstreamInFlightP90: p90 }),
        ...(p50 !== undefined && { miceP50: p50 }),
        ...(p99 !== undefined && { miceP99: p99 }),
      };
    },
  };
}

function levelRows(
  levels: readonly {
    name: string;
    type: string;
    currentLimit: number;
    queueSet: { seatsInUse: number; waitingRequests: number };
  }[],
): LevelRow[] {
  return levels
    .filter((l) => l.type === "Limited")
    .map((l) => ({
      name: l.name,
      seatsInUse: l.queueSet.seatsInUse,
      queued: l.queueSet.waitingRequests,
      currentLimit: l.currentLimit,
    }));
}
