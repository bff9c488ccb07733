/**
 * One client of the remote coordinator benchmark on the library's own
 * client, `connectCoordinator`, in the closed loop of the raw client
 * (`bench/coordinator_client_bench.ts`): `inflight` loops each await an
 * acquire, release its seat at once and acquire again. The client coalesces
 * what one tick does (the releases and acquires a `decisions` frame
 * triggers) into one `ops` message, as the raw client's `batched` mode does
 * by hand.
 *
 * Transport (env `APF_BENCH_WS`): `nodelay` (default) is
 * `noDelayWebSocket()` of `src/deno/`, what `apf coordinator` users on Deno
 * plug in; `builtin` is the client's default, Deno's `WebSocket` (Nagle
 * stalls every round trip about 40 ms: `bench/RESULTS.md`).
 *
 * With `APF_BASELINE=<dir>` (another checkout of the repository), the
 * client and transport are that checkout's, for a before/after in the same
 * run.
 *
 * Counts admitted decisions during `durationMs` after `warmupMs` (or from
 * `APF_BENCH_START_AT`: `_bench_window.ts`), and the
 * time of each `acquire()`; prints one JSON line (the raw client's fields)
 * and exits.
 *
 * Run: `deno run --allow-net=127.0.0.1 --allow-read --allow-env
 * bench/coordinator_connect_client_bench.ts <port> <inflight> <warmupMs>
 * <durationMs> [name]`; driven by `bench/coordinator_remote_bench.ts`.
 *
 * @module
 */

import type { connectCoordinator as Connect } from "../src/remote/client.ts";
import type { noDelayWebSocket as NoDelay } from "../src/deno/no_delay_websocket.ts";
import { BENCH_REQUESTS } from "./_bench_requests.ts";
import { selfCpuSeconds, windowOpens } from "./_bench_window.ts";

const [portArg, inflightArg, warmupArg, durationArg, name = "bench-connect"] = Deno.args;
const inflight = Number(inflightArg ?? 64);
const warmupMs = Number(warmupArg ?? 2000);
const durationMs = Number(durationArg ?? 10_000);
const transport = Deno.env.get("APF_BENCH_WS") === "builtin" ? "builtin" : "nodelay";
const root = Deno.env.get("APF_BASELINE") ?? new URL("..", import.meta.url).pathname;

const { connectCoordinator } = await import(`${root}/src/remote/client.ts`) as {
  connectCoordinator: typeof Connect;
};
const { noDelayWebSocket } = await import(`${root}/src/deno/no_delay_websocket.ts`) as {
  noDelayWebSocket: typeof NoDelay;
};

const client = connectCoordinator(`ws://127.0.0.1:${portArg}`, {
  policy: "closed",
  client: name,
  ...(transport === "nodelay" && { webSocket: noDelayWebSocket() }),
});
await client.ready();
if (client.state !== "connected") throw new Error(`Cannot bench: client is ${client.state}`);

let measuring = false, stopped = false;
let admitted = 0, rejected = 0;
const latencies: number[] = [];
let next = 0;

async function loop(): Promise<void> {
  while (!stopped) {
    const request = BENCH_REQUESTS[next++ & 1023]!;
    const t0 = performance.now();
    const a = await client.acquire(request);
    const t1 = performance.now();
    if (a.admitted) {
      if (measuring) {
        admitted++;
        latencies.push(t1 - t0);
      }
      a.seat.release();
    } else rejected++;
  }
}

const loops = Array.from({ length: inflight }, loop);
await windowOpens(warmupMs);
measuring = true;
const start = performance.now();
const cpu0 = selfCpuSeconds();
const counted0 = { framesSent: client.stats.framesSent, received: client.stats.framesReceived };
await new Promise((r) => setTimeout(r, durationMs));
measuring = false;
const cpuSeconds = selfCpuSeconds() - cpu0;
const seconds = (performance.now() - start) / 1000;
const framesSent = client.stats.framesSent - counted0.framesSent;
const framesReceived = client.stats.framesReceived - counted0.received;
stopped = true;
await Promise.all(loops);

latencies.sort((a, b) => a - b);
const q = (p: number) =>
  latencies.length === 0 ? null : latencies[Math.floor(p * (latencies.length - 1))]!;
console.log(JSON.stringify({
  name,
  mode: `connect-${transport}`,
  inflight,
  seconds,
  admitted,
  rejected,
  perSecond: admitted / seconds,
  // The process's CPU over the window, in cores.
  cpu: cpuSeconds / seconds,
  framesSentPerSecond: framesSent / seconds,
  // Each admission is a release and an acquire.
  opsPerFrameSent: (2 * admitted) / Math.max(1, framesSent),
  framesReceivedPerSecond: framesReceived / seconds,
  p50Ms: q(0.5),
  p99Ms: q(0.99),
  fallbacks: client.stats.fallbacks,
}));
await client.close();
Deno.exit(0);
