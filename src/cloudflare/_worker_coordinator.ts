/**
 * The Worker side of the Cloudflare topology, without the platform: a
 * {@linkcode Coordinator} whose seats come from one Durable Object per
 * priority level. It is the client kit (`src/remote/seat_client.ts`:
 * deadlines, the policy, late releases, lease renewal) over the RPC
 * transport (`_worker_client.ts`), with the controller's configuration
 * (`_configuration_feed.ts`). An object that fails (`overloaded`, an
 * exception) leads to the policy, a stalled one to the deadline's answer,
 * never to a hang. `coordinator.ts` binds it to Durable Object namespaces.
 * Internal to the Cloudflare adapter.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";
import type { EffectiveConfiguration } from "../config/effective.ts";
import type { AcquireOptions, Admission, Coordinator, SeatRequest } from "../coordinator/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import type { UnreachablePolicy } from "../remote/fallback.ts";
import { SeatClient } from "../remote/seat_client.ts";
import { ConfigurationFeed, type ControllerRpc } from "./_configuration_feed.ts";
import type { Liveness } from "./_level_host.ts";
import { type LevelRpc, RpcTransport } from "./_worker_client.ts";

export type { ControllerRpc } from "./_configuration_feed.ts";

/** Options of the Worker-side coordinator. */
export interface WorkerCoordinatorOptions {
  /** What to answer when a level object cannot decide (default `"local"`). */
  policy?: UnreachablePolicy;
  /**
   * The `local` policy's limiter: an embedded coordinator in this isolate
   * with `fraction` (default 0.1) of the server limit, serving
   * `configuration` until the controller's arrives.
   */
  fallback?: { configuration?: EffectiveConfiguration; fraction?: number };
  /** Added to a request's queue wait limit to make its deadline, in ms (default 1,000). */
  deadlineMarginMs?: number;
  /** How old the controller's configuration may get before it is fetched again (default 10 s). */
  configurationRefreshMs?: number;
  /** How long the first requests wait for the controller's configuration, in ms (default 2,000). */
  readyTimeoutMs?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
}

/** Counters of the Worker-side coordinator. */
export interface WorkerCoordinatorStats {
  /** Acquires answered by the policy (object failed or too slow). */
  fallbacks: number;
  /** Calls to level objects, and fetches from the controller, that failed. */
  errors: number;
  /** Seats granted after their acquire had been answered: given back at once. */
  lateReleases: number;
  /** Held seats the level object no longer knew at renewal (lease expired, object restarted). */
  lost: number;
}

/** Seats from level objects over RPC, with the policy as a net. */
export class WorkerCoordinator implements Coordinator {
  /** Counters (a live object). */
  readonly stats: WorkerCoordinatorStats = { fallbacks: 0, errors: 0, lateReleases: 0, lost: 0 };
  #kit: SeatClient;
  #feed: ConfigurationFeed;

  /**
   * Seats from `level(name)`'s object; configuration from `controller`
   * (or none); `liveness(signal)` makes the pulse handed with each acquire.
   *
   * @throws {RangeError} for a number out of range; {TypeError} for another invalid option.
   */
  constructor(
    level: (name: string) => LevelRpc,
    controller: ControllerRpc | null,
    liveness: (signal: AbortSignal | undefined) => Liveness,
    options: WorkerCoordinatorOptions = {},
  ) {
    // workerd's clock stands still while a request computes: the Worker measures execution.
    this.#kit = new SeatClient(
      "Cannot create the coordinator",
      { ...options, measureExecution: true },
      this.stats,
      (events) => new RpcTransport(level, liveness, events, () => this.stats.errors++),
    );
    this.#feed = new ConfigurationFeed(controller, this.#kit, this.stats, options);
  }

  /** The controller's configuration, once fetched. */
  get configuration(): WireConfiguration | null {
    return this.#kit.configuration;
  }

  /** Calls `listener` with every new configuration; returns the unsubscriber. */
  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void {
    return this.#kit.onConfiguration(listener);
  }

  /**
   * Resolves once the controller's configuration is in, or after
   * `readyTimeoutMs` (default 2 s) without it: the middleware then
   * classifies with its local configuration. `apf()` waits for it before
   * the first requests of an isolate.
   */
  ready(): Promise<void> {
    return this.#feed.ready();
  }

  /**
   * Fetches the controller's configuration (at most one fetch at a time);
   * a failure keeps the one in force.
   */
  refreshConfiguration(): Promise<void> {
    return this.#feed.refresh();
  }

  /** Asks the level's object for a seat, answered by the wait limit plus the margin at the latest. */
  acquire(request: SeatRequest, options?: AcquireOptions): Promise<Admission> {
    this.#feed.refreshIfStale();
    return this.#kit.acquire(request, options);
  }

  /**
   * Answers waiting requests `unavailable` and stops the local limiter;
   * held seats stay with their objects (renewed) until released.
   */
  close(): void {
    this.#kit.close(false);
  }
}
