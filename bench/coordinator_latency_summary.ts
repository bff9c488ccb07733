/**
 * Summarizes `bench/coordinator_latency.sh`'s NDJSON: per K and transport,
 * the p50 and p99 of each round and their medians, as a Markdown table.
 *
 * Run: `deno run --allow-read bench/coordinator_latency_summary.ts <file.ndjson>`.
 *
 * @module
 */

interface Row {
  round: number;
  transport: string;
  K: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const rows: Row[] = (await Deno.readTextFile(Deno.args[0]!)).split("\n").filter((l) => l !== "")
  .map((l) => JSON.parse(l));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ms = (x: number) => x < 1 ? `${(x * 1000).toFixed(0)} µs` : `${x.toFixed(1)} ms`;

console.log(
  "| K | transport | p50 per round | p99 per round | median p50 | median p99 | acquires/s (median) |",
);
console.log(
  "| - | --------- | ------------- | ------------- | ---------- | ---------- | ------------------- |",
);
for (const K of [...new Set(rows.map((r) => r.K))].sort((a, b) => a - b)) {
  for (const transport of ["builtin", "nodelay"]) {
    const rs = rows.filter((r) => r.K === K && r.transport === transport).sort((a, b) =>
      a.round - b.round
    );
    if (rs.length === 0) continue;
    console.log(
      `| ${K} | ${transport} | ${rs.map((r) => ms(r.p50Ms)).join(", ")} | ${
        rs.map((r) => ms(r.p99Ms)).join(", ")
      } | ${ms(median(rs.map((r) => r.p50Ms)))} | ${ms(median(rs.map((r) => r.p99Ms)))} | ${
        median(rs.map((r) => r.perSecond)).toFixed(0)
      } |`,
    );
  }
}
