/**
 * The `apiserver_flowcontrol_*` metrics a coordinator produces (Kubernetes:
 * `pkg/util/flowcontrol/metrics/metrics.go`; `docs/semantics.md` §9.2),
 * with Kubernetes' names, labels and buckets: request series recorded
 * through each level's queue-set observer, and limit, demand and virtual
 * time gauges read from a {@linkcode CoordinatorSnapshot} at scrape time
 * (so nothing on the request path updates them).
 *
 * @module
 */

import type { Gauge, Histogram } from "./metrics.ts";
import { PriorityLevelObserver, type RequestFamilies } from "./level_observer.ts";
import { Registry } from "./registry.ts";
import type { CoordinatorSnapshot, PriorityLevelSnapshot } from "./types.ts";

const PREFIX = "apiserver_flowcontrol_";
const PL = "priority_level";
const FS = "flow_schema";

/** Buckets of `request_wait_duration_seconds` and `request_execution_seconds`. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0,
  0.005,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  15,
  30,
]);
/** Buckets of `request_queue_length_after_enqueue`. */
export const QUEUE_LENGTH_BUCKETS: readonly number[] = Object.freeze([
  0,
  10,
  25,
  50,
  100,
  250,
  500,
  1000,
]);
/** Buckets of `work_estimated_seats` (Kubernetes ≥ 1.34). */
export const WORK_ESTIMATED_SEATS_BUCKETS: readonly number[] = Object.freeze([
  1,
  2,
  4,
  8,
  16,
  32,
  64,
  100,
]);

/** Options of {@linkcode FlowcontrolMetrics}. */
export interface FlowcontrolMetricsOptions {
  /**
   * The registry to create the metrics in (default: a new one).
   *
   * @internal The registry is this package's own Prometheus primitive.
   */
  registry?: Registry;
  /**
   * Called at every scrape for the snapshot the limit, demand and `current_r`
   * gauges are read from; the coordinator passes `() => coordinator.snapshot()`.
   * Without it, call {@linkcode FlowcontrolMetrics.collect} yourself.
   */
  snapshot?: () => CoordinatorSnapshot;
}

/** Per-level gauges read from a snapshot, with the field each one shows. */
const LEVEL_GAUGES: ReadonlyArray<[string, string, (pl: PriorityLevelSnapshot) => number]> = [
  [
    "nominal_limit_seats",
    "[BETA] Nominal number of execution seats configured for each priority level",
    (pl) => pl.nominalLimit,
  ],
  [
    "lower_limit_seats",
    "[ALPHA] Configured lower bound on number of execution seats available to each priority level",
    (pl) => pl.lowerLimit,
  ],
  [
    "upper_limit_seats",
    "[ALPHA] Configured upper bound on number of execution seats available to each priority level",
    (pl) => pl.upperLimit,
  ],
  [
    "current_limit_seats",
    "[ALPHA] current derived number of execution seats available to each priority level",
    (pl) => pl.currentLimit,
  ],
  [
    "demand_seats_high_watermark",
    "[ALPHA] High watermark, over last adjustment period, of demand_seats",
    (pl) => pl.demand.highWatermark,
  ],
  [
    "demand_seats_average",
    "[ALPHA] Time-weighted average, over last adjustment period, of demand_seats",
    (pl) => pl.demand.average,
  ],
  [
    "demand_seats_stdev",
    "[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats",
    (pl) => pl.demand.stdDev,
  ],
  ["demand_seats_smoothed", "[ALPHA] Smoothed seat demands", (pl) => pl.demand.smoothed],
  ["target_seats", "[ALPHA] Seat allocation targets", (pl) => pl.demand.target],
];

/**
 * The flow-control metrics of one coordinator.
 *
 * @example
 * ```ts
 * import { FlowcontrolMetrics } from "./mod.ts";
 * import { FakeEventClock, QueueSet } from "../fairqueuing/mod.ts";
 * const metrics = new FlowcontrolMetrics();
 * const qs = new QueueSet(
 *   { type: "Limited", concurrencyLimit: 1, queuing: null },
 *   { clock: new FakeEventClock(), observer: metrics.observerFor("workload-low") },
 * );
 * qs.startRequest({ descriptor: { flowSchema: "service-accounts", distinguisher: "" } });
 * metrics.expose().includes(
 *   'apiserver_flowcontrol_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"} 1',
 * ); // true
 * ```
 */
export class FlowcontrolMetrics {
  /**
   * The registry holding the metrics.
   *
   * @internal The registry is this package's own Prometheus primitive.
   */
  readonly registry: Registry;
  #families: RequestFamilies;
  #levelGauges: Gauge[];
  #currentR: Gauge;
  #fairFrac: Gauge;
  #observers = new Map<string, PriorityLevelObserver>();

  /**
   * Creates the metrics in `options.registry` (or a new registry).
   *
   * @throws {TypeError} when a metric of the same name is already registered there.
   */
  constructor(options: FlowcontrolMetricsOptions = {}) {
    const r = this.registry = options.registry ?? new Registry();
    const hist = (name: string, help: string, labels: string[], b: readonly number[]): Histogram =>
      r.histogram({ name: PREFIX + name, help, labelNames: labels, buckets: b });
    const gauge = (name: string, help: string, labels: string[]): Gauge =>
      r.gauge({ name: PREFIX + name, help, labelNames: labels });
    this.#families = {
      dispatched: r.counter({
        name: `${PREFIX}dispatched_requests_total`,
        help: "[BETA] Number of requests executed by API Priority and Fairness subsystem",
        labelNames: [PL, FS],
      }),
      rejected: r.counter({
        name: `${PREFIX}rejected_requests_total`,
        help: "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
        labelNames: [PL, FS, "reason"],
      }),
      inqueueRequests: gauge(
        "current_inqueue_requests",
        "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
        [PL, FS],
      ),
      inqueueSeats: gauge(
        "current_inqueue_seats",
        "[ALPHA] Number of seats currently pending in queues of the API Priority and Fairness subsystem",
        [PL, FS],
      ),
      executingRequests: gauge(
        "current_executing_requests",
        "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
        [PL, FS],
      ),
      executingSeats: gauge(
        "current_executing_seats",
        "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
        [PL, FS],
      ),
      queueLength: hist(
        "request_queue_length_after_enqueue",
        "[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued",
        [PL, FS],
        QUEUE_LENGTH_BUCKETS,
      ),
      waitDuration: hist(
        "request_wait_duration_seconds",
        "[BETA] Length of time a request spent waiting in its queue",
        [PL, FS, "execute"],
        REQUEST_DURATION_BUCKETS,
      ),
      executionDuration: hist(
        "request_execution_seconds",
        "[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
        [PL, FS, "type"],
        REQUEST_DURATION_BUCKETS,
      ),
      workSeats: hist(
        "work_estimated_seats",
        "[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
        [PL, FS],
        WORK_ESTIMATED_SEATS_BUCKETS,
      ),
    };
    this.#levelGauges = LEVEL_GAUGES.map(([name, help]) => gauge(name, help, [PL]));
    this.#currentR = gauge("current_r", "[ALPHA] R(time of last change)", [PL]);
    this.#fairFrac = gauge(
      "seat_fair_frac",
      "[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that can use it",
      [],
    );
    const provider = options.snapshot;
    if (provider !== undefined) {
      if (typeof provider !== "function") {
        throw new TypeError(
          `Cannot create FlowcontrolMetrics: snapshot must be a function, got ${typeof provider}`,
        );
      }
      r.onCollect(() => this.collect(provider()));
    }
  }

  /**
   * The queue-set observer of `priorityLevel`, created once per level and
   * shared by later calls (which update its `exempt` flag). Exempt levels
   * observe no wait times (`docs/semantics.md` §2.7).
   *
   * @internal Called by the coordinator for each level.
   */
  observerFor(priorityLevel: string, options: { exempt?: boolean } = {}): PriorityLevelObserver {
    if (typeof priorityLevel !== "string") {
      throw new TypeError(
        `Cannot create an observer: priorityLevel must be a string, got ${typeof priorityLevel}`,
      );
    }
    let o = this.#observers.get(priorityLevel);
    if (o === undefined) {
      o = new PriorityLevelObserver(this.#families, priorityLevel, options.exempt === true);
      this.#observers.set(priorityLevel, o);
    } else if (options.exempt !== undefined) {
      o.exempt = options.exempt;
    }
    return o;
  }

  /**
   * Sets the snapshot gauges (limits, demand, targets, `current_r`,
   * `seat_fair_frac`) from `snapshot`; levels absent from it lose their
   * series. Called at every scrape when a snapshot provider was given.
   */
  collect(snapshot: CoordinatorSnapshot): void {
    for (const g of this.#levelGauges) g.reset();
    this.#currentR.reset();
    LEVEL_GAUGES.forEach(([, , read], i) => {
      const g = this.#levelGauges[i]!;
      for (const pl of snapshot.levels) g.labels(pl.name).set(read(pl));
    });
    for (const pl of snapshot.levels) {
      // R as the last operation left it; an exempt level's set keeps R too (0 unless it drains
      // queues from a limited past), as Kubernetes' does.
      this.#currentR.labels(pl.name).set(pl.queueSet.lastChangeR);
    }
    this.#fairFrac.labels().set(snapshot.seatFairFraction);
  }

  /** Renders the registry (running the snapshot provider first, when given). */
  expose(): string {
    return this.registry.expose();
  }
}
