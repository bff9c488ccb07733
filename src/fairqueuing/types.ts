/**
 * The public shapes of a queue set: its configuration, what a request asks
 * for, the handle a request gets, and the snapshot used by dumps and tests.
 *
 * @module
 */

/**
 * How a limited queue set queues: the API's `QueuingConfiguration` with
 * every default applied (Kubernetes' `fairqueuing.QueuingConfig`).
 */
export interface QueueSetQueuing {
  /** Number of queues (integer ≥ 1). */
  queues: number;
  /** Requests a queue holds before arrivals may be rejected (integer ≥ 0). */
  queueLengthLimit: number;
  /** Queues dealt to each flow by shuffle sharding (1 ≤ handSize ≤ queues). */
  handSize: number;
}

/** Configuration of an exempt queue set: it never queues and never limits. */
export interface ExemptQueueSetConfig {
  /** Discriminant. */
  type: "Exempt";
  /**
   * The level's current limit (integer ≥ 0, default 0). Not enforced: kept
   * for snapshots and utilization ratios.
   */
  concurrencyLimit?: number;
}

/** Configuration of a limited queue set: seats, and queues or immediate rejection. */
export interface LimitedQueueSetConfig {
  /** Discriminant. */
  type: "Limited";
  /** Seats of the level: its current concurrency limit (integer ≥ 0). */
  concurrencyLimit: number;
  /** Queuing parameters, or `null` to reject instead of queuing. */
  queuing: QueueSetQueuing | null;
  /**
   * Kubernetes ≤ 1.28 `RequestWaitLimit`, in ms: when a request joins a
   * queue, requests that have waited in that queue longer than this are
   * rejected with `time-out` first. Lazy by design (a request can outstay
   * it while no one joins its queue); use the per-request
   * {@linkcode StartRequestInit.waitLimitMs} for a hard limit. `null` or
   * omitted: no such limit.
   */
  requestWaitLimitMs?: number | null;
}

/** Configuration of one priority level's queue set. */
export type QueueSetConfig = ExemptQueueSetConfig | LimitedQueueSetConfig;

/** Seats a request occupies and for how long (Kubernetes' `WorkEstimate`). */
export interface WorkEstimate {
  /** Seats held while executing (integer ≥ 1, default 1). */
  initialSeats?: number;
  /** Seats held for the additional latency after execution (integer ≥ 0, default 0). */
  finalSeats?: number;
  /** How long the final seats stay occupied after execution, in ms (≥ 0, default 0). */
  additionalLatencyMs?: number;
}

/** Why a request did not execute. */
export type RejectReason = "queue-full" | "concurrency-limit" | "time-out" | "cancelled";

/** The outcome of a request: it executes, or it is rejected for a reason. */
export type Decision = "execute" | RejectReason;

/**
 * A 64-bit flow hash as two unsigned 32-bit halves, `hi · 2^32 + lo`: the
 * form the classifier caches and the queue set deals from (no BigInt
 * arithmetic), and plain JSON on wires and in dumps.
 */
export interface FlowHash {
  /** High 32 bits. */
  hi: number;
  /** Low 32 bits. */
  lo: number;
}

/**
 * What a request looks like in `dump_requests` with `includeRequestDetails`
 * (`docs/semantics.md` §9.1).
 */
export interface RequestDetails {
  /** The user name. */
  user: string;
  /** The Kubernetes verb (or the lower-cased HTTP method of a non-resource request). */
  verb: string;
  /** The URL path. */
  path: string;
  /** The namespace, or `""`. */
  namespace: string;
  /** The object name, or `""`. */
  name: string;
  /** The API group, `""` for the core group. */
  apiGroup: string;
  /** The API version, or `""`. */
  apiVersion: string;
  /** The resource, or `""`. */
  resource: string;
  /** The subresource, or `""`. */
  subresource: string;
}

/** Who a request is, for dumps and per-schema metrics (Kubernetes' `fsName` and `flowDistinguisher`). */
export interface RequestDescriptor {
  /** The FlowSchema that classified the request. */
  flowSchema: string;
  /** The flow distinguisher (`""` when the schema has none). */
  distinguisher: string;
  /** Request details for `dump_requests`, when known. */
  details?: RequestDetails;
}

/** What a request asks a queue set for. */
export interface StartRequestInit {
  /**
   * The flow hash (unsigned 64-bit) choosing the request's queues by
   * shuffle sharding, as two 32-bit halves (the fast path) or a bigint.
   * Required by sets with more than one queue; ignored by the others.
   */
  hash?: FlowHash | bigint;
  /** Seats and additional latency (default: one seat, no additional latency). */
  work?: WorkEstimate;
  /**
   * Aborting it while the request waits rejects the request with `cancelled`.
   * Or a function returning it, called only if the request has to wait: on
   * Deno, merely reading a served request's `signal` costs microseconds (the
   * server starts tracking it), which requests that never wait need not pay.
   */
  signal?: AbortSignal | (() => AbortSignal | undefined);
  /**
   * The longest the request may wait, in ms; it is then rejected with
   * `time-out` (a request that cannot start at once with a limit of 0 is
   * rejected at once). Omitted: no limit.
   */
  waitLimitMs?: number;
  /**
   * Called once with the request when its decision is made, after the queue
   * set's state is consistent again (so it may start or finish requests).
   */
  onDecision?: (request: QueueSetRequest) => void;
  /** Who the request is, for dumps and the observer (default: an anonymous descriptor). */
  descriptor?: RequestDescriptor;
}

/** Options of {@linkcode QueueSetRequest.finish}. */
export interface FinishOptions {
  /**
   * Execution time to charge, in ms, instead of the time measured by the
   * queue set's clock (for example when the handler ran elsewhere).
   */
  executionMs?: number;
}

/** A request's handle: its decision, and the way to give its seats back. */
export interface QueueSetRequest {
  /** `execute`, a rejection reason, or `null` while the request waits. */
  readonly decision: Decision | null;
  /** True once the request finished executing (its seats may still linger) or was rejected. */
  readonly done: boolean;
  /** Seats held while executing. */
  readonly initialSeats: number;
  /** Seats held after execution (capped to the limit at dispatch, work preserved). */
  readonly finalSeats: number;
  /** How long the final seats stay occupied after execution, in ms. */
  readonly additionalLatencyMs: number;
  /** Clock time the request arrived at. */
  readonly arrivalMs: number;
  /** Clock time the request started executing, or NaN. */
  readonly startMs: number;
  /** Index of the request's queue, or -1 (not queued, or queue since removed). */
  readonly queueIndex: number;
  /** The descriptor given at start. */
  readonly descriptor: RequestDescriptor;
  /** Resolves with the decision (at once if already made). */
  wait(): Promise<Decision>;
  /**
   * Ends the request: an executing request gives back its seats (final seats
   * linger for the additional latency) and returns true; a waiting request
   * is rejected with `cancelled`; otherwise nothing happens. Returns false
   * unless this call ended an execution, so seats are released exactly once.
   */
  finish(options?: FinishOptions): boolean;
  /** Rejects a waiting request with `cancelled`; returns whether it was waiting. */
  cancel(): boolean;
  /** Same as {@linkcode QueueSetRequest.finish}, for `using`. */
  [Symbol.dispose](): void;
}

/** One request, for `dump_requests` (`docs/semantics.md` §9.1). */
export interface RequestSnapshot {
  /** Index of its queue, or -1 when it executes without one (exempt and reject levels). */
  queueIndex: number;
  /** Position in its queue while waiting (0 = head); -1 once executing. */
  indexInQueue: number;
  /** Clock time of arrival. */
  arrivalMs: number;
  /** Clock time execution started, or `null` while waiting. */
  startMs: number | null;
  /** Seats held while executing. */
  initialSeats: number;
  /** Seats held after execution. */
  finalSeats: number;
  /** How long final seats stay occupied, in ms. */
  additionalLatencyMs: number;
  /** Who it is. */
  descriptor: RequestDescriptor;
}

/** State of one queue, for dumps and tests. */
export interface QueueSnapshot {
  /** Position of the queue. */
  index: number;
  /** Requests waiting. */
  waitingRequests: number;
  /** Requests executing (not counting lingering ones). */
  executingRequests: number;
  /** Seats held by executing and lingering requests. */
  seatsInUse: number;
  /** Σ initial seats of the waiting requests. */
  waitingInitialSeats: number;
  /** Σ max seats of the waiting requests. */
  waitingSeats: number;
  /** Σ work of the waiting requests, in seat-seconds. */
  waitingWork: number;
  /** Virtual time of the queue's next dispatch, in seat-seconds. */
  nextDispatchR: number;
  /** With `includeRequests`: the waiting requests in order, then the executing ones. */
  requests?: RequestSnapshot[];
}

/** Options of {@linkcode QueueSet.snapshot}. */
export interface SnapshotOptions {
  /** Include every waiting and executing request (for `dump_requests`); default false. */
  includeRequests?: boolean;
}

/** State of a queue set, for dumps and tests. */
export interface QueueSetSnapshot {
  /** Clock time of the snapshot. */
  nowMs: number;
  /** `Exempt` or `Limited`. */
  type: "Exempt" | "Limited";
  /** The current concurrency limit. */
  concurrencyLimit: number;
  /** Queues wanted by the configuration: -1 exempt, 0 reject, else the count. */
  desiredQueues: number;
  /** True when no request waits or executes (lingering seats do not count). */
  isIdle: boolean;
  /** True once {@linkcode QueueSet.close} ran. */
  closed: boolean;
  /** Requests waiting. */
  waitingRequests: number;
  /** Requests executing (not counting lingering ones). */
  executingRequests: number;
  /** Seats held by executing and lingering requests. */
  seatsInUse: number;
  /** Σ max seats of the waiting requests. */
  seatsWaiting: number;
  /** Virtual time R at `nowMs`, in seat-seconds since the last rebase (reading it moves nothing). */
  currentR: number;
  /**
   * R as the set's last operation left it (Kubernetes' `current_r` gauge, "R(time of last
   * change)"): it stands still between operations, where {@linkcode currentR} moves on.
   */
  lastChangeR: number;
  /** Queue dispatched from last (the round-robin tie-break position). */
  robinIndex: number;
  /** Times virtual time was rebased to keep it exact. */
  rebases: number;
  /** Requests that started executing, ever. */
  dispatched: number;
  /** Requests rejected, ever, by reason. */
  rejected: Record<RejectReason, number>;
  /** Every queue, including surplus ones still draining. */
  queues: QueueSnapshot[];
  /** With `includeRequests`: requests executing without a queue (exempt and reject levels). */
  unqueuedRequests?: RequestSnapshot[];
}

/**
 * What happens to requests, for metrics (`docs/semantics.md` §9.2). Every method is
 * optional and called synchronously while the queue set is consistent; an
 * observer must not call back into the queue set, and an exception it
 * throws is reported through {@linkcode QueueSetOptions.onError}, never
 * propagated.
 */
export interface QueueSetObserver {
  /** A request joined a queue, which now holds `queueLength` waiting requests. */
  enqueued?(request: QueueSetRequest, queueLength: number): void;
  /** A request started executing after waiting `waitedMs` (0 when it never queued). */
  dispatched?(request: QueueSetRequest, waitedMs: number): void;
  /**
   * A request was rejected after waiting `waitedMs`; `queued` tells whether
   * it had been in a queue (it leaves it now).
   */
  rejected?(
    request: QueueSetRequest,
    reason: RejectReason,
    waitedMs: number,
    queued: boolean,
  ): void;
  /** An executing request finished after `executionMs` (its final seats may still linger). */
  finished?(request: QueueSetRequest, executionMs: number): void;
  /** A request gave back its `seats` (at finish, or when its lingering ends). */
  released?(request: QueueSetRequest, seats: number): void;
}
