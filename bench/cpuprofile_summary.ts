/**
 * Summarizes a V8 `.cpuprofile` (from `deno run --cpu-prof`) by self time:
 * the functions where the samples landed, with their share of all samples.
 *
 * Run: `deno run --allow-read bench/cpuprofile_summary.ts <file.cpuprofile> [top=30] [groups]`.
 * With `groups`, also prints the busy (non-idle) samples by part of the
 * coordinator server (`bench/coordinator_remote_bench.ts`).
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

const [file, topArg, groupsArg] = Deno.args;
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

if (groupsArg === "groups") {
  // The coordinator server's parts, first match wins; shares of the busy samples.
  const groups: [string, RegExp][] = [
    ["idle", /^\(idle\)/],
    ["JSON.parse (self time of wire.ts decode)", /^decode src\/coordinator\/wire\.ts/],
    ["zod validation", /node_modules\/zod\//],
    ["JSON.stringify (encodeMessage)", /^encodeMessage /],
    [
      "lease timers (setTimeout/clearTimeout per seat)",
      /timers|Timeout|op_timer|clock\.ts|createTimer|cancelTimer|L_remove|L_append/,
    ],
    ["WebSocket (ops, events)", /op_ws_|websocket|MessageEvent|02_event\.js/],
    ["garbage collector", /^\(garbage collector\)/],
    ["queue set", /src\/fairqueuing\//],
    ["coordinator, sessions, connection", /src\/coordinator\//],
  ];
  const by = new Map<string, number>();
  for (const [key, count] of self) {
    const g = groups.find(([, re]) => re.test(key))?.[0] ?? "other";
    by.set(g, (by.get(g) ?? 0) + count);
  }
  const busy = total - (by.get("idle") ?? 0);
  console.log(`\n${busy} busy samples, by part:`);
  for (const [g, count] of [...by].sort((a, b) => b[1] - a[1])) {
    if (g !== "idle") console.log(`${(100 * count / busy).toFixed(1).padStart(5)}%  ${g}`);
  }
}
