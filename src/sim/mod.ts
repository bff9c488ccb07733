/**
 * The simulator behind `apf simulate` (`docs/semantics.md` §10.1): uniform scenarios of
 * closed-loop clients run against one priority level on a simulated clock,
 * and the max-min fair allocation their results are judged against; and
 * whole-configuration scenarios, optionally in front of a worker-pool
 * upstream with a learned server concurrency limit.
 *
 * @example
 * ```ts
 * import { fairAlloc, parseScenario, runScenario, uniformDemands } from "@apf/edge/sim";
 * const scenario = parseScenario('{"durationMs": 10000}');
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
export {
  MAX_CALLS,
  MAX_CLIENTS,
  MAX_THREADS,
  MAX_TOTAL_CALLS,
  parseScenario,
  ScenarioError,
  scenarioFromJson,
} from "./scenario.ts";
export { fairAlloc, uniformDemands } from "./fair_alloc.ts";
export { callbackBudget, runScenario, simulate, type SimulationRun } from "./run.ts";
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
export {
  configScenarioFromJson,
  MAX_CONFIG_DURATION_MS,
  MAX_CONFIG_THREADS,
} from "./config_scenario.ts";
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
