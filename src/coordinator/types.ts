/**
 * The coordinator's primitive: `acquire` a seat for a request,
 * then release it. The same shape in-process, over WebSocket and over
 * Durable Object RPC, so the request is plain serializable data and every
 * outcome is a value.
 *
 * @module
 */

import type { FlowHash, RejectReason, RequestDetails, WorkEstimate } from "../fairqueuing/types.ts";
import type { SampleOutcome } from "../adaptive/types.ts";

/** Why a request was not admitted: the queue set's reasons, or no coordinator to ask. */
export type AdmissionRejectReason = RejectReason | "unavailable";

/**
 * What a request asks the coordinator for: plain data (JSON-serializable),
 * so that it can cross a wire. Build it from a classification with
 * {@linkcode seatRequestFor}.
 */
export interface SeatRequest {
  /** The priority level. */
  priorityLevel: string;
  /** The FlowSchema that classified the request (for metrics and dumps). */
  flowSchema: string;
  /**
   * The flow hash as 32-bit halves; required for levels that queue with
   * more than one queue, `null` or absent otherwise.
   */
  flowHash?: FlowHash | null;
  /** The flow distinguisher (for dumps; default `""`). */
  distinguisher?: string;
  /** Seats and final-phase latency (default: one seat). */
  work?: WorkEstimate;
  /**
   * The longest the request may wait in a queue, in ms (`docs/semantics.md` §7.3; default
   * 15,000, capped at 60,000). See {@linkcode queueWaitLimitMs}.
   */
  waitLimitMs?: number;
  /** What `dump_requests` shows with `includeRequestDetails`. */
  details?: RequestDetails;
}

/** Options of {@linkcode Coordinator.acquire}. */
export interface AcquireOptions {
  /**
   * Aborting it while the request waits rejects it with `cancelled`. Or a
   * function returning it, called only if the request has to wait (reading
   * a served request's `signal` costs microseconds on Deno).
   */
  signal?: AbortSignal | (() => AbortSignal | undefined);
}

/** Options of {@linkcode Seat.release}. */
export interface ReleaseOptions {
  /**
   * Execution time to charge, in ms, instead of the time measured by the
   * coordinator's clock (for example when the handler ran elsewhere).
   */
  executionMs?: number;
  /**
   * How the work done on the seat ended, for a server concurrency limit
   * learned from latency (`serverConcurrencyLimit: "auto"`,
   * `docs/adaptive.md`): `"ok"` (served, whatever the status), `"error"`,
   * `"rejected"` (the upstream refused it for lack of capacity: a 503) or
   * `"timeout"`. Absent: `"ok"`, or what a seat of the learned limit was
   * told before (`SampledSeat.outcome`). It reaches the coordinator that
   * learns, wherever it runs (a coordinator server, a Cloudflare level
   * object); a seat of a static limit takes it and ignores it. Another value
   * is refused with a `TypeError`, and the seat stays held.
   */
  outcome?: SampleOutcome;
}

/**
 * A granted seat (or several, per the work estimate). Released exactly once:
 * `release()`, `initialized()` and disposal after the first are no-ops.
 */
export interface Seat {
  /** The priority level the seat belongs to. */
  readonly priorityLevel: string;
  /**
   * Gives the seats back; the execution time corrects virtual time, and
   * final seats linger for the additional latency (`docs/semantics.md` §4.7). Returns true
   * when this call released them.
   */
  release(options?: ReleaseOptions): boolean;
  /**
   * A long-running request (a watch, a stream) is past its initialization:
   * its seats go back now, as Kubernetes does after watch initialization
   * (`docs/semantics.md` §5.5); a later `release()` does nothing.
   */
  initialized(): void;
  /** Releases the seat (for `using`). */
  [Symbol.dispose](): void;
  /**
   * Whether work not started yet may still start on the seat: `false` once
   * the budget lease it was admitted on has lapsed (a process frozen past
   * its lease), when the other holders may have taken the share back.
   * Absent (always held) for a seat of a coordinator.
   */
  stillHeld?(): boolean;
}

/** An admitted request: its seat and how long it waited in a queue. */
export interface Admitted {
  /** Discriminant. */
  admitted: true;
  /** The seat, to release when the request is done. */
  seat: Seat;
  /** Time spent waiting in a queue, in ms (0 when dispatched at once). */
  waitedMs: number;
}

/** A rejected request: why, and when to come back (`docs/semantics.md` §7.4). */
export interface Rejected {
  /** Discriminant. */
  admitted: false;
  /** Why the request was not admitted. */
  reason: AdmissionRejectReason;
  /** The `Retry-After` value in seconds (1 to 32) from the level's drop tracker. */
  retryAfterSeconds: number;
}

/** The outcome of {@linkcode Coordinator.acquire}: a value, never an exception. */
export type Admission = Admitted | Rejected;

/**
 * Hands out seats of priority levels. Implemented in-process by
 * `EmbeddedCoordinator`; later by remote clients with the same contract.
 */
export interface Coordinator {
  /**
   * Asks for seats: resolves once the request is admitted or rejected
   * (at the latest when its queue wait limit passes). Rejection is a value;
   * the promise rejects only for a malformed request (a programming error).
   */
  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission>;
}
