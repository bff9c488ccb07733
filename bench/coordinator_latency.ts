/**
 * Latency of `connectCoordinator` against `apf coordinator`, by transport:
 * `builtin` (Deno's `WebSocket`, the client's default) or `nodelay`
 * (`noDelayWebSocket()`, TCP_NODELAY). K workers each loop acquire →
 * release → `setTimeout(0)`, so that a release-only frame is often followed
 * by an acquire: the pattern Nagle's algorithm delays. Records the time of
 * each `acquire()` after a warm-up; prints one JSON line.
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/coordinator_latency.ts <port>
 * <K> <builtin|nodelay> [durationMs=4000] [warmupMs=500]`; driven by
 * `bench/coordinator_latency.sh`.
 *
 * @module
 */

import { connectCoordinator } from "../src/remote/client.ts";
import { noDelayWebSocket } from "../src/deno/no_delay_websocket.ts";

const [portArg, kArg, transportArg, durationArg, warmupArg] = Deno.args;
const port = Number(portArg);
const K = Number(kArg ?? 1);
const transport = transportArg === "nodelay" ? "nodelay" : "builtin";
if (transportArg !== transport) {
  throw new TypeError(`Cannot bench: transport must be builtin or nodelay, got ${transportArg}`);
}
const durationMs = Number(durationArg ?? 4_000);
const warmupMs = Number(warmupArg ?? 500);

const client = connectCoordinator(`ws://127.0.0.1:${port}`, {
  policy: "closed",
  client: `latency-${transport}`,
  ...(transport === "nodelay" && { webSocket: noDelayWebSocket() }),
});
while (client.state !== "connected") await new Promise((r) => setTimeout(r, 10));

const latencies: number[] = [];
let admitted = 0, rejected = 0;
const measureFrom = performance.now() + warmupMs;
const end = measureFrom + durationMs;
await Promise.all(Array.from({ length: K }, async (_, i) => {
  const request = {
    priorityLevel: "catch-all",
    flowSchema: "catch-all",
    flowHash: { hi: i, lo: i * 7 },
  };
  while (performance.now() < end) {
    const t0 = performance.now();
    const a = await client.acquire(request);
    const t1 = performance.now();
    if (t0 >= measureFrom) {
      latencies.push(t1 - t0);
      if (a.admitted) admitted++;
      else rejected++;
    }
    if (a.admitted) a.seat.release();
    await new Promise((r) => setTimeout(r, 0));
  }
}));
await client.close();

latencies.sort((a, b) => a - b);
const q = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
console.log(JSON.stringify({
  transport,
  K,
  acquires: latencies.length,
  admitted,
  rejected,
  perSecond: Math.round(latencies.length / (durationMs / 1000)),
  p50Ms: q(0.5),
  p99Ms: q(0.99),
  fallbacks: client.stats.fallbacks,
}));
