/**
 * What the demo prints: the live table (per flow and per priority level),
 * a one-line progress report for output that is not a terminal, the
 * learned limit's lines in the adaptive phase, and the closing summary.
 * Pure functions of plain data, so they are testable.
 *
 * @module
 */

import { type FlowStats, percentile } from "./_demo_load.ts";
import { renderTable } from "./table.ts";
import type { Clock, Timer } from "../fairqueuing/clock.ts";
import { DEFAULT_BUFFER } from "../adaptive/gradient_options.ts";

/** One priority level's state, from the coordinator's snapshot. */
export interface LevelRow {
  /** The level's name. */
  name: string;
  /** Seats held by executing requests. */
  seatsInUse: number;
  /** Requests waiting in its queues. */
  queued: number;
  /** Its current concurrency limit. */
  currentLimit: number;
}

/** The learned limit's state at one moment of the adaptive phase. */
export interface AdaptiveRow {
  /** Time into the phase, ms. */
  elapsedMs: number;
  /** The learned server concurrency limit. */
  limit: number;
  /** What the controller is doing: `warming-up`, `measuring-min-rtt` or `sampling`. */
  phase: string;
  /** The unloaded latency it measured, ms (`null` before the first measurement). */
  minRttMs: number | null;
  /** The last sample window's latency, ms (`null` before the first window). */
  sampleRttMs: number | null;
  /** The last window's gradient (`null` before the first window). */
  gradient: number | null;
  /** The upstream's slots busy then. */
  upstreamBusy: number;
  /** Requests waiting inside the upstream for a slot then. */
  upstreamWaiting: number;
}

/** Everything one frame of the demo shows. */
export interface DemoFrame {
  /** `without APF`, `with APF` or `with APF, auto`. */
  phase: string;
  /** 1, 2 or 3. */
  phaseNumber: number;
  /** Phases of the run (default 2; 3 with `--adaptive`). */
  phaseCount?: number;
  /** Time into the phase, ms. */
  elapsedMs: number;
  /** Length of the phase, ms. */
  durationMs: number;
  /** Elephant first, then mice. */
  flows: readonly FlowStats[];
  /** Priority levels with any activity, or `null` without APF. */
  levels: readonly LevelRow[] | null;
  /** The upstream's slots. */
  upstream: { busy: number; waiting: number; slots: number };
}

/** A latency for humans: `35 ms`, or `-` when there is none. */
export function ms(value: number | undefined): string {
  return value === undefined ? "-" : `${Math.round(value)} ms`;
}

function seconds(valueMs: number): string {
  return `${(valueMs / 1000).toFixed(1)}s`;
}

/** The live view: a title, the flow table, the level table (or the upstream's state). */
export function renderFrame(frame: DemoFrame): string {
  const title = `phase ${frame.phaseNumber} of ${frame.phaseCount ?? 2}: ${frame.phase}` +
    `  ${seconds(frame.elapsedMs)} / ${seconds(frame.durationMs)}\n\n`;
  const flows = renderTable(
    ["flow", "sent", "served", "rejected", "in flight", "p50", "p99"],
    frame.flows.map((f) => [
      f.user,
      String(f.sent),
      String(f.served),
      String(f.rejected),
      String(f.inFlight),
      ms(percentile(f.latencies, 0.5)),
      ms(percentile(f.latencies, 0.99)),
    ]),
  );
  const up = frame.upstream;
  const upstream =
    `upstream: ${up.busy}/${up.slots} slots busy, ${up.waiting} requests waiting inside it\n`;
  if (frame.levels === null) {
    return `${title}${flows}\n(no APF: every request goes straight to the upstream)\n${upstream}`;
  }
  const levels = renderTable(
    ["priority level", "seats in use", "queued", "current limit"],
    frame.levels.map((
      l,
    ) => [l.name, String(l.seatsInUse), String(l.queued), String(l.currentLimit)]),
  );
  return `${title}${flows}\n${levels}${upstream}`;
}

function gradientText(gradient: number | null): string {
  return gradient === null ? "-" : gradient.toFixed(2);
}

/**
 * One row of the learned limit as a line (a log above the live table on a
 * terminal): the limit, the controller's phase and measures, the upstream.
 */
export function renderAdaptiveLine(phase: string, row: AdaptiveRow, slots: number): string {
  return `[${phase} ${seconds(row.elapsedMs)}] learned limit ${row.limit} (${row.phase}), ` +
    `minRTT ${ms(row.minRttMs ?? undefined)}, sampleRTT ${ms(row.sampleRttMs ?? undefined)}, ` +
    `gradient ${gradientText(row.gradient)}; upstream: ${row.upstreamBusy + row.upstreamWaiting} ` +
    `in flight, ${row.upstreamBusy}/${slots} busy, ${row.upstreamWaiting} waiting\n`;
}

/** Sums of the mice's flows, and the elephant's. */
export interface PhaseResult {
  /** `without APF`, `with APF` or `with APF, auto`. */
  phase: string;
  /** The mice together. */
  mice: { served: number; rejected: number; failed: number; p50?: number; p99?: number };
  /** The elephant. */
  elephant: { served: number; rejected: number; failed: number };
}

/** The result of a phase from its flows (elephant first). */
export function phaseResult(phase: string, flows: readonly FlowStats[]): PhaseResult {
  const [elephant, ...mice] = flows;
  const latencies = mice.flatMap((m) => m.latencies);
  const sum = (key: "served" | "rejected" | "failed") => mice.reduce((n, m) => n + m[key], 0);
  const p50 = percentile(latencies, 0.5);
  const p99 = percentile(latencies, 0.99);
  return {
    phase,
    mice: {
      served: sum("served"),
      rejected: sum("rejected"),
      failed: sum("failed"),
      ...(p50 !== undefined && { p50 }),
      ...(p99 !== undefined && { p99 }),
    },
    elephant: {
      served: elephant?.served ?? 0,
      rejected: elephant?.rejected ?? 0,
      failed: elephant?.failed ?? 0,
    },
  };
}

/** One line of progress, for output that is not a terminal. */
export function renderProgress(frame: DemoFrame): string {
  const r = phaseResult(frame.phase, frame.flows);
  let line = `[${frame.phase} ${seconds(frame.elapsedMs)}] mice: ${r.mice.served} served, ` +
    `p50 ${ms(r.mice.p50)}, p99 ${ms(r.mice.p99)}; elephant: ${r.elephant.served} served, ` +
    `${r.elephant.rejected} rejected`;
  for (const l of frame.levels ?? []) {
    line += `; level ${l.name}: ${l.seatsInUse}/${l.currentLimit} seats, ${l.queued} queued`;
  }
  const up = frame.upstream;
  return `${line}; upstream: ${up.busy}/${up.slots} busy, ${up.waiting} waiting\n`;
}

/** What a phase's last half showed: the summary of `--adaptive` compares the phases on it. */
export interface SettledPhase {
  /** The phase's name. */
  phase: string;
  /** The server concurrency limit: `-` without APF, `8`, or the learned limit's range (`13-15`). */
  serverLimit: string;
  /** p90 of the requests inside the upstream (in its slots and waiting for one). */
  upstreamInFlightP90?: number;
  /** Requests the upstream completed a second. */
  throughputPerSecond: number;
  /** The mice's median latency, ms. */
  miceP50?: number;
  /** The mice's p99 latency, ms. */
  miceP99?: number;
}

/** The adaptive phase's part of the summary. */
export interface AdaptiveSummary {
  /** The adaptive phase's result, a third row of the main table. */
  auto: PhaseResult;
  /** The three phases' last halves: without APF, with APF, with APF auto. */
  settled: readonly SettledPhase[];
  /** The upstream's worker slots. */
  workers: number;
  /** What they can do: requests a second. */
  capacityPerSecond: number;
  /** The learned limit at the end, and the minRTT it was learned against. */
  learned: { limit: number; minRttMs: number | null } | null;
}

function percent(part: number, whole: number): string {
  return whole > 0 ? `${Math.round((100 * part) / whole)}%` : "-";
}

/** The comparison of the phases' last halves, and what the learned limit did. */
function renderSettled(a: AdaptiveSummary): string {
  const table = renderTable(
    [
      "",
      "server limit",
      "upstream in flight p90",
      "throughput",
      "of capacity",
      "mice p50",
      "mice p99",
    ],
    a.settled.map((s) => [
      s.phase,
      s.serverLimit,
      s.upstreamInFlightP90 === undefined ? "-" : String(s.upstreamInFlightP90),
      `${Math.round(s.throughputPerSecond)}/s`,
      percent(s.throughputPerSecond, a.capacityPerSecond),
      ms(s.miceP50),
      ms(s.miceP99),
    ]),
  );
  let text = `\nThe last half of each phase, against the upstream's ${a.workers} workers ` +
    `(${Math.round(a.capacityPerSecond)} requests/s at most):\n\n${table}`;
  const [without, fixed, auto] = a.settled;
  if (a.learned !== null && without !== undefined && fixed !== undefined && auto !== undefined) {
    const k = a.workers * (1 + DEFAULT_BUFFER);
    const inFlight = (s: SettledPhase) =>
      s.upstreamInFlightP90 === undefined ? "-" : String(s.upstreamInFlightP90);
    text += `\nTold nothing of the upstream, the gateway learned a limit of ${a.learned.limit} ` +
      `(minRTT ${ms(a.learned.minRttMs ?? undefined)}): ${inFlight(auto)} requests inside the ` +
      `upstream (p90; ${inFlight(without)} without APF, ${
        inFlight(fixed)
      } with ${fixed.serverLimit} ` +
      `seats set by hand) at ${percent(auto.throughputPerSecond, a.capacityPerSecond)} of its ` +
      `workers' capacity (${percent(fixed.throughputPerSecond, a.capacityPerSecond)} with ` +
      `${fixed.serverLimit} seats). It aims above the ${a.workers} workers on purpose, to keep them ` +
      `busy: a ${Math.round(DEFAULT_BUFFER * 100)}% tolerance over the minRTT plus headroom, ` +
      `${a.workers} × ${1 + DEFAULT_BUFFER} + √${k} ≈ ${Math.round(k + Math.sqrt(k))} requests ` +
      `for ${a.workers} workers of equal work times, a little more when they vary. The ` +
      `requests beyond the workers wait inside the upstream, out of fair queuing's reach: ` +
      `compare the mice's latency with the seats set by hand.\n`;
  }
  return text;
}

/** How late the demo's timers ran while it measured, in ms: how busy the machine was. */
export interface TimerLag {
  /** The median lateness. */
  p50: number;
  /** The 90th percentile. */
  p90: number;
}

/**
 * Timers late by this much (p90) mean the machine was too busy for a clean
 * comparison: the upstream's work is 20–40 ms, so such a wait is of the
 * same size as what the demo measures.
 */
export const BUSY_LAG_MS = 20;

/**
 * The closing summary comparing the two phases: the mice's median and p99
 * latency both (one percentile alone misleads on a busy machine: the median
 * shows the queueing APF removes, the p99 the machine's own hiccups), and a
 * warning when the timers ran late (`lag`). With `adaptive` (`--adaptive`),
 * a third row, and a second table comparing the last half of each phase:
 * the requests inside the upstream, its throughput, the mice's latency.
 */
export function renderSummary(
  without: PhaseResult,
  withApf: PhaseResult,
  lag?: TimerLag,
  adaptive?: AdaptiveSummary,
): string {
  const table = renderTable(
    [
      "",
      "mice served",
      "mice p50",
      "mice p99",
      "mice rejected",
      "elephant served",
      "elephant rejected",
    ],
    [without, withApf, ...(adaptive === undefined ? [] : [adaptive.auto])].map((r) => [
      r.phase,
      String(r.mice.served),
      ms(r.mice.p50),
      ms(r.mice.p99),
      String(r.mice.rejected),
      String(r.elephant.served),
      String(r.elephant.rejected),
    ]),
  );
  let verdict = "";
  const change = (key: "p50" | "p99") => {
    const before = without.mice[key], after = withApf.mice[key];
    if (before === undefined || after === undefined || !(after > 0)) return null;
    return `from ${ms(before)} to ${ms(after)} (${
      before >= after
        ? `${(before / after).toFixed(1)}x lower`
        : `${(after / before).toFixed(1)}x higher`
    })`;
  };
  const p50 = change("p50"), p99 = change("p99");
  if (p50 !== null && p99 !== null) {
    verdict = `\nWith APF the mice's median latency went ${p50} and their p99 ${p99}, ` +
      `while the elephant was held to its fair share of the level ` +
      `(${withApf.elephant.rejected} of its requests got 429 with Retry-After).\n`;
  }
  if (adaptive !== undefined) verdict += renderSettled(adaptive);
  if (lag !== undefined && lag.p90 > BUSY_LAG_MS) {
    verdict +=
      `\nThe machine was busy: the demo's own timers ran ${ms(lag.p90)} late (p90; median ${
        ms(lag.p50)
      }), a wait as long as the upstream's work, which every ` +
      `latency above includes. Run it again on a quieter machine for a clean comparison.\n`;
  }
  return `\nSummary\n\n${table}${verdict}`;
}

/**
 * Measures how late `clock`'s timers run (every `everyMs`) until stopped:
 * on a machine busy with other work, they run late, and so does every
 * request the demo times.
 */
export function timerLag(clock: Clock, everyMs = 100): { stop(): TimerLag } {
  const late: number[] = [];
  let timer: Timer | null = null;
  const arm = () => {
    const due = clock.now() + everyMs;
    timer = clock.setTimer(everyMs, () => {
      late.push(Math.max(0, clock.now() - due));
      arm();
    });
  };
  arm();
  return {
    stop() {
      timer?.cancel();
      return { p50: percentile(late, 0.5) ?? 0, p90: percentile(late, 0.9) ?? 0 };
    },
  };
}
