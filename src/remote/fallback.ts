/**
 * What the remote client answers when the coordinator cannot be reached
 * (`docs/semantics.md` §11.1, "Failure policies"): the `local` policy's embedded
 * coordinator, sized at a fraction of the server's limit, and the `open`
 * and `closed` answers. Internal to the coordinator.
 *
 * @module
 */

import { type EffectiveConfiguration, effectiveConfiguration } from "../config/effective.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import { OpenSeat } from "./remote_seat.ts";
import type { Admission, SeatRequest } from "../coordinator/types.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import { effectiveFromWire as fromWire } from "../protocol/wire_configuration.ts";

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

/** Answers requests by policy; owns the `local` policy's embedded coordinator. */
export class Fallback {
  #policy: UnreachablePolicy;
  #fraction: number;
  #clock: Clock;
  #given: EffectiveConfiguration | null;
  #server: EffectiveConfiguration | null = null;
  #local: EmbeddedCoordinator | null = null;

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
  serverConfiguration(wire: WireConfiguration): void {
    const config = fromWire(wire);
    if (config === null) return;
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
