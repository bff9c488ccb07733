/**
 * The data of `apf simulate`: a uniform scenario (`docs/semantics.md` §10.1) as read from
 * JSON, with every default filled in, and the result of running it.
 *
 * @module
 */

import type { QueueSetQueuing } from "../fairqueuing/types.ts";

/** The simulated priority level. */
export interface ScenarioPriorityLevel {
  /** `Exempt` levels never queue; `Limited` ones queue or reject. */
  type: "Limited" | "Exempt";
  /** Seats of the level (integer ≥ 0; irrelevant for `Exempt`). */
  concurrencyLimit: number;
  /** Queuing parameters, or `null` for a level that rejects instead of queuing. */
  queuing: QueueSetQueuing | null;
}

/** One client: a flow whose threads each make calls in a closed loop. */
export interface ScenarioClient {
  /** Name used in the output. */
  name: string;
  /** The flow hash, an unsigned 64-bit integer. */
  flowHash: bigint;
  /** Concurrent threads (integer ≥ 1). */
  threads: number;
  /** Calls per thread (integer ≥ 0). */
  calls: number;
  /** Execution time of each call in ms (≥ 0). */
  execMs: number;
  /** Pause between the end of a call and the next one in ms (`execMs + thinkMs ≥ 0`). */
  thinkMs: number;
  /** Seats held while executing (integer ≥ 1). */
  initialSeats: number;
  /** Seats held during the additional latency (integer ≥ 0). */
  finalSeats: number;
  /** How long the final seats linger after execution, in ms (≥ 0). */
  additionalLatencyMs: number;
  /** When true, the second half of the threads starts at `durationMs / 2` with half the calls. */
  split: boolean;
}

/** A uniform scenario with all defaults applied. */
export interface Scenario {
  /** Name echoed in the output. */
  name: string;
  /** The level under test. */
  priorityLevel: ScenarioPriorityLevel;
  /**
   * Queue wait limit in ms (Kubernetes ≤ 1.28 `RequestWaitLimit`: a waiting
   * request is rejected with `time-out` when a later request joins its queue
   * after the limit); `null` means no limit.
   */
  requestWaitLimitMs: number | null;
  /** Length of the evaluation in ms (> 0). */
  durationMs: number;
  /** The clients (at least one). */
  clients: ScenarioClient[];
}

/** Rejection counts of a client, by reason. */
export interface RejectionCounts {
  /** Rejected on arrival: no seat free and the chosen queue full. */
  "queue-full": number;
  /** Rejected on arrival by a level that does not queue. */
  "concurrency-limit": number;
  /** Waited longer than the wait limit. */
  "time-out": number;
  /** Cancelled while waiting. */
  cancelled: number;
}

/** Per-client outcome of a run. */
export interface ClientResult {
  /** The client's name. */
  name: string;
  /** Time-weighted average of executing initial seats per checkpoint interval. */
  averageSeats: number[];
  /** Calls that executed (over the whole run, to completion). */
  dispatched: number;
  /** Calls that did not execute, by reason. */
  rejected: RejectionCounts;
}

/** Time-weighted statistics of the level's seat demand (seats in use plus seats waiting). */
export interface SeatDemandSummary {
  /** Time-weighted average. */
  average: number;
  /** Time-weighted standard deviation. */
  stdDev: number;
  /** Highest value seen, rounded to an integer. */
  highWatermark: number;
}

/** The JSON printed by `apf simulate`. */
export interface SimulationResult {
  /** The scenario's name. */
  name: string;
  /** Checkpoint times in ms. */
  checkpointsMs: number[];
  /** One entry per client, in scenario order. */
  clients: ClientResult[];
  /** Seat demand over the evaluation (from 0 to `durationMs`). */
  seatDemand: SeatDemandSummary;
}
