/**
 * Summarizes bench/hono_wrk.sh's TSV: per variant the median req/s, p50 and
 * p99 latency and server CPU per request over the rounds; when the no-op
 * middleware (`noop`) was measured, the throughput ratio to it and the
 * server time per request over it (1/throughput difference: with wrk
 * saturating the server, its time per request is about 1/throughput).
 *
 * With a second argument, a variant (e.g. `hdrafter`), also the paired
 * ratio to it: the median over the rounds of each round's ratio, steadier
 * on a noisy machine than the ratio of the medians.
 *
 * Run: `deno run --allow-read bench/hono_wrk_summary.ts results.tsv [reference]`.
 *
 * @module
 */

const [file, reference] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give the TSV file");
const rows = Deno.readTextFileSync(file).trim().split("\n").slice(1).map((l) => l.split("\t"));
const byVariant = new Map<string, { rps: number[]; p50: number[]; p99: number[]; cpu: number[] }>();
const byRound = new Map<string, number>();
for (const [round, v, rps, p50, p99, cpu] of rows) {
  byRound.set(`${round}\t${v}`, Number(rps));
  const e = byVariant.get(v!) ?? { rps: [], p50: [], p99: [], cpu: [] };
  e.rps.push(Number(rps));
  e.p50.push(Number(p50));
  e.p99.push(Number(p99));
  e.cpu.push(Number(cpu));
  byVariant.set(v!, e);
}
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
/** Median over the rounds of `v`'s req/s divided by `reference`'s in the same round. */
function paired(v: string): number {
  const ratios: number[] = [];
  for (const [key, rps] of byRound) {
    const [round, variant] = key.split("\t");
    const ref = byRound.get(`${round}\t${reference}`);
    if (variant === v && ref !== undefined) ratios.push(rps / ref);
  }
  return ratios.length === 0 ? NaN : median(ratios);
}
// Without the no-op in the run, there is nothing to put those two columns against.
const noop = byVariant.get("noop");
const noopRps = noop === undefined ? null : median(noop.rps);
const heads = ["variant", "req/s (median)", "req/s (min–max)", "p50", "p99", "CPU µs/request"];
if (noopRps !== null) heads.push("vs no-op", "µs/request over no-op");
if (reference !== undefined) heads.push(`paired vs ${reference}`);
console.log(`| ${heads.join(" | ")} |`);
console.log(`|${" --- |".repeat(heads.length)}`);
const count = (n: number) => Math.round(n).toLocaleString("en");
for (const [v, e] of byVariant) {
  const rps = median(e.rps);
  const cells = [
    v,
    count(rps),
    `${count(Math.min(...e.rps))}–${count(Math.max(...e.rps))}`,
    `${median(e.p50).toFixed(0)} µs`,
    `${median(e.p99).toFixed(0)} µs`,
    median(e.cpu).toFixed(1),
  ];
  if (noopRps !== null) {
    cells.push(`${(rps / noopRps).toFixed(2)}x`, ((1 / rps - 1 / noopRps) * 1e6).toFixed(2));
  }
  if (reference !== undefined) cells.push(`${paired(v).toFixed(3)}x`);
  console.log(`| ${cells.join(" | ")} |`);
}
