/**
 * Budget holders on one real `redis-server`, on the real clock with short
 * periods (100 ms, leases of 400 ms): a refused credential stops a holder
 * at `ready()`; a stopped server leads to the policy once the lease ends,
 * and back to a budget once the server is back; three holders under a
 * flood, in this process and then in three child processes
 * (`_flood_child.ts`), never have more seats in use together than the
 * level's limit, and share it fairly. Ignored, with a word, where redis-server is not
 * installed.
 */

import assert from "node:assert/strict";
import { BudgetHolder, type BudgetHolderOptions } from "../../src/budgets/holder.ts";
import { StoreRefusedError } from "../../src/budgets/store.ts";
import type { SeatRequest } from "../../src/coordinator/types.ts";
import { systemClock } from "../../src/fairqueuing/clock.ts";
import { RedisBudgetStore } from "../../src/redis/mod.ts";
import { captureConsole } from "../_helpers/console.ts";
import { sleep, waitFor, within } from "../_helpers/real_time.ts";
import { type ChildReport, FLOOD_CONFIG } from "./_flood_child.ts";
import { REDIS_MISSING, startRedis } from "../_helpers/redis_server.ts";

const CONFIG = FLOOD_CONFIG;
const LIMIT = 6;
assert.equal(CONFIG.priorityLevels.find((l) => l.name === "work")!.nominal, LIMIT);

/** Short terms on the real clock: settle every 100 ms, a lease of 400 ms. */
const TERMS: Partial<BudgetHolderOptions> = {
  periodMs: 100,
  leaseMs: 400,
  drainMs: 200,
  driftMarginMs: 50,
  storeTimeoutMs: 300,
};

let flow = 0;
const request = (): SeatRequest => ({
  priorityLevel: "work",
  flowSchema: "fs",
  flowHash: { hi: 0, lo: flow++ },
  waitLimitMs: 5_000,
});

const work = (holder: BudgetHolder) => holder.budgets().find((b) => b.level === "work")!;
const seatsInUse = (holder: BudgetHolder) =>
  holder.snapshot().levels.find((l) => l.name === "work")!.queueSet.seatsInUse;

Deno.test({
  name: "Redis holders: a refused credential rejects ready() with the StoreRefusedError",
  ignore: REDIS_MISSING,
  fn: async () => {
    const server = await startRedis({ password: "right" });
    const store = new RedisBudgetStore(`redis://:wrong@127.0.0.1:${server.port}`);
    using logged = captureConsole("error");
    // A first settle that timed out would count as an outage: time enough for the refusal.
    const holder = new BudgetHolder(CONFIG, {
      store,
      ...TERMS,
      storeTimeoutMs: 3_000,
      policy: "open",
    });
    try {
      await assert.rejects(holder.ready(), StoreRefusedError);
      await assert.rejects(holder.acquire(request()), /127\.0\.0\.1:\d+ refused this holder/);
      assert.ok(logged.lines().some((l) => /refused this holder's credential/.test(l)));
      assert.ok(logged.lines().every((l) => !l.includes(":wrong@")));
    } finally {
      holder.close();
      await store.close();
      await server.stop();
    }
  },
});

Deno.test({
  name:
    "Redis holders: with the server stopped, the policy once the lease ends; a budget again once it is back",
  ignore: REDIS_MISSING,
  fn: async () => {
    const server = await startRedis();
    const store = new RedisBudgetStore(server.url);
    const errors: unknown[] = [];
    const holder = new BudgetHolder(CONFIG, {
      store,
      ...TERMS,
      policy: "local",
      onStoreError: (e) => errors.push(e),
    });
    try {
      await holder.ready();
      const admission = await holder.acquire(request());
      assert.ok(admission.admitted);
      admission.seat.release();
      await waitFor(() => work(holder).mode === "budget" && work(holder).claim >= 1, "a budget");

      await server.stop();
      const stopped = systemClock.now();
      await sleep(100);
      assert.equal(work(holder).mode, "budget", "still on its lease");
      await waitFor(() => work(holder).mode === "local", "the local policy", 2_000);
      const after = systemClock.now() - stopped;
      assert.ok(after >= 250 && after <= 1_500, `the policy ${after.toFixed(0)} ms after the stop`);
      assert.equal(work(holder).capacity, Math.ceil(LIMIT * 0.1), "the local fraction");
      assert.ok(errors.length > 0, "the failures were reported");
      assert.ok(errors.every((e) => !(e instanceof StoreRefusedError)));
      const local = await holder.acquire(request());
      assert.ok(local.admitted, "the local policy admits");
      local.seat.release();

      await server.restart();
      await waitFor(() => work(holder).mode === "budget", "a budget again", 2_000);
      assert.equal(holder.stats.failures, errors.length);
    } finally {
      holder.close();
      await store.close();
      await server.stop();
    }
  },
});

/**
 * Keeps `backlog` requests of `holder` in flight, each holding its seat for
 * `workMs` once admitted; `onAdmit` is told of every admission as it
 * happens.
 */
function flood(holder: BudgetHolder, backlog: number, workMs: number, onAdmit: () => void) {
  let stopped = false;
  let admitted = 0;
  const worker = async () => {
    while (!stopped) {
      const admission = await holder.acquire(request());
      if (!admission.admitted) {
        await sleep(10);
        continue;
      }
      admitted++;
      onAdmit();
      await sleep(workMs);
      admission.seat.release();
    }
  };
  const workers = Array.from({ length: backlog }, worker);
  return {
    get admitted() {
      return admitted;
    },
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

Deno.test({
  name:
    "Redis holders: three holders under a flood never exceed the level together, and share it fairly",
  ignore: REDIS_MISSING,
  fn: async () => {
    const server = await startRedis();
    // One store (one connection) per holder, as in separate processes.
    const stores = Array.from({ length: 3 }, () => new RedisBudgetStore(server.url));
    const holders = stores.map((store, i) =>
      new BudgetHolder(CONFIG, { store, id: `h${i}`, ...TERMS, policy: "closed" })
    );
    let peak = 0;
    const onAdmit = () => {
      peak = Math.max(peak, holders.reduce((sum, h) => sum + seatsInUse(h), 0));
    };
    try {
      await Promise.all(holders.map((h) => h.ready()));
      const floods = holders.map((h) => flood(h, 12, 20, onAdmit));
      await sleep(2_000);
      // Each on a budget of its fair share at once (a holder whose settles were slow for a lease
      // on a loaded machine has none for a while).
      await waitFor(
        () => holders.every((h) => work(h).mode === "budget" && work(h).target === 2),
        "max-min fair shares of 2 seats each",
      );
      await Promise.all(floods.map((f) => f.stop()));

      assert.ok(peak <= LIMIT, `peak ${peak} seats in use over ${LIMIT}`);
      assert.ok(peak >= LIMIT - 1, `the level was used (peak ${peak})`);
      const admitted = floods.map((f) => f.admitted);
      const total = admitted.reduce((a, b) => a + b, 0);
      for (const [i, n] of admitted.entries()) {
        assert.ok(n >= total * 0.2, `holder ${i} admitted ${n} of ${total}: ${admitted}`);
      }
    } finally {
      for (const h of holders) h.close();
      await Promise.all(stores.map((s) => s.close()));
      await server.stop();
    }
  },
});

/** The most intervals that overlap at any time (an interval ending as another starts does not). */
function maxOverlap(intervals: [number, number][]): number {
  const events = intervals.flatMap(([from, to]) => [[from, 1], [to, -1]] as const)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0, max = 0;
  for (const [, delta] of events) max = Math.max(max, now += delta);
  return max;
}

/** A child process running `_flood_child.ts`, read line by line. */
class FloodChild {
  readonly process: Deno.ChildProcess;
  readonly stderr: Promise<string>;
  #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";

  constructor(url: string, id: string, durationMs: number) {
    this.process = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--import-map=dev/import_map.json",
        "--lock=dev/deno.lock",
        "--allow-net=127.0.0.1",
        "tests/redis/_flood_child.ts",
        url,
        id,
        String(durationMs),
      ],
      cwd: new URL("../../", import.meta.url),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.stderr = new Response(this.process.stderr).text();
    this.#reader = this.process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next line it prints; fails with its standard error when it ends first. */
  async line(): Promise<string> {
    while (!this.#buffer.includes("\n")) {
      const { value, done } = await this.#reader.read();
      if (done) assert.fail(`the process ended: ${await this.stderr}`);
      this.#buffer += value;
    }
    const end = this.#buffer.indexOf("\n");
    const line = this.#buffer.slice(0, end);
    this.#buffer = this.#buffer.slice(end + 1);
    return line;
  }

  /** Writes `text` to its standard input, and closes it. */
  async tell(text: string): Promise<void> {
    const writer = this.process.stdin.getWriter();
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  }

  /** Waits for it to end (killing it if `kill`); frees its pipes. */
  async end(kill: boolean): Promise<Deno.CommandStatus> {
    if (kill) {
      try {
        this.process.kill("SIGKILL");
      } catch {
        // It had ended.
      }
    }
    const status = await this.process.status;
    await this.#reader.cancel();
    await this.stderr;
    await this.process.stdin.close().catch(() => {});
    return status;
  }
}

Deno.test({
  name:
    "Redis holders: three processes under a flood never exceed the level together, and share it fairly",
  ignore: REDIS_MISSING,
  fn: async () => {
    const server = await startRedis();
    const children = ["p0", "p1", "p2"].map((id) => new FloodChild(server.url, id, 1_500));
    let ended = false;
    try {
      // Each says `ready` once its holder has settled; then all flood from the same wall time.
      for (const child of children) {
        assert.equal(await within(child.line(), 20_000, "a process ready"), "ready");
      }
      const startAt = performance.timeOrigin + systemClock.now() + 200;
      await Promise.all(children.map((child) => child.tell(`${startAt}\n`)));
      const reports = await within(
        Promise.all(children.map(async (child) => JSON.parse(await child.line()) as ChildReport)),
        10_000,
        "the reports",
      );
      const statuses = await Promise.all(children.map((child) => child.end(false)));
      ended = true;
      assert.ok(statuses.every((s) => s.success));

      const peak = maxOverlap(reports.flatMap((r) => r.intervals));
      assert.ok(peak <= LIMIT, `peak ${peak} seats in use over ${LIMIT}`);
      assert.ok(peak >= LIMIT - 1, `the level was used (peak ${peak})`);
      const admitted = reports.map((r) => r.intervals.length);
      const total = admitted.reduce((a, b) => a + b, 0);
      for (const [i, n] of admitted.entries()) {
        assert.ok(n >= total * 0.2, `process ${i} admitted ${n} of ${total}: ${admitted}`);
      }
    } finally {
      if (!ended) await Promise.all(children.map((child) => child.end(true)));
      await server.stop();
    }
  },
});
