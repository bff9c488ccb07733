/**
 * Seat budgets against a per-request Redis semaphore, side by side on one
 * `redis-server` that this driver starts on a free loopback port (`--save ""
 * --appendonly no`, not pinned), in interleaved rounds (the variants take
 * turns, the first alternating, so a busy machine slows them alike):
 *
 * - `semaphore`: `PROCESSES` client processes, each with `LOOPS` concurrent
 *   loops doing acquire → release at once → acquire, where acquire and
 *   release are Lua scripts of a counting semaphore (limit 64: never refuses).
 * - `holder`: the same processes and loops, each process a `BudgetHolder`
 *   over a `RedisBudgetStore` on the built-in configuration (server limit
 *   600), level `global-default`.
 *
 * Each client process (`_budget_redis_client.ts`) is pinned to core 1
 * (`taskset -c 1`), so the clients share one core whichever variant runs and
 * the server has the other; once every process is connected (the holders
 * ready), they loop together, warm up for `WARMUP_MS` (the holders'
 * budgets settle) and then measure `SECONDS`. Per round and variant it
 * prints the decisions/s summed over the processes, the median over the
 * processes of each one's acquire latency p50 and p99, the client CPU (%
 * of one core, summed), the server's CPU, the server's commands (`INFO
 * commandstats`, in the window) and, for the holder, the store
 * operations per holder per limited level per second in the measured
 * window; then the medians and the paired ratios.
 *
 * Run: `deno run --allow-run --allow-net=127.0.0.1 --allow-read --allow-sys=loadavg bench/budget_redis_bench.ts [rounds=7] [seconds=5] [loops=16] [processes=4]`
 *
 * @module
 */

import { resolveConfiguration } from "../mod.ts";
import { redisCli, startRedis } from "../tests/_helpers/redis_server.ts";

const ROUNDS = Number(Deno.args[0] ?? 7);
const SECONDS = Number(Deno.args[1] ?? 5);
const LOOPS = Number(Deno.args[2] ?? 16);
const PROCESSES = Number(Deno.args[3] ?? 4);
const WARMUP_MS = 4_000;
const VARIANTS = ["semaphore", "holder"] as const;
type Variant = typeof VARIANTS[number];

const CLIENT = new URL("./_budget_redis_client.ts", import.meta.url).pathname;
const LIMITED_LEVELS = resolveConfiguration(undefined, { serverConcurrencyLimit: 600 })
  .priorityLevels.filter((pl) => pl.type === "Limited").length;

interface ClientResult {
  decisionsPerSecond: number;
  rejected: number;
  p50us: number;
  p99us: number;
  cpuPercent: number;
  reads: number;
  writes: number;
  seconds: number;
  capacity: number | null;
  target: number | null;
}

interface RoundResult {
  decisionsPerSecond: number;
  perProcess: number[];
  rejected: number;
  p50us: number;
  p99us: number;
  clientCpu: number;
  serverCpu: number;
  commands: Record<string, number>;
  storeOpsPerHolderLevelSecond: number;
  capacities: (number | null)[];
  loadavg: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function commandStats(text: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]!] = Number(m[2]);
  return calls;
}

/** The server's CPU time (`INFO cpu`: user + system of the main thread and the others), in seconds. */
async function serverCpuSeconds(): Promise<number> {
  const info = await redisCli(redis, "INFO", "cpu");
  const field = (name: string) => Number(info.match(new RegExp(`^${name}:(\\S+)`, "m"))?.[1]);
  return field("used_cpu_user") + field("used_cpu_sys");
}

async function run(variant: Variant, port: number): Promise<RoundResult> {
  await redisCli(redis, "FLUSHALL");
  await redisCli(redis, "CONFIG", "RESETSTAT");
  const clients = Array.from({ length: PROCESSES }, (_, i) =>
    new Deno.Command("taskset", {
      args: [
        "-c",
        "1",
        Deno.execPath(),
        "run",
        "--allow-net=127.0.0.1",
        "--allow-read",
        "--allow-env=LOG_TOKENS,LOG_STREAM",
        CLIENT,
        variant,
        String(port),
        String(LOOPS),
        String(SECONDS),
        `h${i}`,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn());
  // Each prints `ready` once connected; then they start together, after the warm-up.
  const readers = clients.map((child) =>
    child.stdout.pipeThrough(new TextDecoderStream()).getReader()
  );
  const errors = clients.map((child) => new Response(child.stderr).text());
  const texts = clients.map(() => "");
  await Promise.all(readers.map(async (reader, i) => {
    while (!texts[i]!.includes("ready\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`Client ${i} (${variant}) failed: ${await errors[i]}`);
      texts[i] += value;
    }
  }));
  const startAt = Date.now() + WARMUP_MS;
  let serverCpuAtStart: Promise<number> = Promise.resolve(NaN);
  let loadavg = "";
  // The server's commands and CPU are counted from the window's start.
  const opening = setTimeout(() => {
    serverCpuAtStart = redisCli(redis, "CONFIG", "RESETSTAT").then(() => serverCpuSeconds());
  }, WARMUP_MS);
  const middle = setTimeout(
    () => (loadavg = Deno.loadavg().map((x) => x.toFixed(2)).join(" ")),
    WARMUP_MS + SECONDS * 500,
  );
  await Promise.all(clients.map(async (child) => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(`${startAt}\n`));
    await writer.close();
  }));
  const outputs = await Promise.all(readers.map(async (reader, i) => {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      texts[i] += value;
    }
    const status = await clients[i]!.status;
    return { success: status.success, text: texts[i]!, stderr: await errors[i]! };
  }));
  const serverCpu = (await serverCpuSeconds() - await serverCpuAtStart) / SECONDS * 100;
  clearTimeout(opening);
  clearTimeout(middle);
  const results: ClientResult[] = outputs.map((out, i) => {
    const text = out.text.trim();
    if (!out.success || text === "") {
      throw new Error(`Client ${i} (${variant}) failed: ${out.stderr}`);
    }
    return JSON.parse(text.split("\n").at(-1)!) as ClientResult;
  });
  const commands = commandStats(await redisCli(redis, "INFO", "commandstats"));
  const ops = results.reduce((s, r) => s + r.reads + r.writes, 0);
  return {
    decisionsPerSecond: results.reduce((s, r) => s + r.decisionsPerSecond, 0),
    perProcess: results.map((r) => r.decisionsPerSecond),
    rejected: results.reduce((s, r) => s + r.rejected, 0),
    p50us: median(results.map((r) => r.p50us)),
    p99us: median(results.map((r) => r.p99us)),
    clientCpu: results.reduce((s, r) => s + r.cpuPercent, 0),
    serverCpu,
    commands,
    storeOpsPerHolderLevelSecond: ops / PROCESSES / LIMITED_LEVELS / SECONDS,
    capacities: results.map((r) => r.capacity),
    loadavg,
  };
}

// A redis-server on a free loopback port, without persistence (tests/_helpers/redis_server.ts).
const redis = await startRedis();
const port = redis.port;
try {
  console.log(
    `redis-server ${(await redisCli(redis, "INFO", "server")).match(/redis_version:(\S+)/)?.[1]} ` +
      `on 127.0.0.1:${port}, ${Deno.version.deno}; ${ROUNDS} rounds x ${SECONDS} s (warm-up ${WARMUP_MS} ms), ` +
      `${PROCESSES} processes x ${LOOPS} loops, clients on core 1, ${LIMITED_LEVELS} limited levels`,
  );
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
  const all: Record<Variant, RoundResult[]> = { semaphore: [], holder: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse() as Variant[];
    for (const variant of order) {
      const r = await run(variant, port);
      all[variant].push(r);
      const cmds = Object.entries(r.commands).map(([k, v]) => `${k}=${v}`).join(" ");
      console.log(
        `round ${round + 1} ${variant.padEnd(9)} ${fmt(r.decisionsPerSecond).padStart(9)} dec/s ` +
          `[${r.perProcess.map(fmt).join(", ")}] rejected ${r.rejected} ` +
          `p50 ${r.p50us.toFixed(1)} us p99 ${r.p99us.toFixed(1)} us ` +
          `client cpu ${r.clientCpu.toFixed(0)}% server cpu ${r.serverCpu.toFixed(0)}% ` +
          (variant === "holder"
            ? `store ops/holder/level/s ${r.storeOpsPerHolderLevelSecond.toFixed(2)} ` +
              `capacity [${r.capacities.join(",")}] `
            : "") +
          `| ${cmds} | loadavg ${r.loadavg}`,
      );
    }
  }
  console.log("medians:");
  for (const variant of VARIANTS) {
    const rs = all[variant];
    console.log(
      `  ${variant.padEnd(9)} ${fmt(median(rs.map((r) => r.decisionsPerSecond)))} dec/s, ` +
        `${fmt(median(rs.map((r) => r.decisionsPerSecond / PROCESSES)))} per process, ` +
        `p50 ${median(rs.map((r) => r.p50us)).toFixed(1)} us, ` +
        `p99 ${median(rs.map((r) => r.p99us)).toFixed(1)} us, ` +
        `client cpu ${median(rs.map((r) => r.clientCpu)).toFixed(0)}%, ` +
        `server cpu ${median(rs.map((r) => r.serverCpu)).toFixed(0)}%` +
        (variant === "holder"
          ? `, store ops/holder/level/s ${
            median(rs.map((r) => r.storeOpsPerHolderLevelSecond)).toFixed(2)
          }`
          : ""),
    );
  }
  const paired = (f: (r: RoundResult) => number) =>
    median(all.holder.map((h, i) => f(h) / f(all.semaphore[i]!)));
  console.log(
    `paired ratios holder/semaphore: decisions/s ${
      paired((r) => r.decisionsPerSecond).toFixed(1)
    }x, ` +
      `p50 ${paired((r) => r.p50us).toFixed(4)}x, p99 ${paired((r) => r.p99us).toFixed(4)}x, ` +
      `server cpu ${paired((r) => r.serverCpu).toFixed(3)}x`,
  );
} finally {
  await redis.stop();
}
