/**
 * The simulator behind `apf simulate` (`docs/semantics.md` §10.1): uniform scenarios of
 * closed-loop clients run against one priority level on a simulated clock,
 * and the max-min fair allocation their results are judged against; and
 * whole-configuration scenarios, optionally in front of a worker-pool
 * upstream with a learned server concurrency limit. The queue set of one
 * priority level that it runs ({@linkcode QueueSet}) is here too.
 *
 * @example
 * ```ts
 * import { fairAlloc, runScenario, scenarioFromJson, uniformDemands } from "@apf/edge/sim";
 * const scenario = scenarioFromJson({ durationMs: 10_000 });
 * const result = runScenario(scenario);
 * const fair = fairAlloc(uniformDemands(scenario, 1), scenario.priorityLevel.concurrencyLimit);
 * console.log(result.clients.map((c, i) => `${c.name}: ${c.averageSeats.at(-1)} vs ${fair[i]}`));
 * ```
 *
 * @module
 */

export type {
  ClientResult,
  RejectionCounts,
  Scenario,
  ScenarioClient,
  ScenarioPriorityLevel,
  SeatDemandSummary,
  SimulationResult,
} from "./types.ts";
export { ScenarioError, scenarioFromJson } from "./scenario.ts";
export { fairAlloc, uniformDemands } from "./fair_alloc.ts";
export { runScenario } from "./run.ts";
export type {
  AdaptiveResult,
  AdaptiveTracePoint,
  BudgetComparison,
  ConfigClientResult,
  ConfigScenario,
  ConfigScenarioClient,
  ConfigSimulationResult,
  HoldersScenario,
  LevelResult,
  LevelUse,
  ModeResult,
  WaitSummary,
} from "./config_types.ts";
export { configScenarioFromJson } from "./config_scenario.ts";
export { type ConfigRunOptions, runConfigScenario } from "./config_run.ts";
export type {
  InFlightSummary,
  UpstreamChange,
  UpstreamPhaseResult,
  UpstreamResult,
  UpstreamScenario,
} from "./upstream.ts";
export type {
  ControllerPhase,
  GradientControllerOptions,
  GradientSnapshot,
  ResolvedGradientOptions,
} from "../adaptive/mod.ts";
export {
  type ExemptQueueSetConfig,
  type LimitedQueueSetConfig,
  QueueSet,
  type QueueSetConfig,
  type QueueSetConfigChange,
  type QueueSetQueuing,
  type StartRequestInit,
} from "../fairqueuing/mod.ts";
