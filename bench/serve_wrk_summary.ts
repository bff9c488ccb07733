/**
 * Summarizes bench/serve_wrk.sh's TSV: per variant `<server>/<app>` the
 * median req/s, p50 and p99 over the rounds, the ratio to the same app on
 * `Deno.serve` (`deno/<app>`), and for the gateway the ratio to the plain
 * Hono fetch proxy on `Deno.serve` (`deno/proxy`), the gateway's target.
 *
 * With a second argument, a variant (e.g. `guarded/proxy`), also the
 * paired ratio to it: the median over the rounds of each round's ratio,
 * steadier on a noisy machine than the ratio of the medians.
 *
 * Run: `deno run --allow-read bench/serve_wrk_summary.ts results.tsv [reference]`.
 *
 * @module
 */

import { median, readWrkTsv } from "./_wrk_tsv.ts";

const [file, reference] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give the TSV file");
const { byVariant, byRound } = readWrkTsv(file);

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
const rpsOf = (v: string) => {
  const e = byVariant.get(v);
  return e === undefined ? NaN : median(e.rps);
};
const n = (x: number) => Math.round(x).toLocaleString("en");
const pairedHead = reference === undefined ? "" : ` paired vs ${reference} |`;
console.log(
  `| variant | req/s (median) | req/s (min–max) | p50 | p99 | vs same app on Deno.serve | vs deno/proxy | non-2xx |${pairedHead}`,
);
console.log(
  `| --- | --- | --- | --- | --- | --- | --- | --- |${reference === undefined ? "" : " --- |"}`,
);
for (const [v, e] of byVariant) {
  const rps = median(e.rps);
  const app = v.slice(v.indexOf("/") + 1);
  console.log(
    `| ${v} | ${n(rps)} | ${n(Math.min(...e.rps))}–${n(Math.max(...e.rps))} | ${
      n(median(e.p50))
    } µs | ${n(median(e.p99))} µs | ${(rps / rpsOf(`deno/${app}`)).toFixed(2)}x | ${
      app === "hello" ? "" : `${(rps / rpsOf("deno/proxy")).toFixed(2)}x`
    } | ${e.bad} |${reference === undefined ? "" : ` ${paired(v).toFixed(3)}x |`}`,
  );
}
