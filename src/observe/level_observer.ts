/**
 * The queue-set observer of one priority level: turns enqueue, dispatch,
 * rejection, finish and release events into the per-flow-schema
 * `apiserver_flowcontrol_*` series (Kubernetes'
 * `pkg/util/flowcontrol/metrics/metrics.go`), with the wait-time rules of
 * Kubernetes' `Handle` in `apf_filter.go` (`docs/semantics.md` §2.7).
 *
 * @module
 */

import type { QueueSetObserver, QueueSetRequest, RejectReason } from "../fairqueuing/types.ts";
import type {
  Counter,
  CounterChild,
  Gauge,
  GaugeChild,
  Histogram,
  HistogramChild,
} from "./metrics.ts";

/** The families a level observer records into (created by `FlowcontrolMetrics`). */
export interface RequestFamilies {
  /** `dispatched_requests_total{priority_level,flow_schema}`. */
  dispatched: Counter;
  /** `rejected_requests_total{priority_level,flow_schema,reason}`. */
  rejected: Counter;
  /** `current_inqueue_requests{priority_level,flow_schema}`. */
  inqueueRequests: Gauge;
  /** `current_inqueue_seats{priority_level,flow_schema}`. */
  inqueueSeats: Gauge;
  /** `current_executing_requests{priority_level,flow_schema}`. */
  executingRequests: Gauge;
  /** `current_executing_seats{priority_level,flow_schema}`. */
  executingSeats: Gauge;
  /** `request_queue_length_after_enqueue{priority_level,flow_schema}`. */
  queueLength: Histogram;
  /** `request_wait_duration_seconds{priority_level,flow_schema,execute}`. */
  waitDuration: Histogram;
  /** `request_execution_seconds{priority_level,flow_schema,type}`. */
  executionDuration: Histogram;
  /** `work_estimated_seats{priority_level,flow_schema}`. */
  workSeats: Histogram;
}

/** The series of one (level, flow schema), resolved on first use. */
class FlowSeries {
  #f: RequestFamilies;
  #pl: string;
  #fs: string;
  #dispatched: CounterChild | null = null;
  #rejected: Partial<Record<RejectReason, CounterChild>> = {};
  #inqueue: GaugeChild | null = null;
  #inqueueSeats: GaugeChild | null = null;
  #executing: GaugeChild | null = null;
  #executingSeats: GaugeChild | null = null;
  #queueLength: HistogramChild | null = null;
  #waitTrue: HistogramChild | null = null;
  #waitFalse: HistogramChild | null = null;
  #execRegular: HistogramChild | null = null;
  #execWatch: HistogramChild | null = null;
  #work: HistogramChild | null = null;

  constructor(families: RequestFamilies, pl: string, fs: string) {
    this.#f = families;
    this.#pl = pl;
    this.#fs = fs;
  }
  get dispatched(): CounterChild {
    return this.#dispatched ??= this.#f.dispatched.labels(this.#pl, this.#fs);
  }
  rejected(reason: RejectReason): CounterChild {
    return this.#rejected[reason] ??= this.#f.rejected.labels(this.#pl, this.#fs, reason);
  }
  get inqueue(): GaugeChild {
    return this.#inqueue ??= this.#f.inqueueRequests.labels(this.#pl, this.#fs);
  }
  get inqueueSeats(): GaugeChild {
    return this.#inqueueSeats ??= this.#f.inqueueSeats.labels(this.#pl, this.#fs);
  }
  get executing(): GaugeChild {
    return this.#executing ??= this.#f.executingRequests.labels(this.#pl, this.#fs);
  }
  get executingSeats(): GaugeChild {
    return this.#executingSeats ??= this.#f.executingSeats.labels(this.#pl, this.#fs);
  }
  get queueLength(): HistogramChild {
    return this.#queueLength ??= this.#f.queueLength.labels(this.#pl, this.#fs);
  }
  wait(executed: boolean): HistogramChild {
    return executed
      ? (this.#waitTrue ??= this.#f.waitDuration.labels(this.#pl, this.#fs, "true"))
      : (this.#waitFalse ??= this.#f.waitDuration.labels(this.#pl, this.#fs, "false"));
  }
  execution(watch: boolean): HistogramChild {
    return watch
      ? (this.#execWatch ??= this.#f.executionDuration.labels(this.#pl, this.#fs, "watch"))
      : (this.#execRegular ??= this.#f.executionDuration.labels(this.#pl, this.#fs, "regular"));
  }
  get work(): HistogramChild {
    return this.#work ??= this.#f.workSeats.labels(this.#pl, this.#fs);
  }
}

const maxSeats = (r: QueueSetRequest): number =>
  r.initialSeats > r.finalSeats ? r.initialSeats : r.finalSeats;

/**
 * Records one priority level's request events. Get it from
 * `FlowcontrolMetrics.observerFor` and pass it as the level's
 * `QueueSetOptions.observer`. Per event it costs one cached lookup of the
 * flow schema's series (none when consecutive events share a schema).
 *
 * Wait time (`docs/semantics.md` §2.7): a non-exempt level observes every request's wait,
 * `execute="true"` when it was dispatched or had joined a queue (also when
 * it then timed out or was cancelled: Kubernetes' quirk), `execute="false"`
 * when rejected without queuing; an exempt level observes none. The work
 * estimate (`work_estimated_seats`, max of initial and final seats) is
 * observed once per request: when it joins a queue, else at its decision.
 */
export class PriorityLevelObserver implements QueueSetObserver {
  /** The level's name (the `priority_level` label). */
  readonly priorityLevel: string;
  /** Whether the level is exempt (no wait-time observations); may change with the configuration. */
  exempt: boolean;
  #families: RequestFamilies;
  #flows = new Map<string, FlowSeries>();
  #lastName: string | null = null;
  #last: FlowSeries | null = null;
  /**
   * Max seats counted into `current_inqueue_seats` for waiting requests
   * whose final seats exceed their initial ones: dispatch may cap the final
   * seats, so the value must be remembered to be taken back exactly.
   */
  #wideWaiting = new Map<QueueSetRequest, number>();

  /** Creates an observer (usually through `FlowcontrolMetrics.observerFor`). */
  constructor(families: RequestFamilies, priorityLevel: string, exempt: boolean) {
    this.#families = families;
    this.priorityLevel = priorityLevel;
    this.exempt = exempt;
  }

  #flow(r: QueueSetRequest): FlowSeries {
    const name = r.descriptor.flowSchema;
    if (name === this.#lastName) return this.#last!;
    let s = this.#flows.get(name);
    if (s === undefined) {
      s = new FlowSeries(this.#families, this.priorityLevel, name);
      this.#flows.set(name, s);
    }
    this.#lastName = name;
    this.#last = s;
    return s;
  }

  /** Takes a request that leaves its queue out of the in-queue gauges. */
  #leaveQueue(s: FlowSeries, r: QueueSetRequest): void {
    let seats = maxSeats(r);
    if (this.#wideWaiting.size !== 0) {
      const wide = this.#wideWaiting.get(r);
      if (wide !== undefined) {
        seats = wide;
        this.#wideWaiting.delete(r);
      }
    }
    s.inqueue.dec();
    s.inqueueSeats.dec(seats);
  }

  /** A request joined a queue of length `queueLength` (itself included). */
  enqueued(request: QueueSetRequest, queueLength: number): void {
    const s = this.#flow(request);
    const seats = maxSeats(request);
    if (request.finalSeats > request.initialSeats) this.#wideWaiting.set(request, seats);
    s.inqueue.inc();
    s.inqueueSeats.inc(seats);
    s.queueLength.observe(queueLength);
    s.work.observe(seats);
  }

  /** A request started executing after waiting `waitedMs`. */
  dispatched(request: QueueSetRequest, waitedMs: number): void {
    const s = this.#flow(request);
    const seats = maxSeats(request);
    // A dispatched request keeps its queue (for the completion bookkeeping).
    if (request.queueIndex >= 0) this.#leaveQueue(s, request);
    else s.work.observe(seats);
    s.dispatched.inc();
    s.executing.inc();
    s.executingSeats.inc(seats);
    if (!this.exempt) s.wait(true).observe(waitedMs / 1000);
  }

  /** A request was rejected for `reason` after waiting `waitedMs`. */
  rejected(
    request: QueueSetRequest,
    reason: RejectReason,
    waitedMs: number,
    queued: boolean,
  ): void {
    const s = this.#flow(request);
    if (queued) this.#leaveQueue(s, request);
    else s.work.observe(maxSeats(request));
    s.rejected(reason).inc();
    // Kubernetes labels by `req != nil`: true for anything that was queued.
    if (!this.exempt) s.wait(queued).observe(waitedMs / 1000);
  }

  /** An executing request finished after `executionMs`. */
  finished(request: QueueSetRequest, executionMs: number): void {
    const s = this.#flow(request);
    s.executing.dec();
    s.execution(request.descriptor.details?.verb === "watch").observe(executionMs / 1000);
  }

  /** A request gave back `seats` (at finish, or when its final seats stop lingering). */
  released(request: QueueSetRequest, seats: number): void {
    this.#flow(request).executingSeats.dec(seats);
  }
}
