/**
 * The load of the adaptive-limit benchmark (bench/adaptive_gateway.sh):
 * closed-loop clients through a gateway in front of bench/adaptive_upstream.ts,
 * the upstream's worker count changed on a schedule, and every response's
 * latency recorded by client class and second. Appends JSON lines to `--out`:
 *
 * - `{"kind":"run", label..., "loadavg": [start, end], ...}`: the run's parameters;
 * - `{"kind":"client", label..., "sec", "class", "ok", "other", "lat": [ms...]}`: per second
 *   (of completion) and class (`elephant`, `mouse`), the 200s, the other answers, and the
 *   latency of every answer (200 or not) in ms;
 * - `{"kind":"upstream", label..., "sec", "workers", "done", "held": [...]}`: the upstream's
 *   counters (what it held, sampled every 10 ms; what it completed);
 * - `{"kind":"gateway", label..., "sec", "limit", "levelLimit", "phase", ...}`: polled from the
 *   gateway's admin listener every 250 ms (the last poll of each second): the learned limit
 *   (`apf_adaptive_*`), and global-default's current limit (`apiserver_flowcontrol_current_limit_seats`).
 *
 * The elephants are `--elephants` connections of one user (`elephant`, one flow), the mouse one
 * connection of user `mouse` thinking `--mouse-think-ms` between its requests; both in group
 * `system:authenticated`, so the built-in configuration puts them in `global-default`, flows by
 * user (the gateway must run with `--trust-identity-headers`).
 *
 * Run: `deno run --allow-net=127.0.0.1 --allow-sys=loadavg --allow-write bench/adaptive_load.ts
 *   --gateway URL --upstream URL [--admin URL] --out FILE [--label k=v,...] [--seconds 90]
 *   [--workers 8] [--work-ms 50] [--changes 30:4,60:8] [--elephants 48] [--mouse-think-ms 100]`.
 *
 * @module
 */

const opts = new Map<string, string>();
for (let i = 0; i < Deno.args.length; i += 2) {
  const name = Deno.args[i]!;
  const value = Deno.args[i + 1];
  if (!name.startsWith("--") || value === undefined) {
    throw new TypeError(`Cannot parse the arguments: expected --name value, got ${name}`);
  }
  opts.set(name.slice(2), value);
}
function need(name: string): string {
  const v = opts.get(name);
  if (v === undefined) throw new TypeError(`Cannot run: --${name} is required`);
  return v;
}
const gateway = need("gateway");
const upstream = need("upstream");
const admin = opts.get("admin");
const out = need("out");
const label: Record<string, string> = Object.fromEntries(
  (opts.get("label") ?? "").split(",").filter((s) => s !== "").map((kv) => kv.split("=", 2)),
);
const seconds = Number(opts.get("seconds") ?? 90);
const workers = Number(opts.get("workers") ?? 8);
const workMs = Number(opts.get("work-ms") ?? 50);
const changes = (opts.get("changes") ?? "30:4,60:8").split(",").filter((s) => s !== "").map(
  (c) => {
    const [at, k] = c.split(":").map(Number);
    return { atSec: at!, workers: k! };
  },
);
const elephants = Number(opts.get("elephants") ?? 48);
const mouseThinkMs = Number(opts.get("mouse-think-ms") ?? 100);

function loadavg(): number {
  try {
    return Deno.loadavg()[0] ?? NaN;
  } catch {
    return NaN;
  }
}

interface Bucket {
  ok: number;
  other: number;
  lat: number[];
}
const buckets = { elephant: [] as Bucket[], mouse: [] as Bucket[] };
const statuses = new Map<number, number>();
const gatewaySeconds: Record<string, unknown>[] = [];

const loadStart = loadavg();
const reset = await fetch(`${upstream}/_ctl/reset?workers=${workers}&work=${workMs}`, {
  method: "POST",
});
if (!reset.ok) throw new Error(`Cannot reset the upstream: ${reset.status}`);
await reset.body?.cancel();
const t0 = performance.now();
let running = true;

async function client(cls: "elephant" | "mouse", thinkMs: number): Promise<void> {
  const headers = { "X-Remote-User": cls, "X-Remote-Group": "system:authenticated" };
  const url = `${gateway}/work/${cls}`;
  while (running) {
    const start = performance.now();
    let status = 0;
    try {
      const res = await fetch(url, { headers });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = -1;
    }
    const end = performance.now();
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const sec = Math.floor((end - t0) / 1000);
    const list = buckets[cls];
    const b = list[sec] ??= { ok: 0, other: 0, lat: [] };
    if (status === 200) b.ok++;
    else b.other++;
    b.lat.push(Math.round((end - start) * 10) / 10);
    if (status !== 200) await new Promise((r) => setTimeout(r, 10)); // no hot loop on refusals
    if (thinkMs > 0) await new Promise((r) => setTimeout(r, thinkMs));
  }
}

function metric(text: string, name: string, labels = ""): number | null {
  const re = new RegExp(`^${name}${labels.replace(/[{}]/g, "\\$&")}\\s+(\\S+)`, "m");
  const m = re.exec(text);
  return m === null ? null : Number(m[1]);
}

async function pollAdmin(): Promise<void> {
  if (admin === undefined) return;
  while (running) {
    try {
      const text = await (await fetch(`${admin}/metrics`)).text();
      const sec = Math.floor((performance.now() - t0) / 1000);
      gatewaySeconds[sec] = {
        sec,
        limit: metric(text, "apf_adaptive_concurrency_limit"),
        measuringMinRtt: metric(text, "apf_adaptive_min_rtt_calculation_active"),
        minRttMs: (metric(text, "apf_adaptive_min_rtt_seconds") ?? NaN) * 1000,
        sampleRttMs: (metric(text, "apf_adaptive_sample_rtt_seconds") ?? NaN) * 1000,
        gradient: metric(text, "apf_adaptive_gradient"),
        levelLimit: metric(
          text,
          "apiserver_flowcontrol_current_limit_seats",
          '{priority_level="global-default"}',
        ),
        levelExecuting: metric(
          text,
          "apiserver_flowcontrol_current_executing_requests",
          '{flow_schema="global-default",priority_level="global-default"}',
        ),
      };
    } catch (e) {
      console.error("admin poll:", (e as Error).message);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

const timers = changes.map((c) =>
  setTimeout(async () => {
    const r = await fetch(`${upstream}/_ctl/workers?k=${c.workers}`, { method: "POST" });
    await r.body?.cancel();
  }, c.atSec * 1000)
);
const tasks = [
  ...Array.from({ length: elephants }, () => client("elephant", 0)),
  client("mouse", mouseThinkMs),
  pollAdmin(),
];
await new Promise((r) => setTimeout(r, seconds * 1000));
running = false;
timers.forEach(clearTimeout);
await Promise.all(tasks);
const stats = await (await fetch(`${upstream}/_ctl/stats`)).json() as {
  sec: number;
  workers: number;
  done: number;
  held: number[];
}[];

const lines: string[] = [];
const base = { ...label };
lines.push(JSON.stringify({
  kind: "run",
  ...base,
  seconds,
  workers,
  workMs,
  changes,
  elephants,
  mouseThinkMs,
  loadavg: [loadStart, loadavg()],
  statuses: Object.fromEntries(statuses),
  at: new Date().toISOString(),
}));
for (const cls of ["elephant", "mouse"] as const) {
  buckets[cls].forEach((b, sec) => {
    if (b !== undefined && sec < seconds) {
      lines.push(JSON.stringify({ kind: "client", ...base, sec, class: cls, ...b }));
    }
  });
}
for (const s of stats) {
  if (s.sec < seconds) lines.push(JSON.stringify({ kind: "upstream", ...base, ...s }));
}
for (const g of gatewaySeconds) {
  if (g !== undefined) lines.push(JSON.stringify({ kind: "gateway", ...base, ...g }));
}
Deno.writeTextFileSync(out, lines.join("\n") + "\n", { append: true });
console.error(
  `${JSON.stringify(label)}: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(" ")}, load ${
    loadStart.toFixed(2)
  }→${loadavg().toFixed(2)}`,
);
