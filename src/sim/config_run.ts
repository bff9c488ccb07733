/**
 * Runs a whole-configuration scenario: closed-loop client threads whose
 * requests go through the real classifier, a work estimator and the
 * {@linkcode EmbeddedCoordinator}, all on a {@linkcode FakeEventClock}.
 *
 * The coordinator answers with promises, so the run alternates between the
 * fake clock (every timer due at the next instant) and the microtask queue
 * (admissions resolving, threads issuing their next calls), until no call
 * is left in flight after the scenario's duration.
 *
 * @module
 */

import { Classifier } from "../classify/classifier.ts";
import { normalizeUser } from "../classify/identity.ts";
import { RequestInfoResolver } from "../classify/request_info.ts";
import type { EffectiveConfiguration } from "../config/mod.ts";
import { type BorrowingAdjustment, EmbeddedCoordinator } from "../coordinator/embedded.ts";
import type { Admission, Coordinator } from "../coordinator/types.ts";
import { BudgetHolder } from "../budgets/holder.ts";
import { MemoryBudgetStore } from "../budgets/memory_store.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import { DelayedBudgetStore } from "./_delayed_store.ts";
import { LearnedLimitRun } from "./_learned_limit_run.ts";
import { seededRandom } from "./_random.ts";
import { WorkerPoolUpstream } from "./upstream.ts";
import { seatRequestFor } from "../coordinator/seat_request.ts";
import { FakeEventClock } from "../fairqueuing/clock.ts";
import { kubernetesEstimator } from "../estimate/kubernetes.ts";
import { estimateInputFor, type WorkEstimator } from "../estimate/types.ts";
import type { RejectReason } from "../fairqueuing/types.ts";
import { ScenarioError } from "./_json_fields.ts";
import type {
  ConfigClientResult,
  ConfigScenario,
  ConfigScenarioClient,
  ConfigSimulationResult,
  HoldersScenario,
  ModeResult,
  WaitSummary,
} from "./config_types.ts";
import type { RejectionCounts } from "./types.ts";

/** Options of {@linkcode runConfigScenario}. */
export interface ConfigRunOptions {
  /**
   * The work estimator for clients without a `work` override (default:
   * `kubernetesEstimator()`, with no object counts or watches known).
   */
  estimator?: WorkEstimator;
}

interface ClientState {
  dispatched: number;
  rejected: RejectionCounts;
  waits: number[];
}

/**
 * Runs `scenario` against `effective` (the configuration its `config` files
 * give, loaded by the caller) and returns what `apf simulate` prints.
 *
 * @throws {ScenarioError} when a thread would issue calls forever without
 * time passing (rejected or zero-length calls with no think time).
 * @example
 * ```ts
 * import { bootstrapConfiguration, effectiveConfiguration } from "@apf/edge";
 * import { configScenarioFromJson, runConfigScenario } from "@apf/edge/sim";
 * const scenario = configScenarioFromJson({
 *   config: [],
 *   durationMs: 20_000,
 *   clients: [{ name: "a", user: "alice", groups: ["dev"], path: "/api/v1/pods", threads: 2, calls: 3 }],
 * });
 * const result = await runConfigScenario(scenario, effectiveConfiguration(bootstrapConfiguration()));
 * result.clients[0]!.dispatched; // 6
 * ```
 */
export async function runConfigScenario(
  scenario: ConfigScenario,
  effective: EffectiveConfiguration,
  options: ConfigRunOptions = {},
): Promise<ConfigSimulationResult> {
  const exact = await runMode(scenario, effective, options, null);
  if (scenario.holders === null) return exact.result;
  const budgets = await runMode(scenario, effective, options, scenario.holders);
  return {
    ...exact.result,
    budgets: { holders: scenario.holders, exact: exact.mode, budgets: budgets.mode },
  };
}

/** The deciders of a run: one per holder (one in all for the exact coordinator). */
interface Deciders {
  forHolder(holder: number): Coordinator;
  snapshots(): CoordinatorSnapshot[];
  /** The level's current limit (after borrowing) as the deciders hold it now. */
  currentLimits(snapshots: CoordinatorSnapshot[]): Map<string, number>;
  close(): void;
}

function exactDeciders(
  scenario: ConfigScenario,
  effective: EffectiveConfiguration,
  clock: FakeEventClock,
  adjustments: Omit<BorrowingAdjustment, "fairFraction">[],
  learned: LearnedLimitRun | null,
): Deciders {
  const coordinator = new EmbeddedCoordinator(learned?.initial(effective) ?? effective, {
    clock,
    onAdjust: ({ atMs, levels }) => {
      // The allocations a new learned limit runs are not the periodic ones this list shows.
      if (atMs <= scenario.durationMs && learned?.reconfiguring !== true) {
        adjustments.push({ atMs, levels });
      }
    },
  });
  learned?.drive(coordinator);
  return {
    forHolder: () => coordinator,
    snapshots: () => [coordinator.snapshot()],
    currentLimits: ([snapshot]) => new Map(snapshot!.levels.map((l) => [l.name, l.currentLimit])),
    close: () => coordinator.close(),
  };
}

function budgetDeciders(
  holders: HoldersScenario,
  effective: EffectiveConfiguration,
  clock: FakeEventClock,
): Deciders {
  const store = new DelayedBudgetStore(new MemoryBudgetStore(), clock, holders.storeLatencyMs);
  const all = Array.from({ length: holders.count }, (_, i) =>
    new BudgetHolder(effective, {
      store,
      clock,
      id: `holder-${i}`,
      periodMs: holders.periodMs,
      leaseMs: holders.leaseMs,
      drainMs: holders.drainMs,
      driftMarginMs: holders.driftMarginMs,
      storeTimeoutMs: Math.max(holders.periodMs, 4 * holders.storeLatencyMs),
      random: seededRandom(i + 1), // the periods' jitter, the same in every run
    }));
  return {
    forHolder: (i) => all[i]!,
    snapshots: () => all.map((h) => h.snapshot()),
    // A ledger holds its claims to the smallest limit its live holders computed: the largest
    // any holder knows bounds it.
    currentLimits: () => {
      const limits = new Map<string, number>();
      for (const h of all) {
        for (const b of h.budgets()) {
          limits.set(b.level, Math.max(limits.get(b.level) ?? 0, b.limit));
        }
      }
      return limits;
    },
    close: () => all.forEach((h) => h.close()),
  };
}

/** Runs the scenario's load on the exact coordinator (`holders` null) or on budget holders. */
async function runMode(
  scenario: ConfigScenario,
  effective: EffectiveConfiguration,
  options: ConfigRunOptions,
  holders: HoldersScenario | null,
): Promise<{ result: ConfigSimulationResult; mode: ModeResult }> {
  const clock = new FakeEventClock(0);
  const adjustments: Omit<BorrowingAdjustment, "fairFraction">[] = [];
  const upstream = scenario.upstream === null ? null : new WorkerPoolUpstream(scenario.upstream, {
    clock,
    random: seededRandom(31), // the work times' jitter, the same in every run
    durationMs: scenario.durationMs,
  });
  const learned = scenario.adaptive === null || holders !== null
    ? null
    : new LearnedLimitRun(scenario.adaptive, clock, () => upstream?.inFlight ?? null);
  const deciders = holders === null
    ? exactDeciders(scenario, effective, clock, adjustments, learned)
    : budgetDeciders(holders, effective, clock);
  const classifier = new Classifier(effective);
  const estimator = options.estimator ?? kubernetesEstimator();
  const describe = new RequestInfoResolver();
  const run = { progress: 0, outstanding: 0, loop: null as ScenarioError | null };

  const clients = scenario.clients.map((client, i) => {
    const user = normalizeUser(
      client.user === null ? undefined : { name: client.user, groups: client.groups },
    );
    const info = describe.describe(client.method, client.path, client.query);
    const c = classifier.classify(user, info);
    const work = client.work ?? estimator(estimateInputFor(c, info, client.method, client.query));
    const request = seatRequestFor(c, {
      work,
      waitLimitMs: scenario.queueWaitLimitMs,
      user,
      requestInfo: info,
    });
    const state: ClientState = { dispatched: 0, rejected: emptyRejections(), waits: [] };
    const coordinator = deciders.forHolder(client.holder);
    for (let t = 0; t < client.threads; t++) {
      startThread(client, `clients[${i}]`, () => coordinator.acquire(request), state);
    }
    return { name: client.name, classification: c, state };
  });

  function startThread(
    client: ConfigScenarioClient,
    path: string,
    acquire: () => Promise<Admission>,
    state: ClientState,
  ): void {
    let issued = 0;
    let lastIssueMs = -1;
    const next = (): void => {
      const now = clock.now();
      if (now >= scenario.durationMs) return;
      if (client.stopMs !== null && now >= client.stopMs) return;
      if (client.calls !== null && issued >= client.calls) return;
      if (now === lastIssueMs && client.calls === null) {
        run.loop ??= new ScenarioError(
          path,
          `calls repeat at ${now} ms without time passing (a rejected or zero-length call ` +
            `and thinkMs ${client.thinkMs}); give thinkMs > 0`,
        );
        return;
      }
      lastIssueMs = now;
      issued++;
      run.outstanding++;
      acquire().then((a) => {
        run.progress++;
        if (!a.admitted) {
          state.rejected[a.reason as RejectReason]++;
          run.outstanding--;
          clock.setTimer(client.thinkMs, next);
          return;
        }
        state.dispatched++;
        state.waits.push(a.waitedMs);
        const finish = (executionMs: number): void => {
          a.seat.release({ executionMs });
          // What the call held the upstream for, never its wait in APF's queues; the demand
          // is every call issued and not finished, this one included.
          learned?.record({ latencyMs: executionMs, outcome: "ok", demand: run.outstanding });
          run.outstanding--;
          clock.setTimer(client.thinkMs, next);
        };
        if (upstream === null) clock.setTimer(client.execMs, () => finish(client.execMs));
        else upstream.submit(finish);
      });
    };
    clock.setTimer(client.startMs, next);
  }

  // Seats in use only change at a timer or in the promises it sets off: sampled after each
  // instant settles, they are exact, and constant until the next instant.
  const limited = effective.priorityLevels.filter((pl) => pl.type === "Limited");
  const use = new Map(
    limited.map((pl) => [pl.name, { peak: 0, seatMs: 0, now: 0, maxLimit: 0 }]),
  );
  let sampledAt = 0;
  const sample = (): void => {
    const now = Math.min(clock.now(), scenario.durationMs);
    for (const u of use.values()) u.seatMs += u.now * (now - sampledAt);
    sampledAt = now;
    for (const u of use.values()) u.now = 0;
    const snapshots = deciders.snapshots();
    for (const snapshot of snapshots) {
      for (const level of snapshot.levels) {
        const u = use.get(level.name);
        if (u !== undefined) u.now += level.queueSet.seatsInUse;
      }
    }
    const limits = deciders.currentLimits(snapshots);
    for (const [name, u] of use) {
      u.peak = Math.max(u.peak, u.now);
      u.maxLimit = Math.max(u.maxLimit, limits.get(name) ?? 0);
    }
  };

  let snapshots: CoordinatorSnapshot[];
  try {
    for (;;) {
      await settle(run);
      if (run.loop !== null) throw run.loop;
      sample();
      const at = clock.nextTimerAt();
      if (at === undefined || (at > scenario.durationMs && run.outstanding === 0)) break;
      clock.advanceTo(at);
    }
    snapshots = deciders.snapshots();
  } finally {
    deciders.close();
    upstream?.close();
    learned?.close();
  }
  const upstreamResult = upstream?.result();
  const adaptive = learned?.finish();

  const levelStats = new Map<string, { dispatched: number; rejected: RejectionCounts }>();
  for (const snapshot of snapshots) {
    for (const level of snapshot.levels) {
      const stats = levelStats.get(level.name) ??
        { dispatched: 0, rejected: emptyRejections() };
      stats.dispatched += level.queueSet.dispatched;
      for (const [reason, n] of Object.entries(level.queueSet.rejected)) {
        stats.rejected[reason as RejectReason] += n;
      }
      levelStats.set(level.name, stats);
    }
  }
  const clientResults = clients.map(({ name, classification: c, state }): ConfigClientResult => ({
    name,
    flowSchema: c.flowSchema.name,
    priorityLevel: c.priorityLevel.name,
    dispatched: state.dispatched,
    rejected: state.rejected,
    waitMs: summarize(state.waits),
  }));
  return {
    result: {
      name: scenario.name,
      serverConcurrencyLimit: effective.serverConcurrencyLimit,
      adjustments,
      levels: effective.priorityLevels.map((pl) => ({
        name: pl.name,
        ...(levelStats.get(pl.name) ?? { dispatched: 0, rejected: emptyRejections() }),
      })),
      clients: clientResults,
      ...(upstreamResult !== undefined && { upstream: upstreamResult }),
      ...(adaptive !== undefined && { adaptive }),
    },
    mode: {
      levels: limited.map((pl) => {
        const u = use.get(pl.name)!;
        return {
          name: pl.name,
          nominalLimit: pl.nominal,
          maxCurrentLimit: u.maxLimit,
          peakSeatsInUse: u.peak,
          meanSeatsInUse: Math.round((u.seatMs / scenario.durationMs) * 1000) / 1000,
        };
      }),
      clients: clientResults,
      ...(upstreamResult !== undefined && { upstream: upstreamResult }),
    },
  };
}

/** Lets the microtask queue run dry: admissions resolve and threads issue calls. */
async function settle(run: { progress: number }): Promise<void> {
  // An admission reaches its thread a few promise hops after the decision:
  // stop once several hops in a row made no progress.
  for (let idle = 0; idle < 8;) {
    const before = run.progress;
    await Promise.resolve();
    idle = run.progress === before ? idle + 1 : 0;
  }
}

function emptyRejections(): RejectionCounts {
  return { "queue-full": 0, "concurrency-limit": 0, "time-out": 0, cancelled: 0 };
}

/** Nearest-rank percentiles of the waits. */
function summarize(waits: number[]): WaitSummary {
  if (waits.length === 0) return { p50: 0, p99: 0, max: 0 };
  const sorted = Float64Array.from(waits).sort();
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return { p50: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1]! };
}
