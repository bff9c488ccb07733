/**
 * The measuring window of a remote benchmark client: from the wall-clock
 * time `APF_BENCH_START_AT` (ms since the epoch; set by
 * `bench/coordinator_remote_bench.ts`, so that every client of a run
 * measures the same seconds, however long each took to start), or else
 * `warmupMs` from now; and the client's own CPU time over it.
 *
 * @module
 */

import process from "node:process";

/** Resolves when the measuring window opens. */
export async function windowOpens(warmupMs: number): Promise<void> {
  const at = Number(Deno.env.get("APF_BENCH_START_AT") ?? NaN);
  const waitMs = Number.isFinite(at) ? at - Date.now() : warmupMs;
  await new Promise((r) => setTimeout(r, Math.max(0, waitMs)));
}

/** CPU seconds (user + system, every thread) of this process so far (`getrusage`). */
export function selfCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
