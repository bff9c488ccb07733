/**
 * `connectPerLevel()`: one remote-coordinator connection per priority
 * level, for topologies where each level has its own server, such as the
 * Cloudflare adapter's level objects (`wss://worker/apf/ws?level=NAME`).
 * Acquires go to their level's connection, opened on first use; the
 * configuration to classify with comes from one primary level's connection
 * (every level object serves the same configuration).
 *
 * @module
 */

import { connectCoordinator } from "./client.ts";
import type { ConnectCoordinatorOptions, RemoteCoordinator } from "./client_types.ts";
import type { AcquireOptions, Admission, Coordinator, SeatRequest } from "../coordinator/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";

/** Options of {@linkcode connectPerLevel}: those of each connection, plus the primary level. */
export interface ConnectPerLevelOptions extends ConnectCoordinatorOptions {
  /**
   * The level whose connection opens first and supplies the configuration
   * (default `catch-all`, which every configuration has).
   */
  primaryLevel?: string;
}

/** A {@linkcode Coordinator} over one connection per level. */
export interface PerLevelCoordinator extends Coordinator {
  /** The primary connection's configuration, or `null` before its welcome. */
  readonly configuration: WireConfiguration | null;
  /** Calls `listener` with every configuration the primary connection receives. */
  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void;
  /** Resolves once the primary connection's first attempt ended. */
  ready(): Promise<void>;
  /** The connections open so far, by level. */
  readonly connections: ReadonlyMap<string, RemoteCoordinator>;
  /** Closes every connection (held seats go back, waiters get `unavailable`). */
  close(): Promise<void>;
  /** Same as {@linkcode PerLevelCoordinator.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Connects to the server of each level at `urlFor(level)`, lazily.
 *
 * @throws {TypeError} when `urlFor` is not a function, or as {@linkcode connectCoordinator} does.
 * @example
 * ```ts ignore
 * import { connectPerLevel } from "@apf/edge";
 * import { apf } from "@apf/edge/hono";
 * import { noDelayWebSocket } from "@apf/edge/deno";
 * const coordinator = connectPerLevel(
 *   (level) => `wss://apf.example.workers.dev/apf/ws?level=${encodeURIComponent(level)}`,
 *   { token: Deno.env.get("APF_TOKEN") ?? null, webSocket: noDelayWebSocket() },
 * );
 * const limiter = apf({ coordinator });
 * ```
 */
export function connectPerLevel(
  urlFor: (level: string) => string | URL,
  options: ConnectPerLevelOptions = {},
): PerLevelCoordinator {
  if (typeof urlFor !== "function") {
    throw new TypeError("Cannot connect per level: urlFor must be a function of the level name");
  }
  const { primaryLevel = "catch-all", ...connectOptions } = options;
  const connections = new Map<string, RemoteCoordinator>();
  const name = connectOptions.client ?? "apf";
  const connection = (level: string): RemoteCoordinator => {
    let c = connections.get(level);
    if (c === undefined) {
      c = connectCoordinator(urlFor(level), { ...connectOptions, client: `${name} (${level})` });
      connections.set(level, c);
    }
    return c;
  };
  const primary = connection(primaryLevel);
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> =>
    closing ??= Promise.all([...connections.values()].map((c) => c.close())).then(() => {});
  return {
    get configuration() {
      return primary.configuration;
    },
    onConfiguration: (listener) => primary.onConfiguration(listener),
    ready: () => primary.ready(),
    connections,
    acquire(request: SeatRequest, acquireOptions?: AcquireOptions): Promise<Admission> {
      if (typeof request !== "object" || request === null) {
        return Promise.reject(
          new TypeError(`Cannot acquire a seat: request must be an object, got ${String(request)}`),
        );
      }
      if (typeof request.priorityLevel !== "string" || request.priorityLevel === "") {
        return Promise.reject(
          new TypeError("Cannot acquire a seat: invalid request at priorityLevel: not a name"),
        );
      }
      if (closing !== null) {
        return Promise.resolve({ admitted: false, reason: "unavailable", retryAfterSeconds: 1 });
      }
      return connection(request.priorityLevel).acquire(request, acquireOptions);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
