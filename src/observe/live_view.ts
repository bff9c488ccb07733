/**
 * The data of the live dashboard (`GET /debug/api_priority_and_fairness/live`):
 * what an operator under overload asks, per priority level, computed from the
 * same readings as the dumps and metrics. A {@linkcode LiveView} samples its
 * source at most once per `intervalMs`, whoever asks and however often
 * (the snapshot with every request, and the metrics text for the wait
 * times), and keeps the last `historyMs` of samples for the charts: a page
 * that polls once a second costs one sample per second, and ten pages cost
 * the same.
 *
 * - Rates (dispatched, rejected by reason) are the differences of the queue
 *   sets' counters between two samples, per second.
 * - Wait times (p50, p99) are read from the
 *   `apiserver_flowcontrol_request_wait_duration_seconds` histogram of the
 *   requests that executed, over the last `waitWindowMs`, with linear
 *   interpolation inside a bucket, as Prometheus' `histogram_quantile` does.
 * - Top flows are a flow schema and a distinguisher (Kubernetes' flow,
 *   `docs/semantics.md` §4.2), by seats in use and by requests waiting; the
 *   flow schemas rejecting most come from the rejection counter, which has no
 *   distinguisher.
 * - A learned server concurrency limit (`serverConcurrencyLimit: "auto"`,
 *   `src/adaptive/gradient_controller.ts`), when the source has one: the
 *   controller's state as it is, and, for the chart of the learned limit
 *   against the seats in use, the seats in use summed over the limited
 *   levels (the exempt ones are outside any limit). A static limit adds
 *   nothing to the frame.
 *
 * @module
 */

import type { ControllerPhase } from "../adaptive/types.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import { systemClock } from "../fairqueuing/clock.ts";
import type { RejectReason, RequestSnapshot } from "../fairqueuing/types.ts";
import { type ParsedFamily, parseExposition } from "./_parse.ts";
import type {
  BudgetSnapshot,
  CoordinatorSnapshot,
  LearnedLimitSnapshot,
  PriorityLevelSnapshot,
} from "./types.ts";

/** The reasons a queue set rejects for, in the order the page shows them. */
export const LIVE_REJECT_REASONS: readonly RejectReason[] = [
  "queue-full",
  "concurrency-limit",
  "time-out",
  "cancelled",
];

/** One flow (a flow schema and a distinguisher) of a level, now. */
export interface LiveFlow {
  /** The FlowSchema that classified its requests. */
  flowSchema: string;
  /** Its distinguisher (`""` when the schema has none). */
  distinguisher: string;
  /** Seats its executing (and lingering) requests hold. */
  seatsInUse: number;
  /** Its requests executing. */
  executing: number;
  /** Its requests waiting in a queue. */
  waiting: number;
}

/** One flow schema's rejections per second over the last interval, by reason. */
export interface LiveRejectingSchema {
  /** The FlowSchema. */
  flowSchema: string;
  /** Rejections per second, all reasons. */
  perSecond: number;
  /** Rejections per second by reason. */
  byReason: Record<RejectReason, number>;
}

/** One queue of a level, for the occupancy strip. */
export interface LiveQueue {
  /** Its position. */
  index: number;
  /** Requests waiting. */
  waiting: number;
  /** Requests executing. */
  executing: number;
  /** Seats in use. */
  seatsInUse: number;
}

/** One priority level, now. */
export interface LiveLevel {
  /** The level's name. */
  name: string;
  /** `Exempt` or `Limited`. */
  type: "Exempt" | "Limited";
  /** True while a removed level drains. */
  quiescing: boolean;
  /** Seat limits: the current one, after borrowing, and what it comes from. */
  limits: {
    /** NominalCL. */
    nominal: number;
    /** MinCL: the nominal limit less what it may lend. */
    lower: number;
    /** MaxCL: the nominal limit plus what it may borrow. */
    upper: number;
    /** The current limit (after borrowing; on a budget holder, its capacity). */
    current: number;
    /**
     * Seats lent to other levels: nominal − current when positive (on a
     * budget holder, the level's limit over every holder, `budget.limit`).
     */
    lent: number;
    /** Seats borrowed from other levels: current − nominal when positive (see `lent`). */
    borrowed: number;
  };
  /** Seats held by executing and lingering requests. */
  seatsInUse: number;
  /** Requests executing. */
  executing: number;
  /** Requests waiting. */
  waiting: number;
  /** Seats the waiting requests ask for. */
  seatsWaiting: number;
  /** Requests dispatched per second over the last interval (`null` for the first sample). */
  dispatchedPerSecond: number | null;
  /** Requests rejected per second over the last interval, by reason (`null` for the first sample). */
  rejectedPerSecond: Record<RejectReason, number> | null;
  /** The Retry-After a rejection of this level answers now, in seconds, when known. */
  retryAfterSeconds: number | null;
  /** Wait time of the requests that executed over the last window, in seconds (`null`: none, or no metrics). */
  waitSeconds: { p50: number; p99: number; count: number } | null;
  /** Every queue (none on exempt and reject levels). */
  queues: LiveQueue[];
  /** The flows holding most seats, most first (at most `topFlows`). */
  topBySeats: LiveFlow[];
  /** The flows with most requests waiting, most first (at most `topFlows`). */
  topByWaiting: LiveFlow[];
  /** The flow schemas rejecting most over the last interval, most first (at most `topFlows`). */
  topRejecting: LiveRejectingSchema[];
  /** On a budget holder: its share of the level. */
  budget?: BudgetSnapshot;
}

/** A point of a level's history. */
export interface LivePoint {
  /** Wall-clock time, ms since the Unix epoch. */
  t: number;
  /** The current limit. */
  limit: number;
  /** Seats in use. */
  seatsInUse: number;
  /** Requests waiting. */
  waiting: number;
  /** Dispatched per second (0 for the first sample). */
  dispatched: number;
  /** Rejected per second, all reasons (0 for the first sample). */
  rejected: number;
}

/** A learned server concurrency limit, now (the gradient controller's state, JSON-safe). */
export interface LiveAdaptive {
  /** The ServerCL in force (while the minRTT is measured, the pinned one). */
  limit: number;
  /** The learned limit unrounded (while measuring, the one restored after). */
  estimate: number;
  /** What the controller is doing. */
  phase: ControllerPhase;
  /** The last minRTT, in ms (`null` before the first measurement ends). */
  minRttMs: number | null;
  /**
   * The latency percentile of the last sample window, in ms: `"+Inf"` after
   * a window of refusals, `null` before the first window.
   */
  sampleRttMs: number | "+Inf" | null;
  /** The gradient of the last sample window (`null` before the first). */
  gradient: number | null;
  /** Sample windows evaluated so far. */
  windows: number;
  /** minRTT measurements completed so far. */
  minRttMeasurements: number;
  /** The lowest limit it may learn (`null`: the source does not tell). */
  min: number | null;
  /** The highest limit it may learn (`null`: the source does not tell). */
  max: number | null;
  /** Seats in use summed over the limited levels. */
  seatsInUse: number;
}

/** A point of the learned limit's history. */
export interface LiveAdaptivePoint {
  /** Wall-clock time, ms since the Unix epoch. */
  t: number;
  /** The learned limit in force. */
  limit: number;
  /** Seats in use summed over the limited levels. */
  seatsInUse: number;
}

/** What the dashboard shows, at one instant. */
export interface LiveFrame {
  /** Wall-clock time of the sample, ms since the Unix epoch. */
  atMs: number;
  /** How far apart samples are, at least, in ms. */
  intervalMs: number;
  /** The server concurrency limit. */
  serverConcurrencyLimit: number;
  /** `fairProp` of the last borrowing allocation. */
  seatFairFraction: number;
  /** Every level, in matching order (see {@linkcode LiveViewOptions.levelOrder}). */
  levels: LiveLevel[];
  /** With `history`: each level's points over the last `historyMs`, oldest first. */
  history?: Record<string, LivePoint[]>;
  /** When a learned limit is in force: its state (absent with a static limit). */
  adaptive?: LiveAdaptive;
  /**
   * With `history`, when a learned limit is in force: its points over the
   * last `historyMs` (the samples that had one), oldest first.
   */
  adaptiveHistory?: LiveAdaptivePoint[];
}

/** What a live view reads: a snapshot with every request, and the metrics text if any. */
export interface LiveSource {
  /** The coordinator's state with every request, or `null` when it cannot tell. */
  snapshot(): CoordinatorSnapshot | null | Promise<CoordinatorSnapshot | null>;
  /** The Prometheus text, or `null` when there are no metrics here. */
  metrics(): string | null | Promise<string | null>;
  /**
   * The levels' names in the order requests are matched to them (the
   * smallest matching precedence of their flow schemas first); levels not
   * named follow by name. Without it: by name, the exempt level first.
   */
  levelOrder?(): readonly string[];
  /**
   * The learned server concurrency limit's state, or `null` with a static
   * limit; read after the snapshot. Without it: a static limit.
   */
  adaptive?():
    | LearnedLimitSnapshot
    | null
    | Promise<LearnedLimitSnapshot | null>;
}

/** Options of {@linkcode LiveView}. */
export interface LiveViewOptions {
  /** Shortest time between two samples, in ms (default 1,000). */
  intervalMs?: number;
  /** How much history to keep, in ms (default 300,000: five minutes). */
  historyMs?: number;
  /** The window of the wait-time quantiles, in ms (default 10,000). */
  waitWindowMs?: number;
  /** How many flows to list per level and list (default 5). */
  topFlows?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
}

interface Sample {
  /** Monotonic time. */
  at: number;
  /** Wall time. */
  wall: number;
  frame: LiveFrame;
  /** Cumulative counters by level. */
  counters: Map<string, { dispatched: number; rejected: Record<RejectReason, number> }>;
  /** Rejections by level and flow schema, by reason (from the metrics). */
  schemaRejections: Map<string, Map<string, Record<RejectReason, number>>>;
  /** Cumulative wait-time buckets of executed requests by level: upper bound → count. */
  waitBuckets: Map<string, Map<number, number>>;
}

const WAIT_FAMILY = "apiserver_flowcontrol_request_wait_duration_seconds";
const REJECTED_FAMILY = "apiserver_flowcontrol_rejected_requests_total";

function checkPositive(what: string, value: unknown): number {
  if (!(typeof value === "number" && value > 0 && value < Infinity)) {
    throw new RangeError(
      `Cannot create the live view: ${what} must be a number > 0, got ${String(value)}`,
    );
  }
  return value;
}

/** Samples a source for the dashboard, at most once per interval, with a short history. */
export class LiveView {
  #clock: Clock;
  #intervalMs: number;
  #historyMs: number;
  #waitWindowMs: number;
  #top: number;
  #samples: Sample[] = [];
  #pending: Promise<Sample | null> | null = null;
  /** Samples taken, ever (a measure of the cost). */
  samplesTaken = 0;

  /**
   * A view, empty until its first frame.
   *
   * @throws {RangeError} for a number out of range.
   */
  constructor(options: LiveViewOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#intervalMs = checkPositive("intervalMs", options.intervalMs ?? 1_000);
    this.#historyMs = checkPositive("historyMs", options.historyMs ?? 300_000);
    this.#waitWindowMs = checkPositive("waitWindowMs", options.waitWindowMs ?? 10_000);
    const top = options.topFlows ?? 5;
    if (!Number.isInteger(top) || top < 1) {
      throw new RangeError(
        `Cannot create the live view: topFlows must be an integer >= 1, got ${String(top)}`,
      );
    }
    this.#top = top;
  }

  /**
   * The frame now: the last sample when it is younger than the interval,
   * else a new one of `source`. `null` when the source cannot tell.
   */
  async frame(source: LiveSource, options: { history?: boolean } = {}): Promise<LiveFrame | null> {
    const last = this.#samples.at(-1);
    // A poll about one interval after the last one takes a new sample: leave 10% for the timers' jitter.
    const fresh = last !== undefined && this.#clock.now() - last.at < this.#intervalMs * 0.9;
    const sample = fresh ? last : await this.#sampleOnce(source);
    if (sample === null || sample === undefined) return null;
    if (options.history !== true) return sample.frame;
    return {
      ...sample.frame,
      history: this.#history(),
      ...(sample.frame.adaptive !== undefined && { adaptiveHistory: this.#adaptiveHistory() }),
    };
  }

  /** One sample at a time, whoever asks meanwhile. */
  #sampleOnce(source: LiveSource): Promise<Sample | null> {
    this.#pending ??= this.#sample(source).finally(() => this.#pending = null);
    return this.#pending;
  }

  async #sample(source: LiveSource): Promise<Sample | null> {
    const [snapshot, text] = await Promise.all([source.snapshot(), source.metrics()]);
    if (snapshot === null) return null;
    // After the snapshot: an `apf()` middleware creates its learned limit with its coordinator.
    const learned = (await source.adaptive?.()) ?? null;
    this.samplesTaken++;
    const at = this.#clock.now();
    const families = text === null ? null : parseExposition(text);
    const previous = this.#samples.at(-1) ?? null;
    const sample = this.#build(snapshot, families, at, previous, source.levelOrder?.() ?? []);
    if (learned !== null) sample.frame.adaptive = liveAdaptive(learned, sample.frame.levels);
    this.#samples.push(sample);
    while (this.#samples.length > 0 && at - this.#samples[0]!.at > this.#historyMs) {
      this.#samples.shift();
    }
    return sample;
  }

  #build(
    snapshot: CoordinatorSnapshot,
    families: Map<string, ParsedFamily> | null,
    at: number,
    previous: Sample | null,
    order: readonly string[],
  ): Sample {
    const counters = new Map<
      string,
      { dispatched: number; rejected: Record<RejectReason, number> }
    >();
    const schemaRejections = rejectionsBySchema(families);
    const waitBuckets = executedWaitBuckets(families);
    // The wait window's start: the oldest sample still inside it (or the first one).
    const windowStart = this.#samples.find((s) => at - s.at <= this.#waitWindowMs) ?? null;
    const seconds = previous === null ? 0 : (at - previous.at) / 1000;
    const levels = ordered(snapshot.levels, order).map((l): LiveLevel => {
      const qs = l.queueSet;
      counters.set(l.name, { dispatched: qs.dispatched, rejected: { ...qs.rejected } });
      const before = previous?.counters.get(l.name);
      const rate = (now: number, then: number | undefined) =>
        then === undefined || seconds <= 0 ? 0 : Math.max(0, now - then) / seconds;
      const rejectedPerSecond = before === undefined || seconds <= 0 ? null : Object.fromEntries(
        LIVE_REJECT_REASONS.map((r) => [r, rate(qs.rejected[r], before.rejected[r])]),
      ) as Record<RejectReason, number>;
      const level: LiveLevel = {
        name: l.name,
        type: l.type,
        quiescing: l.quiescing,
        limits: {
          nominal: l.nominalLimit,
          lower: l.lowerLimit,
          upper: l.upperLimit,
          current: l.currentLimit,
          // On a budget holder the queue set's limit is its share: the level's is in the budget.
          lent: Math.max(0, l.nominalLimit - (l.budget?.limit ?? l.currentLimit)),
          borrowed: Math.max(0, (l.budget?.limit ?? l.currentLimit) - l.nominalLimit),
        },
        seatsInUse: qs.seatsInUse,
        executing: qs.executingRequests,
        waiting: qs.waitingRequests,
        seatsWaiting: qs.seatsWaiting,
        dispatchedPerSecond: before === undefined || seconds <= 0
          ? null
          : rate(qs.dispatched, before.dispatched),
        rejectedPerSecond,
        retryAfterSeconds: l.retryAfterSeconds ?? null,
        waitSeconds: waitQuantiles(
          waitBuckets.get(l.name),
          windowStart?.waitBuckets.get(l.name),
        ),
        queues: qs.queues.map((q) => ({
          index: q.index,
          waiting: q.waitingRequests,
          executing: q.executingRequests,
          seatsInUse: q.seatsInUse,
        })),
        ...this.#flows(l),
        topRejecting: this.#rejecting(
          schemaRejections.get(l.name),
          previous?.schemaRejections.get(l.name),
          seconds,
        ),
        ...(l.budget !== undefined && { budget: { ...l.budget } }),
      };
      return level;
    });
    const frame: LiveFrame = {
      atMs: snapshot.wallClockMs,
      intervalMs: this.#intervalMs,
      serverConcurrencyLimit: snapshot.serverConcurrencyLimit,
      seatFairFraction: snapshot.seatFairFraction,
      levels,
    };
    return { at, wall: snapshot.wallClockMs, frame, counters, schemaRejections, waitBuckets };
  }

  #flows(level: PriorityLevelSnapshot): Pick<LiveLevel, "topBySeats" | "topByWaiting"> {
    // Under overload a level holds thousands of requests, most of them their own flow: one
    // pass, maps by schema then distinguisher (no key string per request), and a top-k
    // selection instead of sorting every flow (bench/dashboard_bench.ts).
    const bySchema = new Map<string, Map<string, LiveFlow>>();
    const all: LiveFlow[] = [];
    const count = (r: RequestSnapshot) => {
      const { flowSchema, distinguisher } = r.descriptor;
      let flows = bySchema.get(flowSchema);
      if (flows === undefined) bySchema.set(flowSchema, flows = new Map());
      let flow = flows.get(distinguisher);
      if (flow === undefined) {
        flow = { flowSchema, distinguisher, seatsInUse: 0, executing: 0, waiting: 0 };
        flows.set(distinguisher, flow);
        all.push(flow);
      }
      if (r.startMs === null) {
        flow.waiting++;
      } else {
        flow.executing++;
        flow.seatsInUse += r.initialSeats;
      }
    };
    for (const q of level.queueSet.queues) for (const r of q.requests ?? []) count(r);
    for (const r of level.queueSet.unqueuedRequests ?? []) count(r);
    return {
      topBySeats: topFlows(all, (f) => f.seatsInUse, this.#top),
      topByWaiting: topFlows(all, (f) => f.waiting, this.#top),
    };
  }

  #rejecting(
    now: Map<string, Record<RejectReason, number>> | undefined,
    then: Map<string, Record<RejectReason, number>> | undefined,
    seconds: number,
  ): LiveRejectingSchema[] {
    if (now === undefined || then === undefined || seconds <= 0) return [];
    const list: LiveRejectingSchema[] = [];
    for (const [flowSchema, counts] of now) {
      const before = then.get(flowSchema);
      const byReason = Object.fromEntries(
        LIVE_REJECT_REASONS.map((r) => [
          r,
          Math.max(0, counts[r] - (before?.[r] ?? 0)) / seconds,
        ]),
      ) as Record<RejectReason, number>;
      const perSecond = LIVE_REJECT_REASONS.reduce((sum, r) => sum + byReason[r], 0);
      if (perSecond > 0) list.push({ flowSchema, perSecond, byReason });
    }
    return list.sort((a, b) => b.perSecond - a.perSecond || byName(a, b)).slice(0, this.#top);
  }

  #adaptiveHistory(): LiveAdaptivePoint[] {
    return this.#samples.flatMap(({ wall, frame: { adaptive } }) =>
      adaptive === undefined
        ? []
        : [{ t: wall, limit: adaptive.limit, seatsInUse: adaptive.seatsInUse }]
    );
  }

  #history(): Record<string, LivePoint[]> {
    const history: Record<string, LivePoint[]> = {};
    for (const s of this.#samples) {
      for (const l of s.frame.levels) {
        (history[l.name] ??= []).push({
          t: s.wall,
          limit: l.limits.current,
          seatsInUse: l.seatsInUse,
          waiting: l.waiting,
          dispatched: l.dispatchedPerSecond ?? 0,
          rejected: l.rejectedPerSecond === null
            ? 0
            : LIVE_REJECT_REASONS.reduce((sum, r) => sum + l.rejectedPerSecond![r], 0),
        });
      }
    }
    return history;
  }
}

/** The learned limit's state as the frame carries it, with the seats in use of `levels`. */
function liveAdaptive(state: LearnedLimitSnapshot, levels: readonly LiveLevel[]): LiveAdaptive {
  return {
    limit: state.limit,
    estimate: state.estimate,
    phase: state.phase,
    minRttMs: state.minRttMs,
    // JSON has no Infinity (it would print null, "no window yet"): Prometheus' spelling.
    sampleRttMs: state.sampleRttMs === Infinity ? "+Inf" : state.sampleRttMs,
    gradient: state.gradient,
    windows: state.windows,
    minRttMeasurements: state.minRttMeasurements,
    min: state.min ?? null,
    max: state.max ?? null,
    seatsInUse: levels.reduce((sum, l) => sum + (l.type === "Limited" ? l.seatsInUse : 0), 0),
  };
}

function byName(a: { flowSchema: string }, b: { flowSchema: string }): number {
  return a.flowSchema < b.flowSchema ? -1 : a.flowSchema > b.flowSchema ? 1 : 0;
}

/**
 * The `k` flows with most `by` (above 0), most first; ties by flow schema,
 * then distinguisher. O(flows × k): k is small, the flows may be thousands.
 */
export function topFlows(
  flows: readonly LiveFlow[],
  by: (f: LiveFlow) => number,
  k: number,
): LiveFlow[] {
  const before = (a: LiveFlow, b: LiveFlow) =>
    by(a) - by(b) > 0 ||
    (by(a) === by(b) && (byName(a, b) < 0 ||
      (a.flowSchema === b.flowSchema && a.distinguisher < b.distinguisher)));
  const best: LiveFlow[] = [];
  for (const f of flows) {
    if (!(by(f) > 0)) continue;
    if (best.length === k && !before(f, best[k - 1]!)) continue;
    let i = Math.min(best.length, k - 1);
    if (best.length < k) best.push(f);
    while (i > 0 && before(f, best[i - 1]!)) {
      best[i] = best[i - 1]!;
      i--;
    }
    best[i] = f;
  }
  return best;
}

function emptyReasons(): Record<RejectReason, number> {
  return { "queue-full": 0, "concurrency-limit": 0, "time-out": 0, "cancelled": 0 };
}

/** Rejections counted by the metrics, by level and flow schema, by reason. */
function rejectionsBySchema(
  families: Map<string, ParsedFamily> | null,
): Map<string, Map<string, Record<RejectReason, number>>> {
  const byLevel = new Map<string, Map<string, Record<RejectReason, number>>>();
  for (const s of families?.get(REJECTED_FAMILY)?.samples ?? []) {
    const { priority_level: level, flow_schema: schema, reason } = s.labels;
    if (level === undefined || schema === undefined) continue;
    if (!(LIVE_REJECT_REASONS as readonly string[]).includes(reason ?? "")) continue;
    let schemas = byLevel.get(level);
    if (schemas === undefined) byLevel.set(level, schemas = new Map());
    let counts = schemas.get(schema);
    if (counts === undefined) schemas.set(schema, counts = emptyReasons());
    counts[reason as RejectReason] += s.value;
  }
  return byLevel;
}

/** The wait-time buckets of the requests that executed, summed over flow schemas, by level. */
function executedWaitBuckets(
  families: Map<string, ParsedFamily> | null,
): Map<string, Map<number, number>> {
  const byLevel = new Map<string, Map<number, number>>();
  for (const s of families?.get(WAIT_FAMILY)?.samples ?? []) {
    if (s.name !== `${WAIT_FAMILY}_bucket` || s.labels.execute !== "true") continue;
    const level = s.labels.priority_level;
    const le = s.labels.le;
    if (level === undefined || le === undefined) continue;
    let buckets = byLevel.get(level);
    if (buckets === undefined) byLevel.set(level, buckets = new Map());
    const bound = le === "+Inf" ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + s.value);
  }
  return byLevel;
}

/**
 * p50 and p99 of the requests counted between `then` and `now` (cumulative
 * buckets), interpolating linearly inside a bucket; a quantile in the `+Inf`
 * bucket is the highest finite bound, as `histogram_quantile` answers.
 */
export function waitQuantiles(
  now: Map<number, number> | undefined,
  then: Map<number, number> | undefined,
): { p50: number; p99: number; count: number } | null {
  if (now === undefined) return null;
  const bounds = [...now.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => Math.max(0, now.get(b)! - (then?.get(b) ?? 0)));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return null;
  const quantile = (q: number): number => {
    const rank = q * total;
    for (let i = 0; i < bounds.length; i++) {
      if (counts[i]! >= rank) {
        const upper = bounds[i]!;
        const lower = i === 0 ? 0 : bounds[i - 1]!;
        if (upper === Infinity) return lower;
        const below = i === 0 ? 0 : counts[i - 1]!;
        const inBucket = counts[i]! - below;
        return inBucket <= 0 ? upper : lower + (upper - lower) * ((rank - below) / inBucket);
      }
    }
    return bounds.at(-2) ?? 0;
  };
  return { p50: quantile(0.5), p99: quantile(0.99), count: total };
}

/** `levels` in `order`; the others after them by name, an exempt one first. */
function ordered(
  levels: readonly PriorityLevelSnapshot[],
  order: readonly string[],
): PriorityLevelSnapshot[] {
  const rank = new Map(order.map((name, i) => [name, i]));
  const key = (l: PriorityLevelSnapshot) =>
    rank.get(l.name) ?? (l.type === "Exempt" ? -1 : order.length);
  return [...levels].sort((a, b) =>
    key(a) - key(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}
