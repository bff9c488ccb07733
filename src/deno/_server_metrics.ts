/**
 * `serveGuarded()`'s counts as Prometheus metrics, labelled by listener,
 * for the gateway's and the coordinator's `/metrics`.
 *
 * @module
 */

import type { CounterChild } from "../observe/metrics.ts";
import type { Registry } from "../observe/registry.ts";
import type { GuardedServer } from "./http_server.ts";

/**
 * Registers the connection metrics in `registry`, read from each server's
 * `stats` at scrape time; returns the function removing the collect hook.
 *
 * @throws {TypeError} when `registry` already has these metrics.
 */
export function exposeServerStats(
  registry: Registry,
  servers: ReadonlyArray<{ listener: string; server: GuardedServer }>,
): () => void {
  const open = registry.gauge({
    name: "apf_server_connections",
    help: "HTTP connections open now",
    labelNames: ["listener"],
  });
  const counter = (name: string, help: string, labelNames = ["listener"]) =>
    registry.counter({ name, help, labelNames });
  const accepted = counter("apf_server_connections_accepted_total", "HTTP connections accepted");
  const refused = counter(
    "apf_server_connections_refused_total",
    "HTTP connections answered 503 because maxConnections were open",
  );
  const errors = counter(
    "apf_server_accept_errors_total",
    "Failed accepts (EMFILE, ENFILE, ...), each followed by a back-off",
  );
  const timeouts = counter(
    "apf_server_connection_timeouts_total",
    "HTTP connections closed by the header or the idle timeout",
    ["listener", "timeout"],
  );
  // Counters only go up: each scrape adds what the server counted since the last one.
  const sync = (child: CounterChild, total: number) => child.inc(total - child.value);
  return registry.onCollect(() => {
    for (const { listener, server } of servers) {
      const stats = server.stats;
      open.labels(listener).set(stats.open);
      sync(accepted.labels(listener), stats.accepted);
      sync(refused.labels(listener), stats.refused);
      sync(errors.labels(listener), stats.acceptErrors);
      sync(timeouts.labels(listener, "header"), stats.headerTimeouts);
      sync(timeouts.labels(listener, "idle"), stats.idleTimeouts);
    }
  });
}
