/**
 * Compares two V8 `.cpuprofile`s (from `deno run --cpu-prof`) of the same
 * server under different loads, per request: each source file's (or native
 * operation's) self time divided by the requests served while the profile
 * ran, side by side and sorted by how much it grew. Where a share of
 * samples says only that a part's weight moved, this says which parts cost
 * more per request (as all of `apf serve`'s did at 64 connections against
 * 16, `bench/RESULTS.md`).
 *
 * A sample's time is the profile's duration over its samples. The requests
 * are wrk's "requests in" count for the profiled run (both profiles should
 * cover the same run as wrk, warm-up excluded).
 *
 * Run: `deno run --allow-read bench/cpuprofile_compare.ts <a.cpuprofile> <requests> <b.cpuprofile> <requests> [top=25]`.
 *
 * @module
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  startTime: number;
  endTime: number;
}

/** Microseconds of self time per source file (or native function), over the whole profile. */
function selfTimeByFile(path: string): Map<string, number> {
  const profile: Profile = JSON.parse(Deno.readTextFileSync(path));
  if (!Array.isArray(profile.samples) || profile.samples.length === 0) {
    throw new TypeError(`Cannot compare: ${path} has no samples`);
  }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const perSample = (profile.endTime - profile.startTime) / profile.samples.length;
  const out = new Map<string, number>();
  for (const id of profile.samples) {
    const { functionName, url } = byId.get(id)!.callFrame;
    const key = url === "" ? functionName : url.replace(/^.*\/(node_modules|src|ext)\//, "$1/");
    out.set(key, (out.get(key) ?? 0) + perSample);
  }
  return out;
}

const [fileA, requestsA, fileB, requestsB, topArg] = Deno.args;
const nA = Number(requestsA), nB = Number(requestsB);
if (fileA === undefined || fileB === undefined || !(nA > 0) || !(nB > 0)) {
  throw new TypeError(
    "Cannot compare: give two .cpuprofile files, each followed by the requests it served",
  );
}
const a = selfTimeByFile(fileA), b = selfTimeByFile(fileB);
const rows = [...new Set([...a.keys(), ...b.keys()])].map((key) => ({
  key,
  a: (a.get(key) ?? 0) / nA,
  b: (b.get(key) ?? 0) / nB,
}));
const busy = (side: "a" | "b") =>
  rows.reduce((sum, r) => sum + (r.key === "(idle)" ? 0 : r[side]), 0);
rows.sort((x, y) => (y.b - y.a) - (x.b - x.a));
console.log("| self time per request | a (µs) | b (µs) | b − a |");
console.log("| --- | --- | --- | --- |");
console.log(
  `| all but (idle) | ${busy("a").toFixed(1)} | ${busy("b").toFixed(1)} | ${
    (busy("b") - busy("a")).toFixed(1)
  } |`,
);
for (const r of rows.slice(0, Number(topArg ?? 25))) {
  console.log(`| ${r.key} | ${r.a.toFixed(2)} | ${r.b.toFixed(2)} | ${(r.b - r.a).toFixed(2)} |`);
}
