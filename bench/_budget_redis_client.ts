/**
 * One client process of `budget_redis_bench.ts`: `LOOPS` concurrent loops
 * doing acquire → release at once → acquire, on `global-default`, from the
 * start time (wall clock, ms) for `SECONDS`; prints one JSON line with its
 * decisions, the latencies of the acquires (p50, p99, in µs), its CPU time
 * and, for the holder, its store operations during the measured window.
 * Once connected (the holder ready) it prints `ready` and waits for the
 * start time (wall clock, ms) on its stdin, so that every process starts
 * together whatever their start-up took.
 *
 * - `semaphore`: each acquire is one `EVALSHA` of a counting semaphore
 *   (INCR-if-below-limit), each release one `EVALSHA` of its DECR, on one
 *   connection of `@redis/client` (as `src/redis/_connection.ts` makes it).
 * - `holder`: a {@linkcode BudgetHolder} over a {@linkcode RedisBudgetStore}
 *   on the built-in configuration (server limit 600).
 *
 * Run by the driver: `deno run --allow-net=127.0.0.1 --allow-read --allow-env=LOG_TOKENS,LOG_STREAM
 * bench/_budget_redis_client.ts <semaphore|holder> <port> <loops> <seconds> <id>`
 *
 * @module
 */

import process from "node:process";
import { createClient } from "@redis/client";
import { resolveConfiguration } from "../mod.ts";
import type { Coordinator, SeatRequest } from "../mod.ts";
import { BudgetHolder } from "../src/budgets/holder.ts";
import type { Ledger } from "../src/budgets/ledger.ts";
import type { BudgetStore, StoredLedger } from "../src/budgets/store.ts";
import { RedisBudgetStore } from "../src/redis/redis_budget_store.ts";

const [variant, portArg, loopsArg, secondsArg, id] = Deno.args;
if ((variant !== "semaphore" && variant !== "holder") || id === undefined) {
  throw new Error("usage: <semaphore|holder> <port> <loops> <seconds> <id>");
}
const port = Number(portArg);
const LOOPS = Number(loopsArg);
const SECONDS = Number(secondsArg);
/** Each loop yields to the event loop (timers, I/O) after this many decisions. */
const YIELD_EVERY = 256;

/** The semaphore's limit: above what the loops can hold, so it never refuses. */
const SEMAPHORE_LIMIT = 64;
const ACQUIRE_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
return 1
`;
const RELEASE_SCRIPT = `
local n = redis.call('DECR', KEYS[1])
if n < 0 then redis.call('SET', KEYS[1], 0) end
return 1
`;

const request: SeatRequest = {
  priorityLevel: "global-default",
  flowSchema: "global-default",
  flowHash: { hi: 12345, lo: 67890 },
};

/** A store that counts its operations. */
class CountingStore implements BudgetStore {
  reads = 0;
  writes = 0;
  constructor(readonly inner: RedisBudgetStore) {}
  read(level: string): Promise<StoredLedger | null> {
    this.reads++;
    return this.inner.read(level);
  }
  write(level: string, expected: string | null, ledger: Ledger): Promise<boolean> {
    this.writes++;
    return this.inner.write(level, expected, ledger);
  }
}

/** Acquire (returns whether admitted) and release of one variant. */
interface Gate {
  acquire(): Promise<(() => Promise<void> | void) | null>;
  close(): Promise<void>;
}

async function semaphoreGate(): Promise<Gate> {
  const client = createClient({
    socket: { host: "127.0.0.1", port, reconnectStrategy: false },
    disableOfflineQueue: true,
    maintNotifications: "disabled",
  });
  client.on("error", () => {});
  await client.connect();
  const acquireSha = await client.scriptLoad(ACQUIRE_SCRIPT);
  const releaseSha = await client.scriptLoad(RELEASE_SCRIPT);
  const key = "bench:semaphore";
  const acquireArgs = { keys: [key], arguments: [String(SEMAPHORE_LIMIT)] };
  const releaseArgs = { keys: [key], arguments: [] };
  const release = async () => {
    await client.evalSha(releaseSha, releaseArgs);
  };
  return {
    acquire: async () => (await client.evalSha(acquireSha, acquireArgs)) === 1 ? release : null,
    close: () => client.close(),
  };
}

/** The holder variant's holder and store, once made. */
const made: { store: CountingStore | null; holder: BudgetHolder | null } = {
  store: null,
  holder: null,
};

async function holderGate(): Promise<Gate> {
  const config = resolveConfiguration(undefined, { serverConcurrencyLimit: 600 });
  const store = new CountingStore(new RedisBudgetStore(`redis://127.0.0.1:${port}`));
  const holder = new BudgetHolder(config, { store, id: id ?? "holder" });
  made.store = store;
  made.holder = holder;
  await holder.ready();
  const coordinator: Coordinator = holder;
  return {
    acquire: async () => {
      const a = await coordinator.acquire(request);
      if (!a.admitted) return null;
      return () => {
        a.seat.release();
      };
    },
    close: async () => {
      holder.close();
      await store.inner.close();
    },
  };
}

const gate = variant === "semaphore" ? await semaphoreGate() : await holderGate();
console.log("ready");
const startAt = Number(await readLine());
const stopAt = startAt + SECONDS * 1000;

/** The first line on stdin. */
async function readLine(): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of Deno.stdin.readable) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0]!;
}

let decisions = 0;
let rejected = 0;
const latencies: number[] = [];
let counted = { reads: 0, writes: 0 };
let cpuAtStart = process.cpuUsage();

async function loop(): Promise<void> {
  let n = 0;
  while (true) {
    const t0 = performance.now();
    const measuring = Date.now() >= startAt;
    if (Date.now() >= stopAt) return;
    const release = await gate.acquire();
    const t1 = performance.now();
    if (measuring) {
      if (release === null) rejected++;
      else {
        decisions++;
        latencies.push(t1 - t0);
      }
    }
    if (release !== null) await release();
    if (++n % YIELD_EVERY === 0) await new Promise((r) => setTimeout(r, 0));
  }
}

// The window opens at `startAt`: before it, the loops warm up (the holder's budget settles).
const opening = setTimeout(() => {
  cpuAtStart = process.cpuUsage();
  counted = { reads: made.store?.reads ?? 0, writes: made.store?.writes ?? 0 };
}, Math.max(0, startAt - Date.now()));
await Promise.all(Array.from({ length: LOOPS }, loop));
clearTimeout(opening);
const cpu = process.cpuUsage(cpuAtStart);
const seconds = SECONDS;
latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
const { store, holder } = made;
const budget = holder?.budgets().find((b) => b.level === "global-default");
console.log(JSON.stringify({
  id,
  variant,
  decisionsPerSecond: decisions / seconds,
  rejected,
  p50us: pct(0.5) * 1000,
  p99us: pct(0.99) * 1000,
  cpuPercent: (cpu.user + cpu.system) / 1e4 / seconds,
  reads: store === null ? 0 : store.reads - counted.reads,
  writes: store === null ? 0 : store.writes - counted.writes,
  seconds,
  capacity: budget?.capacity ?? null,
  target: budget?.target ?? null,
  stats: holder?.stats ?? null,
}));
await gate.close();
