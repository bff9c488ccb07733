/**
 * Budget holders over Deno KV on the real clock, with short periods: three
 * holders of one process on one KV file under a flood, a malformed ledger,
 * a holder on the store behind `apf()`, and three processes sharing one KV
 * file, one of which is killed. The holder logic itself is tested on the
 * fake clock in `tests/budgets/`; here the point is the engine.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { BudgetHolder } from "../../mod.ts";
import { KvBudgetStore } from "../../src/deno/mod.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { waitFor } from "../_helpers/real_time.ts";
import { CONFIG, flood, LEVEL, LIMIT, sleep, TIMINGS, wallTime } from "./_kv_flood.ts";
import { kvFile } from "./_kv_files.ts";

const budgetOf = (holder: BudgetHolder) => holder.budgets().find((b) => b.level === LEVEL)!;
const seatsInUse = (holder: BudgetHolder) =>
  holder.snapshot().levels.find((l) => l.name === LEVEL)!.queueSet.seatsInUse;

Deno.test("Deno KV holders in one process: a flood never exceeds the limit; latecomers get fair shares", async () => {
  await using file = await kvFile();
  // One KV handle each, as separate isolates would have.
  const kvs = await Promise.all([0, 1, 2].map(() => Deno.openKv(file.path)));
  const holders = kvs.map((kv, i) =>
    new BudgetHolder(CONFIG, { store: new KvBudgetStore(kv), id: `h${i}`, ...TIMINGS })
  );
  let peak = 0, peakRunning = 0, running = 0;
  const admitted = [0, 0, 0];
  const floods = holders.map((holder, i) => ({
    holder,
    start: () =>
      flood(holder, 20, {
        onAdmit: () => {
          admitted[i]!++;
          peakRunning = Math.max(peakRunning, ++running);
          peak = Math.max(peak, holders.reduce((sum, h) => sum + seatsInUse(h), 0));
        },
        onRelease: () => running--,
      }),
  }));
  const started = [floods[0]!.start()];
  try {
    await Promise.all(holders.map((h) => h.ready()));
    await waitFor(
      () => budgetOf(holders[0]!).capacity === LIMIT,
      "h0 alone takes the level",
      1_500,
    );
    started.push(floods[1]!.start(), floods[2]!.start());
    await waitFor(
      () => holders.every((h) => budgetOf(h).capacity === LIMIT / 3),
      "the three shares to be equal",
      2_000,
    );
    // Fair in the work done too: each gets about a third of the admissions.
    admitted.fill(0);
    await sleep(400);
    const total = admitted.reduce((a, b) => a + b, 0);
    assert.ok(total > 0);
    for (const [i, n] of admitted.entries()) {
      assert.ok(n >= total / 5, `h${i} got ${n} of ${total} admissions`);
    }
    assert.ok(peak <= LIMIT, `at most ${LIMIT} seats in use over the holders, saw ${peak}`);
    assert.ok(peakRunning <= LIMIT, `at most ${LIMIT} requests running, saw ${peakRunning}`);
    assert.equal(peak, LIMIT, "the level was full");
  } finally {
    const stopping = started.map((f) => f.stop());
    for (const h of holders) h.close();
    await Promise.all(stopping);
    for (const kv of kvs) kv.close();
  }
});

Deno.test("Deno KV holder: a malformed line is reported once and dropped; the holder takes its budget", async () => {
  await using file = await kvFile();
  const kv = await Deno.openKv(file.path);
  const errors: unknown[] = [];
  const warnings: string[] = [];
  const key = ["apf", "budgets", LEVEL];
  await kv.set(key, { holders: { someone: { claim: "all" } } });
  const holder = new BudgetHolder(CONFIG, {
    store: new KvBudgetStore(kv, { where: "kv:ledgers.sqlite" }),
    ...TIMINGS,
    onStoreError: (e) => errors.push(e),
    onWarning: (m) => warnings.push(m),
  });
  try {
    await holder.ready();
    assert.equal(budgetOf(holder).mode, "budget", "not a store failure");
    assert.deepEqual(errors, []);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /level "work": the store kv:ledgers\.sqlite holds a line no holder could write, "someone": not a line a holder writes at claim: .*string/,
    );
    const stored = (await kv.get<{ holders: Record<string, unknown> }>(key)).value!;
    assert.deepEqual(Object.keys(stored.holders), [holder.id], "dropped at the first write");
  } finally {
    holder.close();
    kv.close();
  }
});

Deno.test("a holder on the Deno KV store behind apf(): requests served on the budget, ledgers under the prefix", async () => {
  await using file = await kvFile();
  const kv = await Deno.openKv(file.path);
  const store = new KvBudgetStore(kv, { prefix: ["site", "apf"] });
  const coordinator = new BudgetHolder(CONFIG, { store, ...TIMINGS });
  const app = new Hono<ApfEnv>();
  app.use(apf({ config: CONFIG, coordinator }));
  app.get("/", (c) => c.text(c.get("apf").classification.priorityLevel.name));
  try {
    await coordinator.ready();
    const response = await app.request("/");
    assert.equal(response.status, 200);
    assert.equal(await response.text(), "catch-all");
    const ledger = await kv.get<{ holders: Record<string, { claim: number }> }>(
      ["site", "apf", "catch-all"],
    );
    assert.ok(ledger.value?.holders[coordinator.id] !== undefined, "its line in the ledger");
    assert.equal((await kv.get(["apf", "budgets", "catch-all"])).versionstamp, null);
  } finally {
    coordinator.close();
    kv.close();
  }
});

// ---- several processes --------------------------------------------------------------------

const CHILD = new URL("./_kv_budget_child.ts", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;

/** One holder process and what it printed so far. */
interface HolderProcess {
  readonly id: string;
  readonly process: Deno.ChildProcess;
  /** Seats taken (+1) and released (-1), by wall time. */
  readonly events: { t: number; d: 1 | -1 }[];
  /** Its budget of `work`, by wall time. */
  readonly budgets: { t: number; claim: number; capacity: number; leaseEndsAt: number }[];
  /** Seats in use now, as printed. */
  open: number;
  readonly ready: Promise<void>;
  /** Standard output and error, once the process has ended. */
  readonly output: Promise<{ stdout: string; stderr: string }>;
}

function spawnHolder(file: { path: string; dir: string }, id: string): HolderProcess {
  const process = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--unstable-kv",
      `--allow-read=${file.dir}`,
      `--allow-write=${file.dir}`,
      CHILD,
      file.path,
      id,
    ],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let isReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => isReady = resolve);
  const holder: HolderProcess = {
    id,
    process,
    events: [],
    budgets: [],
    open: 0,
    ready,
    output: Promise.resolve({ stdout: "", stderr: "" }),
  };
  const onLine = (line: string) => {
    const [kind, t, ...rest] = line.split(" ");
    if (kind === "ready") isReady();
    else if (kind === "+" || kind === "-") {
      const d = kind === "+" ? 1 : -1;
      holder.events.push({ t: Number(t), d });
      holder.open += d;
    } else if (kind === "b") {
      const [claim, capacity, leaseEndsAt] = rest.map(Number) as [number, number, number];
      holder.budgets.push({ t: Number(t), claim, capacity, leaseEndsAt });
    }
  };
  const stdout = (async () => {
    let all = "", partial = "";
    for await (const text of process.stdout.pipeThrough(new TextDecoderStream())) {
      all += text;
      const lines = (partial + text).split("\n");
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
    }
    return all;
  })();
  const stderr = new Response(process.stderr).text();
  return Object.assign(holder, {
    output: Promise.all([stdout, stderr]).then(([out, err]) => ({ stdout: out, stderr: err })),
  });
}

/** The most seats in use at once over `processes`, from their events (`ends`: when each died). */
function peakOf(processes: HolderProcess[], ends: Map<string, number> = new Map()): number {
  const events = processes.flatMap((p) => {
    const open = p.events.reduce((sum, e) => sum + e.d, 0);
    const end = ends.get(p.id);
    // A killed process held its open seats until it died.
    return end === undefined || open === 0 ? p.events : [...p.events, { t: end, d: -open }];
  }).sort((a, b) => a.t - b.t);
  let inUse = 0, peak = 0;
  for (const e of events) peak = Math.max(peak, inUse += e.d);
  return peak;
}

/** Seats in use by `p` at wall time `t`. */
const inUseAt = (p: HolderProcess, t: number) =>
  p.events.reduce((sum, e) => sum + (e.t <= t ? e.d : 0), 0);

Deno.test({
  name:
    "Deno KV holders in three processes on one KV file: never above the limit, each served; a killed one's seats come back after its lease",
  fn: async () => {
    await using file = await kvFile();
    const processes = ["p0", "p1", "p2"].map((id) => spawnHolder(file, id));
    const [a, b, c] = processes as [HolderProcess, HolderProcess, HolderProcess];
    const deaths = new Map<string, number>();
    const describe = async () => {
      const outputs = await Promise.all(processes.map((p) => p.output));
      return outputs.map((o, i) => `${processes[i]!.id}: ${o.stderr.trim()}`).join("\n");
    };
    try {
      const started = Promise.all(processes.map((p) => p.ready));
      await Promise.race([started, sleep(15_000).then(() => assert.fail("not ready in 15 s"))]);
      const t0 = wallTime();
      // All three flooded: each is served, about a third each.
      await waitFor(
        () => processes.every((p) => p.budgets.at(-1)?.capacity === LIMIT / 3),
        "three equal shares",
        2_000,
      );
      await sleep(600);
      const killedAt = wallTime();
      for (const p of processes) {
        const served = p.events.filter((e) => e.d === 1 && e.t >= t0).length;
        assert.ok(served >= 10, `${p.id} was served ${served} times`);
      }
      // SIGKILL: c's seats in the ledger stay claimed until its lease, the drain time and
      // the skew bound have passed, then a and b take them.
      const lastLease = c.budgets.at(-1)!.leaseEndsAt;
      c.process.kill("SIGKILL");
      await c.process.status;
      const diedAt = wallTime();
      deaths.set(c.id, diedAt);
      const heldAtDeath = c.open;
      await waitFor(
        () => a.open + b.open === LIMIT,
        "a and b to take the killed process's seats",
        3_000,
      );
      const backAt = wallTime();
      await sleep(200);
      // The invariant, over the whole run.
      assert.ok(
        peakOf(processes, deaths) <= LIMIT,
        `at most ${LIMIT} seats in use over the processes, saw ${peakOf(processes, deaths)}`,
      );
      // c's claim counted until its lease ended and drained: a and b stayed within the rest.
      const guarded = [...a.events, ...b.events]
        .filter((e) => e.t >= diedAt && e.t <= lastLease + TIMINGS.drainMs!)
        .map((e) => inUseAt(a, e.t) + inUseAt(b, e.t));
      assert.ok(
        guarded.every((n) => n <= LIMIT - heldAtDeath),
        `a and b used c's ${heldAtDeath} seats before its lease ended: ${Math.max(...guarded)}`,
      );
      const bound = TIMINGS.leaseMs! + TIMINGS.drainMs! + TIMINGS.driftMarginMs! +
        3 * TIMINGS.periodMs! + 500;
      assert.ok(
        backAt - killedAt <= bound,
        `the seats came back ${Math.round(backAt - killedAt)} ms after the kill (bound ${bound})`,
      );
      assert.equal(a.budgets.at(-1)!.capacity + b.budgets.at(-1)!.capacity, LIMIT);
    } catch (error) {
      for (const p of processes) await p.process.stdin.close().catch(() => {});
      throw new Error(`${error}\n${await describe()}`);
    } finally {
      for (const p of processes) await p.process.stdin.close().catch(() => {});
      const statuses = await Promise.all(processes.map((p) => p.process.status));
      await Promise.all(processes.map((p) => p.output));
      for (const [i, status] of statuses.entries()) {
        if (processes[i] !== c) assert.equal(status.code, 0, `${processes[i]!.id} exit code`);
      }
    }
  },
});
