/**
 * The data of a whole-configuration scenario of `apf simulate` (one with a
 * `config` key): closed-loop clients sending HTTP-like requests through the
 * real classifier, estimator and embedded coordinator.
 *
 * @module
 */

import type { ResolvedGradientOptions } from "../adaptive/gradient_options.ts";
import type { ControllerPhase, GradientSnapshot } from "../adaptive/types.ts";
import type { BorrowingAdjustment } from "../coordinator/embedded.ts";
import type { WorkEstimate } from "../fairqueuing/types.ts";
import type { RejectionCounts } from "./types.ts";
import type { UpstreamResult, UpstreamScenario } from "./upstream.ts";

/** One client: a user sending one kind of request from several threads. */
export interface ConfigScenarioClient {
  /** Name used in the output. */
  name: string;
  /** The user name; `null`: anonymous (`system:anonymous`). */
  user: string | null;
  /** The user's groups (normalized as `apf classify` does). */
  groups: string[];
  /** HTTP method. */
  method: string;
  /** URL path. */
  path: string;
  /** URL query, without `?`. */
  query: string;
  /** Concurrent threads (integer ≥ 1). */
  threads: number;
  /** Calls per thread; `null`: unlimited. */
  calls: number | null;
  /**
   * How long an executed call holds its seats, in ms. With an upstream, its
   * `workMs` (a call then holds its seats for its wait for a worker and its
   * work).
   */
  execMs: number;
  /** Pause after each call (executed or rejected) before the next, in ms. */
  thinkMs: number;
  /** When the threads issue their first call, in ms. */
  startMs: number;
  /** No call is issued at or after this time; `null`: until the end. */
  stopMs: number | null;
  /** Overrides the estimator's work; `null`: use the estimator. */
  work: Required<WorkEstimate> | null;
  /** With budget holders: the holder its requests go to (0 to count − 1). */
  holder: number;
}

/**
 * Budget holders to compare with the exact coordinator on the same load:
 * `count` holders share every level's seats through a ledger in memory,
 * each deciding its clients' requests on its own budget.
 */
export interface HoldersScenario {
  /** How many holders. */
  count: number;
  /** How often each settles its ledgers, in ms. */
  periodMs: number;
  /** The lease of a claim, in ms. */
  leaseMs: number;
  /** How long a claim counts after its lease, in ms. */
  drainMs: number;
  /** The drift margin added to each line's window, in ms (the simulated clocks agree). */
  driftMarginMs: number;
  /** How long each store operation takes, in ms. */
  storeLatencyMs: number;
}

/** A whole-configuration scenario, every default filled in. */
export interface ConfigScenario {
  /** Name echoed in the output. */
  name: string;
  /** Manifest paths relative to the scenario file; empty: the built-in configuration only. */
  config: string[];
  /** Start from the mandatory objects alone instead of mandatory plus suggested. */
  mandatoryOnly: boolean;
  /** The server concurrency limit (with `adaptive`: the controller's `initial`). */
  serverConcurrencyLimit: number;
  /**
   * A limit learned by the gradient controller (`"auto"` or its options in
   * the JSON), or `null` for the fixed `serverConcurrencyLimit`.
   */
  adaptive: ResolvedGradientOptions | null;
  /** The upstream executed calls go to, or `null`: each call holds its seats for `execMs`. */
  upstream: UpstreamScenario | null;
  /** Per-request queue wait limit (`docs/semantics.md` §7.3), in ms. */
  queueWaitLimitMs: number;
  /** Simulated time, in ms; no call is issued at or after it. */
  durationMs: number;
  /** The clients. */
  clients: ConfigScenarioClient[];
  /** Budget holders to compare with the exact coordinator, or `null`. */
  holders: HoldersScenario | null;
}

/** Wait-time percentiles of a client's executed calls, in ms. */
export interface WaitSummary {
  /** Median. */
  p50: number;
  /** 99th percentile. */
  p99: number;
  /** Longest. */
  max: number;
}

/** What one level did over the run. */
export interface LevelResult {
  /** The level's name. */
  name: string;
  /** Requests dispatched. */
  dispatched: number;
  /** Requests rejected, by reason. */
  rejected: RejectionCounts;
}

/** What one client got. */
export interface ConfigClientResult {
  /** The client's name. */
  name: string;
  /** The FlowSchema its requests matched. */
  flowSchema: string;
  /** Their priority level. */
  priorityLevel: string;
  /** Calls executed. */
  dispatched: number;
  /** Calls rejected, by reason. */
  rejected: RejectionCounts;
  /** Queue wait of executed calls. */
  waitMs: WaitSummary;
}

/** How much of a level's seats were in use over a run. */
export interface LevelUse {
  /** The level's name. */
  name: string;
  /** Its nominal limit (NominalCL). */
  nominalLimit: number;
  /** The highest its current limit (after borrowing) went during the run. */
  maxCurrentLimit: number;
  /** The most seats in use at once, over every holder. */
  peakSeatsInUse: number;
  /** Seats in use on average over the run. */
  meanSeatsInUse: number;
}

/** One way of deciding (exact or budgets) on a scenario's load. */
export interface ModeResult {
  /** Every limited level, in configuration order. */
  levels: LevelUse[];
  /** Every client, in scenario order. */
  clients: ConfigClientResult[];
  /** With `holders`: the exact coordinator and the budget holders on the same load. */
  budgets?: BudgetComparison;
  /** With an upstream: what it held and served in this mode. */
  upstream?: UpstreamResult;
}

/** The same load decided by the exact coordinator and by budget holders. */
export interface BudgetComparison {
  /** The holders' settings. */
  holders: HoldersScenario;
  /** One embedded coordinator deciding every request (borrowing included). */
  exact: ModeResult;
  /** The holders, each deciding its clients' requests on its budgets of nominal limits. */
  budgets: ModeResult;
}

/** One change of the learned limit. */
export interface AdaptiveTracePoint {
  /** When, in ms. */
  atMs: number;
  /** The new limit. */
  limit: number;
  /** The controller's phase then. */
  phase: ControllerPhase;
  /** The minRTT in force, in ms (`null` before the first measurement ends). */
  minRttMs: number | null;
  /** The last window's latency percentile, in ms (`null`: none yet, or refusals only). */
  sampleRttMs: number | null;
  /** The last window's gradient (`null` before the first window). */
  gradient: number | null;
  /** Requests inside the upstream then (`null` without an upstream). */
  upstreamInFlight: number | null;
}

/** What the gradient controller learned over a run. */
export interface AdaptiveResult {
  /** Its options, defaults filled in. */
  options: ResolvedGradientOptions;
  /** Every change of the limit, from the start (`atMs` 0). */
  trace: AdaptiveTracePoint[];
  /** Its state at the end of the run. */
  final: GradientSnapshot;
}

/** What `apf simulate` prints for a whole-configuration scenario. */
export interface ConfigSimulationResult {
  /** The scenario's name. */
  name: string;
  /** The server concurrency limit (with a learned limit: the `initial` one). */
  serverConcurrencyLimit: number;
  /** Every borrowing adjustment from `atMs` 0 to the duration. */
  adjustments: Omit<BorrowingAdjustment, "fairFraction">[];
  /** Every level, in configuration order. */
  levels: LevelResult[];
  /** Every client, in scenario order. */
  clients: ConfigClientResult[];
  /** With `holders`: the exact coordinator and the budget holders on the same load. */
  budgets?: BudgetComparison;
  /** With an upstream: what it held and served. */
  upstream?: UpstreamResult;
  /** With a learned limit: what the controller did. */
  adaptive?: AdaptiveResult;
}
