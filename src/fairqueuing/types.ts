/**
 * The public shapes of a queue set: its configuration, what a request asks
 * for, the handle a request gets, and the snapshot used by dumps and tests.
 *
 * @module
 */

/** How a limited level queues (spec §1.2 `QueuingConfiguration`). */
export interface QueuingConfig {
  /** Number of queues (integer ≥ 1). */
  queues: number;
  /** Requests a queue holds before arrivals may be rejected (integer ≥ 0). */
  queueLengthLimit: number;
  /** Queues dealt to each flow by shuffle sharding (1 ≤ handSize ≤ queues). */
  handSize: number;
}

/** Configuration of one priority level's queue set. */
export interface QueueSetConfig {
  /** `Exempt` sets never queue and never limit; `Limited` (the default) ones do. */
  type?: "Limited" | "Exempt";
  /** Seats of the level: its current concurrency limit (integer ≥ 0). Required for `Limited`. */
  concurrencyLimit?: number;
  /** Queuing parameters, or `null` to reject instead of queuing. Required for `Limited`. */
  queuing?: QueuingConfig | null;
  /**
   * Kubernetes ≤ 1.27 `RequestWaitLimit`, in ms: when a request joins a
   * queue, requests that have waited in that queue longer than this are
   * rejected with `time-out` first. Lazy by design (a request can outstay
   * it while no one joins its queue); use the per-request
   * {@linkcode StartRequestInit.waitLimitMs} for a hard limit. `null` or
   * omitted: no such limit.
   */
  requestWaitLimitMs?: number | null;
}

/** Seats a request occupies and for how long (spec §4.2 `WorkEstimate`). */
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
 * A 64-bit flow hash as two unsigned 32-bit halves, `hi · 2^32 + lo` (what
 * `flowHashHalves` returns): the cheaper form, with no BigInt arithmetic.
 */
export interface HashHalves {
  /** High 32 bits. */
  hi: number;
  /** Low 32 bits. */
  lo: number;
}

/** What a request asks a queue set for. */
export interface StartRequestInit {
  /**
   * The flow hash (unsigned 64-bit) choosing the request's queues by
   * shuffle sharding, as a bigint or as two 32-bit halves; only read by
   * sets with more than one queue, where it defaults to 0.
   */
  hash?: bigint | HashHalves;
  /** Seats and additional latency (default: one seat, no additional latency). */
  work?: WorkEstimate;
  /** Aborting it while the request waits rejects the request with `cancelled`. */
  signal?: AbortSignal;
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
  /** Anything identifying the request for dumps (for example its flow schema and user). */
  descriptor?: unknown;
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
  readonly descriptor: unknown;
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
  /** Σ max seats of the waiting requests. */
  waitingSeats: number;
  /** Virtual time of the queue's next dispatch, in seat-seconds. */
  nextDispatchR: number;
}

/** State of a queue set, for dumps and tests. */
export interface QueueSetSnapshot {
  /** Requests waiting. */
  waitingRequests: number;
  /** Requests executing (not counting lingering ones). */
  executingRequests: number;
  /** Seats held by executing and lingering requests. */
  seatsInUse: number;
  /** Σ max seats of the waiting requests. */
  seatsWaiting: number;
  /** Virtual time R, in seat-seconds since the last rebase. */
  currentR: number;
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
}
