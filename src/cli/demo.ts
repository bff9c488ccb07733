/**
 * `apf demo` (what `deno task start` runs): watch fairness happen. A small
 * built-in upstream with a fixed number of worker slots is flooded by one
 * "elephant" flow while a few "mice" send one request at a time: first
 * straight to the upstream, then through the APF gateway. A live table shows
 * each flow and priority level; a summary compares the mice's latency.
 *
 * @module
 */

import { parseDurationMs } from "../_shared/duration.ts";
import {
  type EffectiveConfiguration,
  loadConfiguration,
  resolveConfiguration,
} from "../config/mod.ts";
import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import { serveGateway } from "../deno/gateway.ts";
import type { Gateway } from "../deno/gateway_types.ts";
import { addressOption, httpUrlOf, withFlagNames } from "./_address.ts";
import { DASHBOARD_PATH } from "../observe/admin_router.ts";
import { type LoadShape, startLoad } from "./_demo_load.ts";
import { type DemoUpstream, startDemoUpstream } from "./_demo_upstream.ts";
import {
  type DemoFrame,
  type LevelRow,
  type PhaseResult,
  phaseResult,
  renderFrame,
  renderProgress,
  renderSummary,
  timerLag,
} from "./_demo_view.ts";
import { helpText, parseArgs } from "./args.ts";
import type { CliIO, ExitCode } from "./io.ts";

/** Usage line of the command. */
export const DEMO_USAGE = "apf demo [--duration 20s] [--dashboard-listen 127.0.0.1:0]";

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

  --duration <d>              Go duration of the whole run (default 20s, at least 1s)
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

/** Runs the demo; exits 0 when it is done, 2 on a usage error. */
export async function demoCommand(
  args: readonly string[],
  io: CliIO,
  clock: Clock = systemClock,
): Promise<ExitCode> {
  const parsed = parseArgs(args, { strings: ["duration", "dashboard-listen"] });
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
  const durationText = parsed.strings.get("duration")?.at(-1) ?? "20s";
  const durationMs = parseDurationMs(durationText);
  if (durationMs === undefined || !(durationMs >= 1000)) {
    return fail(`--duration must be a duration of 1s or more, like 20s, got ${durationText}`);
  }
  const listenText = parsed.strings.get("dashboard-listen")?.at(-1) ?? "127.0.0.1:0";
  const dashboardListen = addressOption(listenText, "dashboard-listen", null);
  if (typeof dashboardListen === "string") return fail(dashboardListen);
  const phaseMs = durationMs / 2;
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
      `level, one flow per user). ${(phaseMs / 1000).toFixed(1)}s each.\n\n`,
  );
  const lag = timerLag(clock);
  try {
    const without = await runPhase(io, clock, terminal, {
      name: "without APF",
      number: 1,
      url: `${upstream.url}/work`,
      durationMs: phaseMs,
      upstream,
      levels: () => null,
    });
    const withApf = await runPhase(io, clock, terminal, {
      name: "with APF",
      number: 2,
      url: `http://127.0.0.1:${gateway.addr.port}/work`,
      durationMs: phaseMs,
      upstream,
      levels: () => levelRows(gateway.middleware.snapshot()?.levels ?? []),
    });
    io.stdout(renderSummary(without, withApf, lag.stop()));
    return 0;
  } finally {
    lag.stop();
    await gateway.shutdown();
    await upstream.close();
  }
}

interface Phase {
  name: string;
  number: number;
  url: string;
  durationMs: number;
  upstream: DemoUpstream;
  levels: () => LevelRow[] | null;
}

/** Redraws every half second on a terminal; prints a line every 2.5 s otherwise. */
async function runPhase(
  io: CliIO,
  clock: Clock,
  terminal: boolean,
  phase: Phase,
): Promise<PhaseResult> {
  const load = startLoad(phase.url, SHAPE, clock);
  const start = clock.now();
  const tickMs = terminal ? 500 : 2500;
  let drawnLines = 0;
  const frame = (): DemoFrame => ({
    phase: phase.name,
    phaseNumber: phase.number,
    elapsedMs: Math.min(clock.now() - start, phase.durationMs),
    durationMs: phase.durationMs,
    flows: load.flows,
    levels: phase.levels(),
    upstream: { busy: phase.upstream.busy, waiting: phase.upstream.waiting, slots: SLOTS },
  });
  const draw = () => {
    if (!terminal) return io.stdout(renderProgress(frame()));
    const text = renderFrame(frame());
    // Back to the first line of the previous frame, clear to the end, draw again.
    io.stdout((drawnLines > 0 ? `\x1b[${drawnLines}F\x1b[J` : "") + text);
    drawnLines = text.split("\n").length - 1;
  };
  let result: PhaseResult;
  try {
    for (;;) {
      const left = phase.durationMs - (clock.now() - start);
      if (left <= 0) break;
      await new Promise<void>((resolve) => clock.setTimer(Math.min(tickMs, left), resolve));
      if (clock.now() - start < phase.durationMs) draw();
    }
    // The final state of the phase, before the abandoned requests leave.
    draw();
    result = phaseResult(phase.name, load.flows.map((f) => ({ ...f })));
  } finally {
    // Also when the output fails (a closed pipe): the load must not outlive the demo.
    await load.stop();
  }
  if (terminal) io.stdout("\n");
  return result;
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
