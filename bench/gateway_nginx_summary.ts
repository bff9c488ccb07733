/**
 * Summarizes bench/gateway_nginx.sh's TSV: per variant `<name>@<connections>`
 * the median req/s, p50 and p99 over the rounds, and the paired ratio to
 * nginx at the same connections: the median over the rounds of each
 * round's ratio, steadier on a noisy machine than the ratio of the medians;
 * and the median CPU time the server spent per request, user and system.
 *
 * Run: `deno run --allow-read bench/gateway_nginx_summary.ts results.tsv`.
 *
 * @module
 */

import { median, readWrkTsv } from "./_wrk_tsv.ts";

const [file] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give the TSV file");
const { byVariant, byRound } = readWrkTsv(file);

/** The median over the rounds of `v`'s req/s over nginx's at the same connections. */
function vsNginx(v: string): number {
  const conns = v.slice(v.indexOf("@"));
  const ratios: number[] = [];
  for (const [key, rps] of byRound) {
    const [round, variant] = key.split("\t");
    const ref = byRound.get(`${round}\tnginx${conns}`);
    if (variant === v && ref !== undefined) ratios.push(rps / ref);
  }
  return ratios.length === 0 ? NaN : median(ratios);
}

const n = (x: number) => Math.round(x).toLocaleString("en");
console.log(
  "| variant | req/s (median) | req/s (min–max) | p50 | p99 | vs nginx (paired) | non-2xx | CPU µs per request (user + system) |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
const cpu = (e: { user: number[]; sys: number[] }) =>
  e.user.length === 0 ? "–" : `${n(median(e.user))} + ${n(median(e.sys))}`;
for (const [v, e] of [...byVariant].sort(([a], [b]) => a.localeCompare(b))) {
  const ratio = vsNginx(v);
  console.log(
    `| ${v} | ${n(median(e.rps))} | ${n(Math.min(...e.rps))}–${n(Math.max(...e.rps))} | ${
      n(median(e.p50))
    } µs | ${n(median(e.p99))} µs | ${
      Number.isNaN(ratio) ? "–" : `${ratio.toFixed(2)}x`
    } | ${e.bad} | ${cpu(e)} |`,
  );
}
