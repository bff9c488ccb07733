/**
 * Runs a uniform scenario (`docs/semantics.md` §10.1) against the real {@linkcode QueueSet}
 * on a {@linkcode FakeEventClock}, the way Kubernetes' QueueSet tests do:
 * closed-loop client threads, checkpoints with time-weighted averages of
 * executing seats, then the clock runs until every call is done.
 *
 * @module
 */

import { FakeEventClock } from "../fairqueuing/clock.ts";
import { Integrator, type IntegratorResults } from "../fairqueuing/integrator.ts";
import { QueueSet } from "../fairqueuing/queue_set.ts";
import type { QueueSetConfig, QueueSetRequest, QueueSetSnapshot } from "../fairqueuing/types.ts";
import type {
  ClientResult,
  RejectionCounts,
  Scenario,
  ScenarioClient,
  SimulationResult,
} from "./types.ts";

/** Everything a run observed: the printed result plus what tests check besides it. */
export interface SimulationRun {
  /** What `apf simulate` prints. */
  result: SimulationResult;
  /** The queue set's own seat-demand statistics over `[0, durationMs]`. */
  seatDemand: IntegratorResults;
  /**
   * An independent integral of Σ max(initialSeats, finalSeats) over calls,
   * from start until the end of execution plus additional latency (or
   * rejection), over `[0, durationMs]`: must agree with `seatDemand`.
   */
  independentSeatDemand: IntegratorResults;
  /** State of the queue set when the clock ran out of events. */
  final: QueueSetSnapshot;
  /** Calls still waiting when the clock ran out of events (then cancelled). */
  stranded: number;
  /** Timer callbacks the fake clock ran; at most {@linkcode callbackBudget}. */
  callbacks: number;
}

/**
 * Most fake-clock callbacks one call can cause: its next call of the thread,
 * the end of its execution, the end of its additional latency for the
 * independent seat-demand integral, and the queue set's lingering-seat timer,
 * counted twice because float rounding can fire it an ulp before its due time,
 * when it re-arms.
 */
const CALLBACKS_PER_CALL = 5;

/**
 * The most timer callbacks `scenario` can run: one start per thread plus
 * {@linkcode CALLBACKS_PER_CALL} per call. The simulator passes it as the fake
 * clock's runaway guard, so every scenario that `parseScenario` accepts
 * (up to `MAX_TOTAL_CALLS` calls) runs to the end.
 *
 * @example
 * ```ts
 * import { callbackBudget } from "./run.ts";
 * import { scenarioFromJson } from "./scenario.ts";
 * callbackBudget(scenarioFromJson({})); // 8 threads + 5 · 160 calls = 808
 * ```
 */
export function callbackBudget(scenario: Scenario): number {
  let budget = 0;
  for (const c of scenario.clients) budget += c.threads * (1 + CALLBACKS_PER_CALL * c.calls);
  return budget;
}

function queueSetConfig(scenario: Scenario): QueueSetConfig {
  const pl = scenario.priorityLevel;
  if (pl.type === "Exempt") return { type: "Exempt", concurrencyLimit: pl.concurrencyLimit };
  return {
    type: "Limited",
    concurrencyLimit: pl.concurrencyLimit,
    queuing: pl.queuing,
    requestWaitLimitMs: scenario.requestWaitLimitMs,
  };
}

/** Thread `j` of client `i` starts at `90ns·j + 20ns·i` (as in Kubernetes' queue set tests). */
function threadStartMs(i: number, j: number): number {
  return (90 * j + 20 * i) / 1e6;
}

/**
 * Runs `scenario` and returns the printed result together with the
 * observations tests check (seat-demand integrals, final state).
 *
 * @example
 * ```ts
 * import { simulate } from "./run.ts";
 * import { scenarioFromJson } from "./scenario.ts";
 * const run = simulate(scenarioFromJson({}));
 * run.result.clients[0]?.averageSeats; // about [4]
 * ```
 */
export function simulate(scenario: Scenario): SimulationRun {
  const clock = new FakeEventClock(0);
  const qs = new QueueSet(queueSetConfig(scenario), { clock, name: scenario.name });
  const demand = new Integrator(clock);
  const waiting = new Set<QueueSetRequest>();
  const clients = scenario.clients.map((client, i) =>
    startClient(client, i, scenario.durationMs, { clock, qs, demand, waiting })
  );

  const half = scenario.durationMs / 2;
  const checkpointsMs = scenario.clients.some((c) => c.split)
    ? [half, scenario.durationMs]
    : [scenario.durationMs];
  const averages: number[][] = clients.map(() => []);
  let callbacks = 0;
  for (const checkpoint of checkpointsMs) {
    callbacks += clock.advanceTo(checkpoint);
    clients.forEach((c, i) => averages[i]!.push(nanToZero(c.executing.reset().average)));
  }
  const seatDemand = qs.seatDemand();
  const independentSeatDemand = demand.results();

  // The guard follows from the scenario: a fixed one would refuse large valid scenarios.
  callbacks += clock.runUntilIdle(Infinity, callbackBudget(scenario) - callbacks);
  // Nothing is left to release seats (for example a limit of 0): end the stranded calls.
  const stranded = waiting.size;
  for (const r of [...waiting]) r.cancel();

  return {
    result: {
      name: scenario.name,
      checkpointsMs,
      clients: clients.map((c, i): ClientResult => ({
        name: c.name,
        averageSeats: averages[i]!,
        dispatched: c.dispatched,
        rejected: c.rejected,
      })),
      seatDemand: {
        average: nanToZero(seatDemand.average),
        stdDev: nanToZero(seatDemand.deviation),
        highWatermark: Math.round(seatDemand.max),
      },
    },
    seatDemand,
    independentSeatDemand,
    final: qs.snapshot(),
    stranded,
    callbacks,
  };
}

/**
 * Runs `scenario` and returns what `apf simulate` prints.
 *
 * @example
 * ```ts
 * import { runScenario, scenarioFromJson } from "@apf/edge/sim";
 * const result = runScenario(scenarioFromJson({ durationMs: 20_000 }));
 * console.log(JSON.stringify(result));
 * ```
 */
export function runScenario(scenario: Scenario): SimulationResult {
  return simulate(scenario).result;
}

function nanToZero(x: number): number {
  return Number.isNaN(x) ? 0 : x;
}

interface World {
  clock: FakeEventClock;
  qs: QueueSet;
  /** The independent seat-demand integral. */
  demand: Integrator;
  /** Calls currently waiting, to end them if the run strands them. */
  waiting: Set<QueueSetRequest>;
}

interface ClientState {
  name: string;
  /** Integral of this client's executing initial seats. */
  executing: Integrator;
  dispatched: number;
  rejected: RejectionCounts;
}

function startClient(client: ScenarioClient, i: number, durationMs: number, world: World) {
  const { clock, qs, demand, waiting } = world;
  const state: ClientState = {
    name: client.name,
    executing: new Integrator(clock),
    dispatched: 0,
    rejected: { "queue-full": 0, "concurrency-limit": 0, "time-out": 0, cancelled: 0 },
  };
  const seats = Math.max(client.initialSeats, client.finalSeats);
  const work = {
    initialSeats: client.initialSeats,
    finalSeats: client.finalSeats,
    additionalLatencyMs: client.additionalLatencyMs,
  };
  const cycleMs = client.execMs + client.thinkMs;

  const call = (k: number, calls: number): void => {
    if (k >= calls) return;
    demand.add(seats);
    const onDecision = (r: QueueSetRequest): void => {
      waiting.delete(r);
      if (r.decision !== "execute") {
        // A rejected or cancelled call ends its thread.
        state.rejected[r.decision!]++;
        demand.add(-seats);
        return;
      }
      state.dispatched++;
      clock.setTimer(cycleMs, () => call(k + 1, calls));
      state.executing.add(client.initialSeats);
      clock.setTimer(client.execMs, () => {
        state.executing.add(-client.initialSeats);
        r.finish();
        if (client.additionalLatencyMs > 0) {
          clock.setTimer(client.additionalLatencyMs, () => demand.add(-seats));
        } else {
          demand.add(-seats);
        }
      });
    };
    const r = qs.startRequest({ hash: client.flowHash, work, onDecision });
    if (r.decision === null) waiting.add(r);
  };

  for (let j = 0; j < client.threads; j++) {
    const late = client.split && j >= Math.floor(client.threads / 2);
    const startMs = threadStartMs(i, j) + (late ? durationMs / 2 : 0);
    const calls = late ? Math.floor(client.calls / 2) : client.calls;
    clock.setTimer(startMs, () => call(0, calls));
  }
  return state;
}
