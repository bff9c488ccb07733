/**
 * The three debug dumps of Kubernetes' APF controller (`apf_controller_debug.go`,
 * `/debug/api_priority_and_fairness/dump_*`), rendered from a
 * {@linkcode CoordinatorSnapshot}: in Kubernetes' text format (rows of
 * `",\t"`-joined values through Go's tabwriter with minwidth 8, padding 1)
 * and as plain JSON-ready objects with the same columns in camelCase.
 *
 * ## A learned server concurrency limit
 *
 * Kubernetes' ServerCL is a flag; ours may be learned from latency
 * (`serverConcurrencyLimit: "auto"`, `src/adaptive/gradient_controller.ts`).
 * When one is in force, `dump_priority_levels` ends with one more line,
 * after Kubernetes' table, which stays byte for byte as it is. The line
 * starts with `#`, which no row does (a level's name is a DNS subdomain
 * name), so that a parser of the table can stop at it or skip it:
 *
 * ```text
 * # serverConcurrencyLimit: learned 13 (phase sampling, estimate 13.42, minRTT 50ms, sampleRTT 61.2ms, gradient 1.02, bounds 3..1000)
 * ```
 *
 * - `learned`: the ServerCL in force, which the table's levels share (while
 *   the minRTT is measured, the pinned one);
 * - `phase`: `warming-up`, `measuring-min-rtt` or `sampling`;
 * - `estimate`: the learned limit unrounded, to two decimals at most (while
 *   measuring, the one restored after);
 * - `minRTT`, `sampleRTT`: Go durations to the microsecond, `none` before the
 *   first; `sampleRTT +Inf` after a window of refusals;
 * - `gradient`: two decimals, `none` before the first sample window;
 * - `bounds MIN..MAX`: the range the limit is learned in, when the source
 *   tells it (else the item is left out).
 *
 * The JSON form (`dumpPriorityLevelsJson`) stays Kubernetes' rows only: the
 * learned limit's state is in the live dashboard's data and in the
 * `apf_adaptive_*` metrics (`docs/observing.md`).
 *
 * @module
 */

import { formatSeatSeconds, SEAT_SECONDS_SCALE } from "../_shared/seat_seconds.ts";
import type { RequestSnapshot } from "../fairqueuing/types.ts";
import { formatGoDuration, formatRfc3339Nano, GO_ZERO_TIME, wallTimeNs } from "./_go_format.ts";
import { renderDumpRows } from "./_tabwriter.ts";
import type { BudgetSnapshot, CoordinatorSnapshot, LearnedLimitSnapshot } from "./types.ts";

/** One row of `dump_priority_levels`. */
export interface PriorityLevelDumpRow {
  /** `PriorityLevelName`. */
  priorityLevelName: string;
  /** `ActiveQueues`: queues with at least one waiting request. */
  activeQueues: number;
  /** `IsIdle`: nothing waits or executes. */
  isIdle: boolean;
  /** `IsQuiescing`: the level was removed and drains. */
  isQuiescing: boolean;
  /** `WaitingRequests`. */
  waitingRequests: number;
  /** `ExecutingRequests`. */
  executingRequests: number;
  /** `DispatchedRequests`: executions started, ever. */
  dispatchedRequests: number;
  /** `RejectedRequests`: queue-full + concurrency-limit + time-out, ever. */
  rejectedRequests: number;
  /** `TimedoutRequests`: always 0, as in Kubernetes. */
  timedoutRequests: number;
  /** `CancelledRequests`: requests cancelled while waiting, ever. */
  cancelledRequests: number;
  /** On a budget holder: its share of the level, beside the level's limit. */
  budget?: BudgetSnapshot;
}

/** One row of `dump_queues`. */
export interface QueueDumpRow {
  /** `PriorityLevelName`. */
  priorityLevelName: string;
  /** `Index`. */
  index: number;
  /** `PendingRequests`: waiting requests. */
  pendingRequests: number;
  /** `ExecutingRequests`. */
  executingRequests: number;
  /** `SeatsInUse`, lingering final seats included. */
  seatsInUse: number;
  /** `NextDispatchR`, in seat-seconds (text: `0.00300000ss`). */
  nextDispatchR: number;
  /** `InitialSeatsSum` of the waiting requests. */
  initialSeatsSum: number;
  /** `MaxSeatsSum` of the waiting requests. */
  maxSeatsSum: number;
  /** `TotalWorkSum` of the waiting requests, in seat-seconds. */
  totalWorkSum: number;
}

/** The `includeRequestDetails` columns of a `dump_requests` row. */
export interface RequestDumpDetails {
  /** `UserName`. */
  userName: string;
  /** `Verb`. */
  verb: string;
  /** `APIPath`. */
  apiPath: string;
  /** `Namespace`. */
  namespace: string;
  /** `Name`. */
  name: string;
  /** `APIVersion`: `group/version`, or `version` for the core group. */
  apiVersion: string;
  /** `Resource`. */
  resource: string;
  /** `SubResource`. */
  subResource: string;
}

/** One row of `dump_requests`. */
export interface RequestDumpRow {
  /** `PriorityLevelName`. */
  priorityLevelName: string;
  /** `FlowSchemaName`. */
  flowSchemaName: string;
  /** `QueueIndex`, -1 for requests executing without a queue. */
  queueIndex: number;
  /** `RequestIndexInQueue`: position while waiting, -1 once executing. */
  requestIndexInQueue: number;
  /** `FlowDistingsher` (sic in Kubernetes). */
  flowDistinguisher: string;
  /** `ArriveTime`, RFC3339Nano in UTC. */
  arriveTime: string;
  /** `InitialSeats`. */
  initialSeats: number;
  /** `FinalSeats`. */
  finalSeats: number;
  /** `AdditionalLatency` in ms (text: a Go duration such as `1.5s`). */
  additionalLatencyMs: number;
  /** `StartTime`, RFC3339Nano in UTC, or `null` while waiting (text: `0001-01-01T00:00:00Z`). */
  startTime: string | null;
  /** With `includeRequestDetails`: who and what. */
  details?: RequestDumpDetails;
}

/** Options of {@linkcode dumpRequests} and {@linkcode dumpRequestsJson}. */
export interface DumpRequestsOptions {
  /** Add the user and request-info columns (Kubernetes' `?includeRequestDetails=1`). */
  includeRequestDetails?: boolean;
}

/** The `dump_priority_levels` rows, sorted by level name. */
export function dumpPriorityLevelsJson(snapshot: CoordinatorSnapshot): PriorityLevelDumpRow[] {
  const levels = [...snapshot.levels].sort((
    a,
    b,
  ) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return levels.map((pl) => {
    const qs = pl.queueSet;
    return {
      priorityLevelName: pl.name,
      activeQueues: qs.queues.filter((q) => q.waitingRequests > 0).length,
      isIdle: qs.isIdle,
      isQuiescing: pl.quiescing,
      waitingRequests: qs.waitingRequests,
      executingRequests: qs.executingRequests,
      dispatchedRequests: qs.dispatched,
      rejectedRequests: qs.rejected["queue-full"] + qs.rejected["concurrency-limit"] +
        qs.rejected["time-out"],
      timedoutRequests: 0,
      cancelledRequests: qs.rejected.cancelled,
      ...(pl.budget !== undefined && { budget: pl.budget }),
    };
  });
}

/** The `dump_queues` rows: every queue of every level (exempt and reject levels have none). */
export function dumpQueuesJson(snapshot: CoordinatorSnapshot): QueueDumpRow[] {
  return snapshot.levels.flatMap((pl) =>
    pl.queueSet.queues.map((q) => ({
      priorityLevelName: pl.name,
      index: q.index,
      pendingRequests: q.waitingRequests,
      executingRequests: q.executingRequests,
      seatsInUse: q.seatsInUse,
      nextDispatchR: q.nextDispatchR,
      initialSeatsSum: q.waitingInitialSeats,
      maxSeatsSum: q.waitingSeats,
      totalWorkSum: q.waitingWork,
    }))
  );
}

/**
 * The `dump_requests` rows: per level, for each queue its waiting requests
 * then its executing ones, then the requests executing without a queue.
 * The snapshot must have been taken with `includeRequests` (levels without
 * request lists contribute no rows).
 */
export function dumpRequestsJson(
  snapshot: CoordinatorSnapshot,
  options: DumpRequestsOptions = {},
): RequestDumpRow[] {
  const details = options.includeRequestDetails === true;
  const time = (t: number): string =>
    formatRfc3339Nano(wallTimeNs(snapshot.wallClockMs, snapshot.nowMs, t));
  const row = (pl: string, r: RequestSnapshot): RequestDumpRow => {
    const out: RequestDumpRow = {
      priorityLevelName: pl,
      flowSchemaName: r.descriptor.flowSchema,
      queueIndex: r.queueIndex,
      requestIndexInQueue: r.indexInQueue,
      flowDistinguisher: r.descriptor.distinguisher,
      arriveTime: time(r.arrivalMs),
      initialSeats: r.initialSeats,
      finalSeats: r.finalSeats,
      additionalLatencyMs: r.additionalLatencyMs,
      startTime: r.startMs === null ? null : time(r.startMs),
    };
    if (details) {
      const d = r.descriptor.details;
      out.details = {
        userName: d?.user ?? "",
        verb: d?.verb ?? "",
        apiPath: d?.path ?? "",
        namespace: d?.namespace ?? "",
        name: d?.name ?? "",
        apiVersion: d === undefined || d.apiGroup === ""
          ? d?.apiVersion ?? ""
          : `${d.apiGroup}/${d.apiVersion}`,
        resource: d?.resource ?? "",
        subResource: d?.subresource ?? "",
      };
    }
    return out;
  };
  const rows: RequestDumpRow[] = [];
  for (const pl of snapshot.levels) {
    for (const q of pl.queueSet.queues) {
      for (const r of q.requests ?? []) rows.push(row(pl.name, r));
    }
    for (const r of pl.queueSet.unqueuedRequests ?? []) rows.push(row(pl.name, r));
  }
  return rows;
}

const ss = (x: number): string => formatSeatSeconds(Math.round(x * SEAT_SECONDS_SCALE));

/** Options of {@linkcode dumpPriorityLevels}. */
export interface DumpPriorityLevelsOptions {
  /** The learned server concurrency limit, when one is in force: adds its line after the table. */
  learnedLimit?: LearnedLimitSnapshot | null;
}

/**
 * `dump_priority_levels` in Kubernetes' text format; with a learned limit,
 * its line after the table (see the module doc).
 *
 * @example
 * ```ts ignore
 * dumpPriorityLevels(coordinator.snapshot());
 * // PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ...
 * // catch-all,         0,            true,   false,       0,               ...
 * ```
 */
export function dumpPriorityLevels(
  snapshot: CoordinatorSnapshot,
  options: DumpPriorityLevelsOptions = {},
): string {
  const learned = options.learnedLimit;
  const table = priorityLevelsTable(snapshot);
  return learned === undefined || learned === null
    ? table
    : `${table}${learnedLimitLine(learned)}\n`;
}

/**
 * The line a learned limit adds to `dump_priority_levels` (without its line
 * feed): `# serverConcurrencyLimit: learned 13 (phase sampling, ...)`, as
 * the module doc describes it.
 */
export function learnedLimitLine(state: LearnedLimitSnapshot): string {
  const duration = (ms: number | null) =>
    ms === null ? "none" : ms === Infinity ? "+Inf" : formatGoDuration(Math.round(ms * 1e3) / 1e3);
  const items = [
    `phase ${state.phase}`,
    `estimate ${Number(state.estimate.toFixed(2))}`,
    `minRTT ${duration(state.minRttMs)}`,
    `sampleRTT ${duration(state.sampleRttMs)}`,
    `gradient ${state.gradient === null ? "none" : state.gradient.toFixed(2)}`,
  ];
  if (state.min !== undefined && state.max !== undefined) {
    items.push(`bounds ${state.min}..${state.max}`);
  }
  return `# serverConcurrencyLimit: learned ${state.limit} (${items.join(", ")})`;
}

function priorityLevelsTable(snapshot: CoordinatorSnapshot): string {
  const rows = dumpPriorityLevelsJson(snapshot);
  // On a budget holder, four more columns: the level's limit over every holder, and this
  // holder's share of it (Kubernetes' columns first, unchanged).
  const budgets = rows.some((r) => r.budget !== undefined);
  return renderDumpRows([
    // deno-fmt-ignore
    ["PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests", "DispatchedRequests", "RejectedRequests", "TimedoutRequests", "CancelledRequests",
      ...(budgets ? ["LevelLimit", "BudgetSeats", "BudgetClaim", "BudgetMode"] : [])],
    ...rows.map(({ budget, ...r }) => [
      ...Object.values(r),
      ...(!budgets
        ? []
        : budget === undefined
        ? ["", "", "", ""]
        : [budget.limit, budget.capacity, budget.claim, budget.mode]),
    ]),
  ]);
}

/** `dump_queues` in Kubernetes' text format. */
export function dumpQueues(snapshot: CoordinatorSnapshot): string {
  return renderDumpRows([
    // deno-fmt-ignore
    ["PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse", "NextDispatchR", "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum"],
    ...dumpQueuesJson(snapshot).map((r) => [
      r.priorityLevelName,
      r.index,
      r.pendingRequests,
      r.executingRequests,
      r.seatsInUse,
      ss(r.nextDispatchR),
      r.initialSeatsSum,
      r.maxSeatsSum,
      ss(r.totalWorkSum),
    ]),
  ]);
}

/** `dump_requests` in Kubernetes' text format (take the snapshot with `includeRequests`). */
export function dumpRequests(
  snapshot: CoordinatorSnapshot,
  options: DumpRequestsOptions = {},
): string {
  // deno-fmt-ignore
  const header = ["PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue", "FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency", "StartTime"];
  if (options.includeRequestDetails === true) {
    // deno-fmt-ignore
    header.push("UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource");
  }
  return renderDumpRows([
    header,
    ...dumpRequestsJson(snapshot, options).map((r) => {
      const cells: Array<string | number> = [
        r.priorityLevelName,
        r.flowSchemaName,
        r.queueIndex,
        r.requestIndexInQueue,
        r.flowDistinguisher,
        r.arriveTime,
        r.initialSeats,
        r.finalSeats,
        formatGoDuration(r.additionalLatencyMs),
        r.startTime ?? GO_ZERO_TIME,
      ];
      if (r.details !== undefined) cells.push(...Object.values(r.details));
      return cells;
    }),
  ]);
}
