/**
 * Summarizes bench/gateway_wrk.sh's TSV: per connection count and variant
 * the median req/s, p50 and p99 latency over the rounds and the non-2xx
 * total; then the gateway's added latency (gateway − direct) and APF's
 * share of it (gateway − plain proxy), each the difference of the medians.
 *
 * Run: `deno run --allow-read bench/gateway_wrk_summary.ts results.tsv`.
 *
 * @module
 */

const [file] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give the TSV file");
const rows = Deno.readTextFileSync(file).trim().split("\n").slice(1).map((l) => l.split("\t"));
interface Cell {
  rps: number[];
  p50: number[];
  p99: number[];
  non2xx: number;
}
const cells = new Map<string, Cell>();
const conns: string[] = [];
const variants: string[] = [];
for (const [, c, v, rps, p50, p99, bad] of rows) {
  if (!conns.includes(c!)) conns.push(c!);
  if (!variants.includes(v!)) variants.push(v!);
  const key = `${c}/${v}`;
  const e = cells.get(key) ?? { rps: [], p50: [], p99: [], non2xx: 0 };
  e.rps.push(Number(rps));
  e.p50.push(Number(p50));
  e.p99.push(Number(p99));
  e.non2xx += Number(bad);
  cells.set(key, e);
}
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const fmt = (n: number) => Math.round(n).toLocaleString("en");
const us = (n: number) => `${n.toFixed(0)} µs`;
const signed = (n: number) => `${n >= 0 ? "+" : "−"}${Math.abs(n).toFixed(0)} µs`;

console.log("| connections | variant | req/s (median) | req/s (min–max) | p50 | p99 | non-2xx |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const c of conns) {
  for (const v of variants) {
    const e = cells.get(`${c}/${v}`);
    if (e === undefined) continue;
    console.log(
      `| ${c} | ${v} | ${fmt(median(e.rps))} | ${fmt(Math.min(...e.rps))}–${
        fmt(Math.max(...e.rps))
      } | ${us(median(e.p50))} | ${us(median(e.p99))} | ${e.non2xx} |`,
    );
  }
}
console.log();
console.log(
  "| connections | added p50 (gateway − direct) | added p99 | APF's share p50 (gateway − proxy) | APF's share p99 | req/s gateway / direct | gateway / proxy |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const c of conns) {
  const d = cells.get(`${c}/direct`), p = cells.get(`${c}/proxy`), g = cells.get(`${c}/gateway`);
  if (d === undefined || p === undefined || g === undefined) continue;
  const m = (e: Cell, k: "rps" | "p50" | "p99") => median(e[k]);
  console.log(
    `| ${c} | ${signed(m(g, "p50") - m(d, "p50"))} | ${signed(m(g, "p99") - m(d, "p99"))} | ${
      signed(m(g, "p50") - m(p, "p50"))
    } | ${signed(m(g, "p99") - m(p, "p99"))} | ${(m(g, "rps") / m(d, "rps")).toFixed(2)}x | ${
      (m(g, "rps") / m(p, "rps")).toFixed(2)
    }x |`,
  );
}
