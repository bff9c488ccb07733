/**
 * The Cloudflare topology in one process, without workerd: one
 * {@linkcode LevelHost} per level reached through the same RPC shapes the
 * Worker uses, and the Worker-side {@linkcode WorkerCoordinator} over them.
 */

import type { EffectiveConfiguration } from "../../src/config/effective.ts";
import { LevelHost, type Liveness } from "../../src/cloudflare/_level_host.ts";
import type { LevelRpc } from "../../src/cloudflare/_worker_client.ts";
import {
  WorkerCoordinator,
  type WorkerCoordinatorOptions,
} from "../../src/cloudflare/_worker_coordinator.ts";
import type { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { LevelPort } from "../../src/cloudflare/_controller_host.ts";
import type { SampleOutcome } from "../../src/adaptive/types.ts";

/** A level host as the Worker sees a level object's stub. */
export function levelRpc(host: LevelHost): LevelRpc {
  return {
    acquire: async (request, liveness) => {
      const a = await host.acquire(request, liveness);
      if (!a.admitted) return a;
      const id = a.seatId;
      return {
        admitted: true,
        waitedMs: a.waitedMs,
        leaseMs: a.leaseMs,
        seat: {
          release: (o?: { executionMs?: number; outcome?: SampleOutcome }) =>
            host.release(id, o?.executionMs, o?.outcome),
          initialized: () => host.initialized(id),
          renew: () => host.renew(id),
        },
      };
    },
  };
}

/** What a signal's caller looks like to a level object: alive until aborted. */
export const signalLiveness = (signal: AbortSignal | undefined): Liveness => ({
  alive: () => signal?.aborted !== true,
});

/** One level host per level of `config`, and a Worker-side coordinator over them. */
export function inProcessTopology(
  config: EffectiveConfiguration,
  clock: FakeEventClock,
  options: WorkerCoordinatorOptions = {},
) {
  const hosts = new Map<string, LevelHost>();
  // Like a Durable Object namespace: any name has an object, configured on first use.
  const hostOf = (name: string): LevelHost => {
    let host = hosts.get(name);
    if (host !== undefined) return host;
    host = new LevelHost({ clock, resolve: () => config });
    host.update(name, {
      version: 1,
      configuration: {
        serverConcurrencyLimit: config.serverConcurrencyLimit,
        mandatoryOnly: false,
        objects: [],
      },
      limits: Object.fromEntries(config.priorityLevels.map((pl) => [pl.name, pl.currentLimit])),
    });
    hosts.set(name, host);
    return host;
  };
  for (const pl of config.priorityLevels) hostOf(pl.name);
  const coordinator = new WorkerCoordinator(
    (name) => levelRpc(hostOf(name)),
    null,
    signalLiveness,
    { clock, policy: "closed", ...options },
  );
  return { hosts, coordinator };
}

/**
 * Level hosts made on first use, one per level, on `clock`, and the
 * {@linkcode LevelPort} the controller reaches them through; the levels in
 * `failing` refuse every call (an overloaded object).
 */
export function levelHosts(
  clock: FakeEventClock,
  failing: ReadonlySet<string> = new Set(),
): {
  hosts: Map<string, LevelHost>;
  host: (name: string) => LevelHost;
  port: (name: string) => LevelPort;
} {
  const hosts = new Map<string, LevelHost>();
  const host = (name: string) => {
    let h = hosts.get(name);
    if (h === undefined) hosts.set(name, h = new LevelHost({ clock }));
    return h;
  };
  const port = (name: string): LevelPort => ({
    collect: () =>
      failing.has(name) ? Promise.reject(new Error("overloaded")) : Promise.resolve({
        demand: host(name).collectSeatDemand(),
        samples: host(name).collectSamples(),
      }),
    update: (level, u) => {
      if (failing.has(name)) return Promise.reject(new Error("overloaded"));
      // A copy, as an RPC would make.
      host(level).update(level, structuredClone(u));
      return Promise.resolve();
    },
  });
  return { hosts, host, port };
}
