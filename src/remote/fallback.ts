/**
 * What the client kit answers when the coordinator cannot be reached
 * (`docs/semantics.md` §11.1, "Failure policies"): the `local` policy's embedded
 * coordinator, sized at a fraction of the server's limit, whose waiting
 * requests move to the coordinator once it is reached again, and the `open`
 * and `closed` answers.
 *
 * @module
 */

import { type EffectiveConfiguration, effectiveConfiguration } from "../config/effective.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import {
  DEFAULT_QUEUE_WAIT_LIMIT_MS,
  MAX_QUEUE_WAIT_LIMIT_MS,
} from "../coordinator/seat_request.ts";
import { OpenSeat } from "./remote_seat.ts";
import type { Admission, SeatRequest } from "../coordinator/types.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";

/** What a client does when the coordinator cannot be reached. */
export type UnreachablePolicy = "local" | "open" | "closed";

/** The `unavailable` rejection of the `closed` policy (and of a closed client). */
export function unavailable(): Admission {
  return { admitted: false, reason: "unavailable", retryAfterSeconds: 1 };
}

/** `config` with its server concurrency limit scaled by `fraction` (at least 1 seat). */
export function scaled(config: EffectiveConfiguration, fraction: number): EffectiveConfiguration {
  return effectiveConfiguration({
    flowSchemas: config.flowSchemas.map((fs) => fs.object),
    priorityLevels: config.priorityLevels.map((pl) => pl.object),
  }, { serverConcurrencyLimit: Math.max(1, Math.ceil(config.serverConcurrencyLimit * fraction)) });
}

/** A request answered by the `local` policy, perhaps waiting in the local limiter. */
interface Waiter {
  signal: AbortSignal | undefined;
  /** Aborted to take it out of the local queue when the coordinator is reached again. */
  moving: AbortController;
  moved: boolean;
}

/** Answers requests by policy; owns the `local` policy's embedded coordinator. */
export class Fallback {
  #policy: UnreachablePolicy;
  #fraction: number;
  #clock: Clock;
  #given: EffectiveConfiguration | null;
  #server: EffectiveConfiguration | null = null;
  #local: EmbeddedCoordinator | null = null;
  #waiting = new Set<Waiter>();

  constructor(
    policy: UnreachablePolicy,
    fraction: number,
    given: EffectiveConfiguration | null,
    clock: Clock,
  ) {
    this.#policy = policy;
    this.#fraction = fraction;
    this.#given = given;
    this.#clock = clock;
  }

  /** What it answers with. */
  get policy(): UnreachablePolicy {
    return this.#policy;
  }

  /** The coordinator sent a configuration: the local limiter follows it from now on. */
  serverConfiguration(config: EffectiveConfiguration): void {
    this.#server = config;
    if (this.#local === null) return;
    try {
      this.#local.configure(scaled(config, this.#fraction));
    } catch {
      // Keep the limiter that works.
    }
  }

  /**
   * Answers `request` by policy. `late` is true when the request already
   * waited its wait limit for the coordinator: the local limiter then admits
   * only at once, never queues.
   */
  answer(request: SeatRequest, signal: AbortSignal | undefined, late: boolean): Promise<Admission> {
    switch (this.#policy) {
      case "open":
        return Promise.resolve({
          admitted: true,
          seat: new OpenSeat(request.priorityLevel),
          waitedMs: 0,
        });
      case "closed":
        return Promise.resolve(unavailable());
      case "local": {
        const local = this.#localCoordinator();
        if (local === null) return Promise.resolve(unavailable());
        return local.acquire(
          late ? { ...request, waitLimitMs: 0 } : request,
          signal === undefined ? {} : { signal },
        );
      }
    }
  }

  /**
   * Answers `request` by policy, as {@linkcode Fallback.answer}; one that
   * waits in the local limiter when {@linkcode Fallback.handOver} is called
   * is taken out of it and handed to `retry` with what is left of its wait
   * limit, so that the local queue does not go on dispatching past the
   * shared limit once the coordinator is back.
   */
  answerUntilReachable(
    request: SeatRequest,
    signal: AbortSignal | undefined,
    retry: (request: SeatRequest, signal: AbortSignal | undefined) => Promise<Admission>,
  ): Promise<Admission> {
    if (this.#policy !== "local") return this.answer(request, signal, false);
    const waitLimitMs = Math.min(
      request.waitLimitMs ?? DEFAULT_QUEUE_WAIT_LIMIT_MS,
      MAX_QUEUE_WAIT_LIMIT_MS,
    );
    const waitEndsAt = this.#clock.now() + waitLimitMs;
    const w: Waiter = { signal, moving: new AbortController(), moved: false };
    this.#waiting.add(w);
    const mine = w.moving.signal;
    const combined = signal === undefined ? mine : AbortSignal.any([signal, mine]);
    return this.answer(request, combined, false).then((admission) => {
      this.#waiting.delete(w);
      if (!w.moved || admission.admitted || admission.reason !== "cancelled") return admission;
      const left = Math.max(0, waitEndsAt - this.#clock.now());
      return retry({ ...request, waitLimitMs: left }, signal);
    });
  }

  /** The coordinator is reached: what waits in the local limiter moves to it. */
  handOver(): void {
    for (const w of this.#waiting) {
      if (w.signal?.aborted === true) continue;
      w.moved = true;
      w.moving.abort();
    }
  }

  /** The local limiter's state, or `null` when it was never needed (or the policy is not `local`). */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null {
    return this.#local?.snapshot(options) ?? null;
  }

  /** Stops the local limiter (waiting requests get `unavailable`). */
  close(): void {
    this.#local?.close();
  }

  #localCoordinator(): EmbeddedCoordinator | null {
    if (this.#local !== null) return this.#local;
    const config = this.#server ?? this.#given;
    if (config === null) return null;
    this.#local = new EmbeddedCoordinator(scaled(config, this.#fraction), { clock: this.#clock });
    return this.#local;
  }
}
