/**
 * Summarizes a V8 `.cpuprofile` (from `deno run --cpu-prof`) by self time:
 * the functions where the samples landed, with their share of all samples.
 *
 * Run: `deno run --allow-read bench/cpuprofile_summary.ts <file.cpuprofile> [top=30]`.
 *
 * @module
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
}

const [file, topArg] = Deno.args;
if (file === undefined) throw new TypeError("Cannot summarize: give a .cpuprofile file");
const profile: Profile = JSON.parse(Deno.readTextFileSync(file));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const hits = new Map<number, number>();
if (profile.samples !== undefined) {
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
} else {
  for (const n of profile.nodes) hits.set(n.id, n.hitCount ?? 0);
}
const self = new Map<string, number>();
let total = 0;
for (const [id, count] of hits) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = url === ""
    ? ""
    : ` ${url.replace(/^.*\/(node_modules|src|ext)\//, "$1/")}:${lineNumber + 1}`;
  const key = `${functionName || "(anonymous)"}${where}`;
  self.set(key, (self.get(key) ?? 0) + count);
  total += count;
}
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30));
console.log(`${total} samples`);
for (const [key, count] of top) {
  console.log(`${(100 * count / total).toFixed(1).padStart(5)}%  ${key}`);
}
