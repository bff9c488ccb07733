/**
 * The coordinator server of the remote coordinator benchmark:
 * `serveCoordinator` on 127.0.0.1 with one level, `bench`, large enough
 * that the benchmark's clients never wait (ServerCL 10,000; `bench` has 100
 * shares against `catch-all`'s 5, so about 9,500 seats; 128 queues, hand 6).
 * Prints `listening <port>` once it listens; stops on SIGTERM or SIGINT
 * (so `--cpu-prof` writes its profile).
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/coordinator_server_bench.ts [port=0]`;
 * driven by `bench/coordinator_remote_bench.ts`.
 *
 * @module
 */

import { serveCoordinator } from "../src/deno/mod.ts";
import { limited } from "../tests/_helpers/coordinator_config.ts";

/** The level the clients use. */
export const BENCH_LEVEL = limited("bench", {
  shares: 100,
  queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 },
});
/** The server concurrency limit of the benchmark. */
export const BENCH_SERVER_CL = 10_000;

if (import.meta.main) {
  const server = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: Number(Deno.args[0] ?? 0) },
    mandatoryOnly: true,
    serverConcurrencyLimit: BENCH_SERVER_CL,
    configuration: { flowSchemas: [], priorityLevels: [BENCH_LEVEL] },
    onListen: (addr) => console.log(`listening ${addr.port}`),
  });
  const seats = server.coordinator.snapshot().levels.find((l) => l.name === "bench");
  console.error(`bench level: ${JSON.stringify(seats?.currentLimit ?? seats)}`);
  const stop = async () => {
    await server.shutdown();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  await server.finished;
}
