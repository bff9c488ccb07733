/**
 * Summarizes bench/adaptive_hono_wrk.sh's TSV: per variant and connections
 * the median req/s (and range), p50 and p99 over the rounds, and the paired
 * ratio of `apf-auto` to `apf-static` at the same connections (the median
 * over the rounds of each round's ratio; the goal is ≥ 0.95x).
 *
 * Run: `deno run --allow-read bench/adaptive_hono_summary.ts results.tsv`.
 *
 * @module
 */

import { median, readWrkTsv } from "./_wrk_tsv.ts";

const [file] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give the TSV file");
const { byVariant, byRound } = readWrkTsv(file);

/** Median over the rounds of `v`'s req/s divided by `ref`'s in the same round. */
function paired(v: string, ref: string): number {
  const ratios: number[] = [];
  for (const [key, rps] of byRound) {
    const [round, variant] = key.split("\t");
    const other = byRound.get(`${round}\t${ref}`);
    if (variant === v && other !== undefined) ratios.push(rps / other);
  }
  return ratios.length === 0 ? NaN : median(ratios);
}

const fmt = (x: number) => Math.round(x).toLocaleString("en");
console.log(
  "| variant | req/s (median) | req/s (min–max) | p50 | p99 | vs apf-static (paired) | non-2xx |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [v, e] of [...byVariant].sort(([a], [b]) => a.localeCompare(b))) {
  const conns = v.split("@")[1];
  const ratio = paired(v, `apf-static@${conns}`);
  console.log(
    `| ${v} | ${fmt(median(e.rps))} | ${fmt(Math.min(...e.rps))}–${fmt(Math.max(...e.rps))} | ${
      median(e.p50).toFixed(0)
    } µs | ${median(e.p99).toFixed(0)} µs | ${ratio.toFixed(3)}x${
      v.startsWith("apf-auto") ? (ratio >= 0.95 ? " (met)" : " (**not met**)") : ""
    } | ${e.bad} |`,
  );
}
