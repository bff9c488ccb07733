/**
 * The configuration a Worker classifies with: the controller's, fetched
 * over RPC at most one fetch at a time, again once older than the refresh
 * period, and handed to the client kit (which keeps it and tells the
 * listeners and the local limiter). A failed fetch keeps the one in force.
 * Internal to the Cloudflare adapter.
 *
 * @module
 */

import { type Clock, systemClock } from "../fairqueuing/clock.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import type { LevelUpdate } from "./_level_host.ts";

/** What the Worker calls on the controller. */
export interface ControllerRpc {
  levelUpdate(): Promise<LevelUpdate>;
}

/** Where the configuration goes: the client kit. */
export interface ConfigurationSink {
  /** The configuration in force, or `null`. */
  readonly configuration: WireConfiguration | null;
  /** Takes a newer configuration. */
  configure(configuration: WireConfiguration): void;
}

/** Options of a {@linkcode ConfigurationFeed}. */
export interface ConfigurationFeedOptions {
  /** How old the configuration may get before it is fetched again, in ms (default 10 s). */
  configurationRefreshMs?: number;
  /** How long `ready()` waits for the first configuration, in ms (default 2,000). */
  readyTimeoutMs?: number;
  /** The clock (default: the system clock). */
  clock?: Clock;
}

/** The controller's configuration, fetched when stale. */
export class ConfigurationFeed {
  #controller: ControllerRpc | null;
  #sink: ConfigurationSink;
  #stats: { errors: number };
  #clock: Clock;
  #refreshMs: number;
  #readyTimeoutMs: number;
  #version = -1;
  #fetchedAt = -Infinity;
  #fetching: Promise<void> | null = null;

  /** Fetches from `controller` (none: nothing to fetch) into `sink`; failures count in `stats`. */
  constructor(
    controller: ControllerRpc | null,
    sink: ConfigurationSink,
    stats: { errors: number },
    options: ConfigurationFeedOptions,
  ) {
    this.#controller = controller;
    this.#sink = sink;
    this.#stats = stats;
    this.#clock = options.clock ?? systemClock;
    this.#refreshMs = options.configurationRefreshMs ?? 10_000;
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 2_000;
  }

  /** Resolves once a configuration is in, or after the ready timeout without it. */
  ready(): Promise<void> {
    if (this.#sink.configuration !== null || this.#controller === null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.#clock.setTimer(this.#readyTimeoutMs, resolve);
      void this.refresh().then(() => {
        timer.cancel();
        resolve();
      });
    });
  }

  /** Fetches again when the configuration is older than the refresh period. */
  refreshIfStale(): void {
    if (this.#clock.now() - this.#fetchedAt >= this.#refreshMs) void this.refresh();
  }

  /** Fetches the configuration (joining a fetch under way); never rejects. */
  refresh(): Promise<void> {
    const controller = this.#controller;
    if (controller === null) return Promise.resolve();
    this.#fetching ??= (async () => {
      try {
        const update = await controller.levelUpdate();
        this.#fetchedAt = this.#clock.now();
        if (update.configuration === null || update.version <= this.#version) return;
        this.#version = update.version;
        this.#sink.configure(update.configuration);
      } catch {
        this.#stats.errors++;
      } finally {
        this.#fetching = null;
      }
    })();
    return this.#fetching;
  }
}
