/**
 * Remote coordinator benchmark: decisions per second of one
 * coordinator server process (`bench/coordinator_server_bench.ts`) driven by
 * 4 client processes (`bench/coordinator_client_bench.ts`) over loopback,
 * batched (every op a received `decisions` frame triggers in one `ops`
 * message) against unbatched (one op per message); the added latency of one
 * acquire at low load (1 client, 1 in flight); and the embedded coordinator's
 * acquire + release pair in this process, for the side by side. Variants
 * take turns in rounds; prints every sample and the medians.
 *
 * The `connect` variant runs the library's own client, `connectCoordinator`
 * on `noDelayWebSocket()` (`bench/coordinator_connect_client_bench.ts`), in
 * the same closed loop right after the raw `batched` one, and prints its
 * ratio to it per round; with `APF_BASELINE=<dir>` (a checkout of another
 * commit, e.g. main) `connect (baseline)` runs that checkout's client too.
 *
 * Run: `deno run -A bench/coordinator_remote_bench.ts [rounds=3] [inflight=64]
 * [durationMs=10000] [variants=batched,unbatched,latency,embedded,connect]`.
 * `APF_BENCH_SERVER_FLAGS` adds flags to the server's
 * `deno run` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), `APF_BENCH_CLIENT_FLAGS` to the
 * connect clients'; `APF_BENCH_DENO_WS=1` adds, in round 1, the
 * batched run with Deno's own `WebSocket` client instead of the raw one.
 * `-A`: reading `/proc/<pid>/stat` (CPU of the server and the clients) needs it.
 *
 * @module
 */

import { effectiveConfiguration, EmbeddedCoordinator } from "../mod.ts";
import { mergeWithBootstrap } from "../src/config/mod.ts";
import { BENCH_LEVEL, BENCH_SERVER_CL } from "./coordinator_server_bench.ts";

const ROUNDS = Number(Deno.args[0] ?? 3);
const INFLIGHT = Number(Deno.args[1] ?? 64);
const DURATION_MS = Number(Deno.args[2] ?? 10_000);
const VARIANTS = new Set(
  (Deno.args[3] ?? "batched,unbatched,latency,embedded,connect").split(","),
);
const BASELINE = Deno.env.get("APF_BASELINE");
const WARMUP_MS = 2000;
const CLIENTS = 4;
const here = new URL(".", import.meta.url).pathname;

// ---- processes ----------------------------------------------------------------

interface Server {
  name: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

async function startServer(name: string, script: string, port: number): Promise<Server> {
  const flags = (Deno.env.get("APF_BENCH_SERVER_FLAGS") ?? "").split(" ").filter((f) => f !== "");
  const child = new Deno.Command("deno", {
    args: ["run", "--allow-net=127.0.0.1", ...flags, script, String(port)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("listening")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`Cannot bench: server ${name} exited`);
    text += value;
  }
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return {
    name,
    port: Number(/listening (\d+)/.exec(text)![1]),
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

interface ClientResult {
  perSecond: number;
  admitted: number;
  rejected: number;
  framesSentPerSecond: number;
  opsPerFrameSent: number;
  framesReceivedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The client's own CPU over its window, in cores. */
  cpu: number;
}

function runClient(
  port: number,
  mode: string,
  inflight: number,
  warmupMs: number,
  durationMs: number,
  name: string,
  transport = "raw",
  startAt?: number,
): { pid: number; result: Promise<ClientResult> } {
  // `connect` and `connect (baseline)`: the library's client; otherwise the raw one in `mode`.
  const connect = mode.startsWith("connect");
  const baseline = mode === "connect (baseline)";
  const clientFlags = (Deno.env.get("APF_BENCH_CLIENT_FLAGS") ?? "").split(" ")
    .filter((f) => f !== "");
  const args = connect
    ? [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-read",
      "--allow-env",
      ...clientFlags,
      `${here}coordinator_connect_client_bench.ts`,
      String(port),
      String(inflight),
      String(warmupMs),
      String(durationMs),
      name,
    ]
    : [
      "run",
      "--allow-net=127.0.0.1",
      "--allow-env=APF_BENCH_WS,APF_BENCH_START_AT",
      `${here}coordinator_client_bench.ts`,
      String(port),
      mode,
      String(inflight),
      String(warmupMs),
      String(durationMs),
      name,
    ];
  const env: Record<string, string> = {
    APF_BENCH_WS: connect ? "nodelay" : transport,
    ...(startAt !== undefined && { APF_BENCH_START_AT: String(startAt) }),
  };
  if (baseline) env.APF_BASELINE = BASELINE!;
  const child = new Deno.Command("deno", {
    args,
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const result = child.output().then((out) => {
    if (!out.success) throw new Error(`Cannot bench: client ${name} failed`);
    return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
  });
  return { pid: child.pid, result };
}

/** CPU seconds (user + system) of process `pid` so far. */
function cpuSeconds(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
}
/** Busy and total jiffies of the whole machine. */
function machineTicks(): { busy: number; total: number } {
  const cpu = Deno.readTextFileSync("/proc/stat").split("\n")[0]!.split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - cpu[3]! - cpu[4]!, total };
}

/** 4 clients in `mode`; the server's CPU share and the machine's during the window. */
async function throughput(server: Server, mode: string, transport = "raw") {
  // Every client measures the same seconds, from a wall-clock time after its warm-up, and
  // reports its own CPU over them; the server's and the machine's are sampled inside them.
  const startAt = Date.now() + WARMUP_MS + 500;
  const clients = Array.from(
    { length: CLIENTS },
    (_, i) =>
      runClient(server.port, mode, INFLIGHT, WARMUP_MS, DURATION_MS, `c${i}`, transport, startAt),
  );
  await new Promise((r) => setTimeout(r, startAt - Date.now() + 500));
  const cpu0 = cpuSeconds(server.pid),
    m0 = machineTicks(),
    t0 = performance.now();
  await new Promise((r) => setTimeout(r, DURATION_MS - 1000));
  const cpu1 = cpuSeconds(server.pid),
    m1 = machineTicks(),
    t1 = performance.now();
  const results = await Promise.all(clients.map((c) => c.result));
  return {
    perSecond: results.reduce((a, r) => a + r.perSecond, 0),
    rejected: results.reduce((a, r) => a + r.rejected, 0),
    opsPerFrame: results[0]!.opsPerFrameSent,
    framesInPerSecond: results.reduce((a, r) => a + r.framesSentPerSecond, 0),
    p50Ms: median(results.map((r) => r.p50Ms)),
    p99Ms: median(results.map((r) => r.p99Ms)),
    serverCpu: (cpu1 - cpu0) / ((t1 - t0) / 1000),
    clientsCpu: results.reduce((a, r) => a + r.cpu, 0),
    machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
  };
}

// ---- embedded -------------------------------------------------------------------

const embedded = new EmbeddedCoordinator(
  effectiveConfiguration(
    mergeWithBootstrap({ flowSchemas: [], priorityLevels: [BENCH_LEVEL] }, { mandatoryOnly: true })
      .configuration,
    { serverConcurrencyLimit: BENCH_SERVER_CL },
  ),
);
const embeddedRequest = {
  priorityLevel: "bench",
  flowSchema: "bench",
  flowHash: { hi: 0x9e3779b9, lo: 0x7f4a7c15 },
  distinguisher: "user-0",
};

/** Pairs per second over 20,000 pairs, and the p50/p99 of one `await acquire()` in µs. */
async function embeddedPairs() {
  const n = 20_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const a = await embedded.acquire(embeddedRequest);
    if (!a.admitted) throw new Error("Cannot bench: rejected");
    a.seat.release();
  }
  const perSecond = n / ((performance.now() - t0) / 1000);
  const lat = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const a = await embedded.acquire(embeddedRequest);
    lat[i] = performance.now() - s;
    if (a.admitted) a.seat.release();
  }
  lat.sort();
  return { perSecond, p50Us: lat[n >> 1]! * 1000, p99Us: lat[Math.floor(0.99 * (n - 1))]! * 1000 };
}

// ---- rounds ---------------------------------------------------------------------

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const servers: Server[] = [
  await startServer("this", `${here}coordinator_server_bench.ts`, 0),
];
const rows = new Map<string, Record<string, number>[]>();
const record = (key: string, sample: Record<string, number>) => {
  if (!rows.has(key)) rows.set(key, []);
  rows.get(key)!.push(sample);
  console.log(`${key}: ${JSON.stringify(sample)}`);
};
try {
  if (VARIANTS.has("embedded")) await embeddedPairs(); // warm up
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`-- round ${round}`);
    for (const server of servers) {
      // The library's clients in turn with the raw one, their order alternating by round.
      const connects = ["connect", ...(BASELINE !== undefined ? ["connect (baseline)"] : [])]
        .filter(() => VARIANTS.has("connect"));
      const modes = [
        ...(VARIANTS.has("batched") ? ["batched"] : []),
        ...(round % 2 === 1 ? connects : connects.reverse()),
        ...(VARIANTS.has("unbatched") ? ["unbatched"] : []),
      ];
      for (const mode of modes) {
        record(`${server.name} ${mode}`, await throughput(server, mode));
      }
      for (const mode of connects) {
        const raw = rows.get(`${server.name} batched`)?.[round - 1]?.perSecond;
        const it = rows.get(`${server.name} ${mode}`)![round - 1]!.perSecond!;
        if (raw !== undefined) {
          record(`${server.name} ${mode} / batched (paired ratio)`, { ratio: it / raw });
        }
      }
      if (VARIANTS.has("latency")) {
        // The raw client, then the library's ones (1 in flight: the added latency, no queueing).
        for (const mode of ["batched", ...connects]) {
          const low = await runClient(server.port, mode, 1, 1000, 5000, "latency").result;
          const name = mode === "batched" ? "" : ` ${mode}`;
          record(`${server.name} latency${name} (1 client, 1 in flight)`, {
            perSecond: low.perSecond,
            p50Us: low.p50Ms * 1000,
            p99Us: low.p99Ms * 1000,
            cpu: low.cpu,
          });
        }
      }
    }
    if (VARIANTS.has("embedded")) record("embedded pair (in process)", await embeddedPairs());
    if (round === 1 && Deno.env.get("APF_BENCH_DENO_WS") === "1") {
      record(
        `${servers[0]!.name} batched, Deno WebSocket client`,
        await throughput(servers[0]!, "batched", "deno"),
      );
    }
  }
} finally {
  for (const s of servers) await s.stop();
  embedded.close();
}

console.log("\nmedians:");
for (const [key, samples] of rows) {
  const fields = Object.keys(samples[0]!);
  const m = Object.fromEntries(fields.map((f) => [f, median(samples.map((s) => s[f]!))]));
  console.log(`${key}: ${JSON.stringify(m)}`);
}
