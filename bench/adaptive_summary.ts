/**
 * Summarizes bench/adaptive_load.ts's JSON lines (bench/adaptive_gateway.sh)
 * against the adaptive limit's goals, per variant and phase, as markdown:
 *
 * - the phases: K = 8 steady (10–30 s), K = 4 (from 30 s, measured 40–60 s), K = 8 again (from
 *   60 s, measured 70–90 s): each measured from 10 s after the change;
 * - per run and phase: the p90 of what the upstream held (10 ms samples), its completions per
 *   second against K/S, the 200s per second at the clients (goodput), latency percentiles of all
 *   answers, the elephants' and the mouse's, the answers that were not 200, and the medians of
 *   the learned limit (ServerCL) and of global-default's current limit;
 * - per variant, the median over the rounds (and the range), then the goals: `auto` on its own,
 *   `auto` against the best `static-N` (the best median goodput on the steady phase, chosen after
 *   the fact), `auto` against `fifo` (the gradient alone: one queue, no fairness), and a
 *   per-second trace of `auto` around the changes (median over the rounds).
 *
 * Run: `deno run --allow-read bench/adaptive_summary.ts results.jsonl [K=8] [S=50]`.
 *
 * @module
 */

const [file, kText, sText] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give the JSON lines file");
const K = Number(kText ?? 8);
const S = Number(sText ?? 50);

interface Line {
  kind: "run" | "client" | "upstream" | "gateway";
  variant: string;
  round: string;
  sec: number;
  [key: string]: unknown;
}
const lines: Line[] = Deno.readTextFileSync(file).trim().split("\n").map((l) => JSON.parse(l));

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
function median(xs: number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

interface Phase {
  name: string;
  from: number;
  to: number;
  workers: number;
}
const PHASES: Phase[] = [
  { name: "K=8 steady (10–30 s)", from: 10, to: 30, workers: K },
  { name: "K=4 (40–60 s)", from: 40, to: 60, workers: K / 2 },
  { name: "K=8 again (70–90 s)", from: 70, to: 90, workers: K },
];

interface Measures {
  heldP90: number;
  done: number;
  goodput: number;
  p50: number;
  p99: number;
  elephantP99: number;
  mouseP50: number;
  mouseP99: number;
  mouseN: number;
  non200: number;
  limit: number;
  levelLimit: number;
}

type RunKey = string; // variant\tround
const runs = new Map<RunKey, Line[]>();
for (const l of lines) {
  const key = `${l.variant}\t${l.round}`;
  const list = runs.get(key) ?? [];
  list.push(l);
  runs.set(key, list);
}

function measure(run: Line[], from: number, to: number): Measures | null {
  const inside = (l: Line) => l.sec >= from && l.sec < to;
  const ups = run.filter((l) => l.kind === "upstream" && inside(l));
  if (ups.length < (to - from) * 0.9) return null; // the run did not last through the phase
  const held = ups.flatMap((l) => l.held as number[]);
  const done = ups.reduce((n, l) => n + (l.done as number), 0) / (to - from);
  const clients = run.filter((l) => l.kind === "client" && inside(l));
  const lat = (cls?: string) =>
    clients.filter((l) => cls === undefined || l.class === cls).flatMap((l) => l.lat as number[]);
  const all = lat();
  const mouse = lat("mouse");
  const gw = run.filter((l) => l.kind === "gateway" && inside(l));
  return {
    heldP90: quantile(held, 0.9),
    done,
    goodput: clients.reduce((n, l) => n + (l.ok as number), 0) / (to - from),
    p50: quantile(all, 0.5),
    p99: quantile(all, 0.99),
    elephantP99: quantile(lat("elephant"), 0.99),
    mouseP50: quantile(mouse, 0.5),
    mouseP99: quantile(mouse, 0.99),
    mouseN: mouse.length,
    non200: clients.reduce((n, l) => n + (l.other as number), 0),
    limit: median(gw.map((l) => (l.limit as number | null) ?? NaN)),
    levelLimit: median(gw.map((l) => (l.levelLimit as number | null) ?? NaN)),
  };
}

// variant → phase index → measures per round
const table = new Map<string, Measures[][]>();
const rounds = new Map<string, Map<string, Measures[]>>(); // variant → round → per phase
const loads: number[] = [];
for (const [key, run] of runs) {
  const [variant, round] = key.split("\t") as [string, string];
  const perPhase = table.get(variant) ?? PHASES.map(() => []);
  const byRound = rounds.get(variant) ?? new Map();
  const mine: Measures[] = [];
  PHASES.forEach((p, i) => {
    const m = measure(run, p.from, p.to);
    if (m !== null) {
      perPhase[i]!.push(m);
      mine[i] = m;
    }
  });
  for (const l of run) if (l.kind === "run") loads.push(...(l.loadavg as number[]));
  byRound.set(round, mine);
  table.set(variant, perPhase);
  rounds.set(variant, byRound);
}

const ms = (x: number) => Number.isNaN(x) ? "–" : `${x.toFixed(0)} ms`;
const num = (x: number, d = 0) => Number.isNaN(x) ? "–" : x.toFixed(d);
function med(list: Measures[], f: (m: Measures) => number, fmt: (x: number) => string): string {
  const xs = list.map(f);
  if (xs.length === 0) return "–";
  if (xs.length === 1) return fmt(xs[0]!);
  return `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
}
const yes = (ok: boolean) => ok ? "met" : "**not met**";

console.log(
  `Runs: ${[...table].map(([v, p]) => `${v} ×${p[0]!.length}`).join(", ")}; load average ${
    num(Math.min(...loads), 2)
  } to ${num(Math.max(...loads), 2)} at the runs' starts and ends.\n`,
);

// 1. auto on its own
const auto = table.get("auto");
if (auto !== undefined) {
  console.log(`### \`auto\`: the goals per phase (K/S = ${K / S * 1000} req/s at K = ${K})\n`);
  console.log(
    "| phase | upstream held p90 (goal ≤ 2K) | completions/s (% of K/S, goal ≥ 90%) | mouse p50 (goal ≤ 3S) | mouse p99 | all p99 | non-200 | ServerCL | global-default seats | verdict |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  PHASES.forEach((p, i) => {
    const list = auto[i]!;
    if (list.length === 0) return;
    const cap = p.workers / S * 1000;
    const held = median(list.map((m) => m.heldP90));
    const done = median(list.map((m) => m.done));
    const mouse = median(list.map((m) => m.mouseP50));
    console.log(
      `| ${p.name} | ${med(list, (m) => m.heldP90, num)} | ${med(list, (m) => m.done, num)} (${
        (done / cap * 100).toFixed(1)
      }%) | ${med(list, (m) => m.mouseP50, ms)} | ${med(list, (m) => m.mouseP99, ms)} | ${
        med(list, (m) => m.p99, ms)
      } | ${med(list, (m) => m.non200, num)} | ${med(list, (m) => m.limit, num)} | ${
        med(list, (m) => m.levelLimit, num)
      } | ${yes(held <= 2 * p.workers && done >= 0.9 * cap && mouse <= 3 * S)} |`,
    );
  });
  console.log();
}

// 2. against the best static limit, on the steady phase
const statics = [...table].filter(([v]) => v.startsWith("static-"));
if (auto !== undefined && statics.length > 0) {
  const steady = (v: string) => table.get(v)![0]!;
  const best = statics.map(([v]) => v).reduce((a, b) =>
    median(steady(b).map((m) => m.goodput)) > median(steady(a).map((m) => m.goodput)) ? b : a
  );
  console.log("### `auto` against static limits, steady phase (K = 8, 10–30 s)\n");
  console.log(
    "| variant | goodput (req/s) | all p50 | all p99 | elephant p99 | mouse p50 | mouse p99 | upstream held p90 | global-default seats | non-200 |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  const order = [
    "auto",
    ...statics.map(([v]) => v).sort((a, b) => Number(a.slice(7)) - Number(b.slice(7))),
  ];
  for (const v of order) {
    const list = steady(v);
    console.log(
      `| ${v === best ? `**${v}** (best)` : v} | ${
        med(list, (m) => m.goodput, (x) => num(x, 1))
      } | ${med(list, (m) => m.p50, ms)} | ${med(list, (m) => m.p99, ms)} | ${
        med(list, (m) => m.elephantP99, ms)
      } | ${med(list, (m) => m.mouseP50, ms)} | ${med(list, (m) => m.mouseP99, ms)} | ${
        med(list, (m) => m.heldP90, num)
      } | ${med(list, (m) => m.levelLimit, num)} | ${med(list, (m) => m.non200, num)} |`,
    );
  }
  const a = steady("auto"), b = steady(best);
  const g = median(a.map((m) => m.goodput)) / median(b.map((m) => m.goodput));
  const p = median(a.map((m) => m.p99)) / median(b.map((m) => m.p99));
  // Paired: auto and the best static of the same round.
  const pairedG: number[] = [], pairedP: number[] = [];
  for (const [round, ms] of rounds.get("auto")!) {
    const other = rounds.get(best)!.get(round);
    if (ms[0] !== undefined && other?.[0] !== undefined) {
      pairedG.push(ms[0].goodput / other[0].goodput);
      pairedP.push(ms[0].p99 / other[0].p99);
    }
  }
  console.log(
    `\nBest static after the fact: \`${best}\`. auto's goodput ${
      g.toFixed(3)
    }x of it (goal ≥ 0.95: ${yes(g >= 0.95)}; paired by round, median ${
      median(pairedG).toFixed(3)
    }x), its p99 ${p.toFixed(2)}x (goal ≤ 1.2: ${yes(p <= 1.2)}; paired ${
      median(pairedP).toFixed(2)
    }x).\n`,
  );
}

// 3. against the gradient alone
const fifo = table.get("fifo");
if (auto !== undefined && fifo !== undefined) {
  console.log("### `auto` (APF) against the gradient alone (`fifo`: one queue, no fairness)\n");
  console.log(
    "| phase | mouse p50 auto | mouse p50 fifo | mouse p99 auto | mouse p99 fifo | p99 ratio (goal ≤ 0.2) | goodput auto | goodput fifo | held p90 auto | held p90 fifo |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  PHASES.forEach((p, i) => {
    const a = auto[i]!, f = fifo[i]!;
    if (a.length === 0 || f.length === 0) return;
    const r = median(a.map((m) => m.mouseP99)) / median(f.map((m) => m.mouseP99));
    console.log(
      `| ${p.name} | ${med(a, (m) => m.mouseP50, ms)} | ${med(f, (m) => m.mouseP50, ms)} | ${
        med(a, (m) => m.mouseP99, ms)
      } | ${med(f, (m) => m.mouseP99, ms)} | ${r.toFixed(3)} (${yes(r <= 0.2)}) | ${
        med(a, (m) => m.goodput, num)
      } | ${med(f, (m) => m.goodput, num)} | ${med(a, (m) => m.heldP90, num)} | ${
        med(f, (m) => m.heldP90, num)
      } |`,
    );
  });
  console.log();
}

// 4. auto's trace around the changes
const autoRuns = [...runs].filter(([k]) => k.startsWith("auto\t")).map(([, r]) => r);
if (autoRuns.length > 0) {
  console.log(
    "### `auto` second by second (median over the rounds; held: p90 of that second's samples)\n",
  );
  console.log(
    "| s | K | ServerCL | global-default seats | held p90 | completions | mouse p50 | minRTT pin in rounds |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  const secs = [...range(0, 6), ...range(26, 42), ...range(56, 74)];
  for (const s of secs) {
    const at = (r: Line[], kind: string) => r.find((l) => l.kind === kind && l.sec === s);
    const col = (kind: string, f: (l: Line) => number) =>
      median(autoRuns.map((r) => at(r, kind)).filter((l) => l !== undefined).map(f));
    const pins = autoRuns.filter((r) => at(r, "gateway")?.measuringMinRtt === 1).length;
    const mouse = median(autoRuns.map((r) =>
      quantile(
        r.filter((l) => l.kind === "client" && l.class === "mouse" && l.sec === s).flatMap((l) =>
          l.lat as number[]
        ),
        0.5,
      )
    ));
    console.log(
      `| ${s} | ${col("upstream", (l) => l.workers as number)} | ${
        num(col("gateway", (l) => l.limit as number))
      } | ${num(col("gateway", (l) => l.levelLimit as number))} | ${
        num(col("upstream", (l) => quantile(l.held as number[], 0.9)))
      } | ${num(col("upstream", (l) => l.done as number))} | ${ms(mouse)} | ${pins} |`,
    );
  }
}

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a }, (_, i) => a + i);
}
