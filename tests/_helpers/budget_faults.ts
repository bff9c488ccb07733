/**
 * Seat budgets under faults, with real processes: three `apf serve` gateways
 * of any checkout (`root`) deciding on budgets from one store (a
 * `redis-server` without persistence, or a Deno KV file), an upstream that
 * records every change of the requests in flight, equal closed-loop load
 * on every gateway, and one fault: clocks apart (libfaketime), a frozen
 * gateway (SIGSTOP), a store that forgets (Redis restarted empty), forged
 * ledger lines (redis-cli). {@linkcode runFault} runs one fault from start
 * to end and gives its numbers; `bench/budget_faults.ts` prints them and
 * `tests/cli/budget_faults_test.ts` asserts on them.
 *
 * Times are the harness's monotonic clock (`systemClock.now()`; the
 * harness never runs under libfaketime). Every process, server and load
 * started here is stopped before {@linkcode runFault} settles, also when it
 * fails.
 *
 * ```ts
 * const r = await runFault({ fault: "freeze", store: "kv" });
 * assert.ok(r.peakInFlight <= r.limit, r.notes.join("\n"));
 * for (const g of r.gateways) assert.ok(g.share >= 0.15, `${g.name} starved`);
 * ```
 */

import { sleep, systemClock } from "../../src/fairqueuing/clock.ts";
import { type Gateway, startGateway } from "./apf_gateway.ts";
import { apfOutput, taskPermissions } from "./cli.ts";
import { fakeClockEnv, FORGED_LINE, forgeRedisLine, redisLedgerIds } from "./fault_injectors.ts";
import {
  equalLoad,
  findStall,
  firstServedAfter,
  type GatewayLoad,
  InFlight,
  longestGap,
  servedWithin,
} from "./load_record.ts";
import { type RedisServer, startRedis } from "./redis_server.ts";
import { testUpstream } from "./upstream.ts";

/** The faults {@linkcode runFault} injects. */
export type Fault = "clocks" | "freeze" | "amnesia" | "forged";

/** The stores the gateways can share. */
export type StoreKind = "redis" | "kv";

/** The root of this repository (the default checkout to run `apf` from). */
export const THIS_ROOT: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** A level `tenants` (95 shares, no lending or borrowing, one flow per user). */
export const TENANTS_FIXTURE: string =
  new URL("../cli/fixtures/tenants.yaml", import.meta.url).pathname;

/** The level of {@linkcode TENANTS_FIXTURE}. */
export const LEVEL = "tenants";

const now = () => systemClock.now();
const pause = (ms: number, signal = new AbortController().signal) => sleep(systemClock, ms, signal);
const round2 = (x: number) => Math.round(x * 100) / 100;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

function aborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error("the fault run was aborted");
}

// ---- one run ----------------------------------------------------------------------------------

/** What {@linkcode runFault} runs. */
export interface FaultOptions {
  fault: Fault;
  /** The shared store (default `redis`; `amnesia` and `forged` need it). */
  store?: StoreKind;
  /** The checkout to run `apf` from (default {@linkcode THIS_ROOT}). */
  root?: string;
  /** `--server-concurrency` (default 42: the tenants level gets 12 seats; 21: 6). */
  serverConcurrency?: number;
  /** Closed-loop clients per gateway, each its own user (default 8). */
  clientsPerGateway?: number;
  /** How long the upstream takes per request (default 40 ms). */
  sleepMs?: number;
  /** `--budget-lease`, `--budget-period` (default `2s`, `500ms`). */
  lease?: string;
  period?: string;
  /** `--coordinator-policy` (default `local`). */
  policy?: "local" | "open" | "closed";
  /** Load before the fault; the baseline is its part after the first second (default 3 s). */
  warmupMs?: number;
  /** `clocks`: how long to measure (default 10 s). */
  loadMs?: number;
  /** `clocks`: each gateway's libfaketime offset, `null` for none (default +10s, -10s, none). */
  clockOffsets?: readonly (string | null)[];
  /** `freeze`: how long g0 is stopped (default 8 s). */
  freezeMs?: number;
  /** `freeze`: how long to observe after the thaw (default 6 s). */
  observeMs?: number;
  /** The window after a fault its peak is taken over (default 3 s). */
  peakWindowMs?: number;
  /** `amnesia`: restarts (default 3) and the time between them (default 4 s). */
  restarts?: number;
  restartGapMs?: number;
  /** `forged`: the lines forged one after the other (default {@linkcode FORGED_LINE}). */
  forgedLines?: readonly Readonly<Record<string, number>>[];
  /**
   * `forged`: how long the forger keeps writing each line (default 0: once),
   * every `forgeEveryMs` (default 250).
   */
  forgeForMs?: number;
  forgeEveryMs?: number;
  /** `forged`: how long to observe from each forgery's first write (default 15 s). */
  forgedObserveMs?: number;
  /** A gap without any 200 at least this long counts as a stall (default 1 s). */
  stallMs?: number;
  /** The shares leave out this much of the start of the fault's window (default 0). */
  shareDelayMs?: number;
  /** Permission flags of the gateways (default: the root's `apf` task's). */
  permissions?: readonly string[];
  /** Aborts the run (its processes are stopped). */
  signal?: AbortSignal;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** One gateway's part of a run. */
export interface GatewayResult {
  name: string;
  /** Its libfaketime offset, or `"real"`. */
  clock: string;
  /** 200s within the share window, and its share of all of them. */
  served: number;
  share: number;
  /** 200s in the baseline (the warm-up after its first second), and that share. */
  baselineServed: number;
  baselineShare: number;
  /** 429s and other failures over the whole run. */
  rejected: number;
  errors: number;
  /** The longest time without a 200 within the share window, in ms. */
  longestGapMs: number;
  /** The most of its requests in flight at the upstream within the share window. */
  peakInFlight: number;
  /** Its `dump_priority_levels` row of the level at the end (without the queues). */
  dump: Record<string, unknown> | string;
  /** Its exit code and the first lines of its standard error (none on the other levels). */
  exitCode: number;
  stderr: string[];
}

/** What one run measured. */
export interface FaultResult {
  fault: Fault;
  store: StoreKind;
  root: string;
  startedAt: string;
  /** The level's limit (`apf config print` of the root). */
  limit: number;
  serverConcurrency: number;
  clientsPerGateway: number;
  sleepMs: number;
  lease: string;
  period: string;
  policy: string;
  /** The gateways' permission flags. */
  permissions: string[];
  /** The most in flight at the upstream in the baseline (warm-up, no fault unless clocks). */
  peakBaseline: number;
  /** The most in flight over the whole run, and from the fault on. */
  peakOverall: number;
  peakInFlight: number;
  /** The most in flight in the fault's own window (see the notes). */
  peakAfterFault: number;
  /** The window that `served`, `share` and `longestGapMs` cover, in words. */
  window: string;
  /** Time to recovery, in ms (see `notes`), `null` when never within the run or not meaningful. */
  recoveryMs: number | null;
  /** Per-event details (each restart, the thaw, each forgery). */
  events: Record<string, unknown>[];
  gateways: GatewayResult[];
  /** Findings and remarks, in words. */
  notes: string[];
}

const limits = new Map<string, Promise<number>>();

/** The current limit of {@linkcode LEVEL} as `root`'s `apf config print --json` computes it. */
export function levelLimit(
  root: string,
  permissions: readonly string[],
  serverConcurrency: number,
): Promise<number> {
  const key = `${root} ${serverConcurrency}`;
  const known = limits.get(key);
  if (known !== undefined) return known;
  const args = ["config", "print", "--config", TENANTS_FIXTURE, "--server-concurrency"];
  const limit = apfOutput([...args, String(serverConcurrency), "--json"], { permissions, root })
    .then(({ code, stdout, stderr }) => {
      if (code !== 0) throw new Error(`apf config print failed: ${stderr}`);
      const levels = JSON.parse(stdout).priorityLevels as { name: string; currentLimit: number }[];
      const found = levels.find((l) => l.name === LEVEL);
      if (found === undefined) throw new Error(`no level ${LEVEL} in ${TENANTS_FIXTURE}`);
      return found.currentLimit;
    });
  limits.set(key, limit);
  limit.catch(() => limits.delete(key));
  return limit;
}

interface Store {
  address: string;
  redis: RedisServer | null;
  /** The KV file's folder. */
  dir: string | null;
  close(): Promise<void>;
}

async function openStore(kind: StoreKind): Promise<Store> {
  if (kind === "redis") {
    const redis = await startRedis();
    return { address: redis.url, redis, dir: null, close: () => redis.stop() };
  }
  const dir = await Deno.makeTempDir({ prefix: "apf-budget-faults-" });
  const close = () => Deno.remove(dir, { recursive: true });
  return { address: `kv:${dir}/ledgers.sqlite`, redis: null, dir, close };
}

type Options = Required<Omit<FaultOptions, "permissions" | "signal" | "root" | "store">> & {
  signal: AbortSignal | undefined;
};

/** A run in progress, as the fault phases see it. */
interface Run {
  inFlight: InFlight;
  store: Store;
  gateways: Gateway[];
  loads: GatewayLoad[];
  options: Options;
}

/** What a fault phase measured. */
interface Phase {
  /** The window the shares and gaps cover. */
  window: { from: number; to: number; what: string };
  peakAfterFault: number;
  recoveryMs: number | null;
  events: Record<string, unknown>[];
  notes: string[];
}

/** Clocks apart: the offsets are in place from the start; measures `loadMs` of load. */
async function clocksPhase(run: Run): Promise<Phase> {
  const { loadMs, clockOffsets, signal } = run.options;
  const from = now();
  await pause(loadMs, signal);
  const to = now();
  const clocks = clockOffsets.map((o, i) => `g${i} ${o ?? "real"}`).join(", ");
  return {
    window: { from, to, what: `${loadMs} ms of load after the warm-up` },
    peakAfterFault: run.inFlight.peak(from, to),
    recoveryMs: null,
    events: [],
    notes: [`clocks: ${clocks} (libfaketime; the harness's is real); recoveryMs: not meaningful`],
  };
}

/** g0 frozen (SIGSTOP) for `freezeMs`, then thawed; `observeMs` after. */
async function freezePhase(run: Run): Promise<Phase> {
  const { freezeMs, observeMs, peakWindowMs, signal } = run.options;
  const { inFlight } = run;
  const g0 = run.gateways[0]!, load = run.loads[0]!;
  const frozenAt = now();
  g0.freeze();
  try {
    await pause(freezeMs, signal);
  } finally {
    g0.thaw();
  }
  const thawedAt = now();
  await pause(observeMs, signal);
  const end = now();
  const anyAfter = load.served.find((s) => s.done >= thawedAt);
  const recoveryMs = firstServedAfter(load, thawedAt, end);
  const afterThaw = [thawedAt, thawedAt + peakWindowMs] as const;
  const peakAfterFault = inFlight.peak(...afterThaw);
  return {
    window: { from: thawedAt, to: end, what: `${observeMs} ms after SIGCONT` },
    peakAfterFault,
    recoveryMs,
    events: [{
      event: "SIGSTOP g0, then SIGCONT",
      frozenMs: Math.round(thawedAt - frozenAt),
      peakWhileFrozen: inFlight.peak(frozenAt, thawedAt),
      peakInFreezesLastSecond: inFlight.peak(thawedAt - 1_000, thawedAt),
      peakAfterThaw: peakAfterFault,
      peakAfterThawAtMs: Math.round(inFlight.peakAt(...afterThaw) - thawedAt),
      peakOfG0AfterThaw: inFlight.peak(...afterThaw, "g0"),
      firstG0AnswerAfterThawMs: anyAfter === undefined
        ? null
        : Math.round(anyAfter.done - thawedAt),
      firstG0ServedSentAfterThawMs: recoveryMs,
    }],
    notes: [
      `freeze: g0 stopped ${freezeMs} ms; recoveryMs: from SIGCONT to g0's first 200 for a ` +
      `request sent after it; peakAfterFault: the ${peakWindowMs} ms after SIGCONT`,
    ],
  };
}

/** Redis killed and restarted empty `restarts` times, `restartGapMs` apart. */
async function amnesiaPhase(run: Run): Promise<Phase> {
  const { restarts, restartGapMs, peakWindowMs, stallMs, signal } = run.options;
  const { inFlight, loads } = run;
  const from = now();
  const events: Record<string, unknown>[] = [];
  const recoveries: (number | null)[] = [];
  for (let k = 1; k <= restarts; k++) {
    const killedAt = now();
    await run.store.redis!.restart();
    const backAt = now();
    await pause(restartGapMs, signal);
    aborted(signal);
    const next = now();
    const perGateway = loads.map((l) => firstServedAfter(l, backAt, next));
    const all = perGateway.includes(null) ? null : Math.max(...(perGateway as number[]));
    recoveries.push(all);
    events.push({
      event: `redis restarted empty (${k})`,
      downMs: Math.round(backAt - killedAt),
      peak: inFlight.peak(killedAt, killedAt + peakWindowMs),
      everyGatewayServedAfterMs: all,
      perGatewayFirstServedAfterMs: perGateway,
      stalledGateways: loads
        .map((l, i) => ({ i, gap: longestGap(l.served.map((s) => s.done), killedAt, next) }))
        .filter(({ gap }) => gap >= stallMs)
        .map(({ i, gap }) => `g${i} ${Math.round(gap)} ms`),
    });
  }
  return {
    window: { from, to: now(), what: "from the first restart to the end" },
    peakAfterFault: Math.max(...events.map((e) => e.peak as number)),
    recoveryMs: recoveries.includes(null) ? null : Math.max(...(recoveries as number[])),
    events,
    notes: [
      `amnesia: ${restarts} restarts ${restartGapMs} ms apart; recoveryMs: the worst over the ` +
      `restarts of the time from redis accepting again to every gateway's first 200 for a ` +
      `request sent after it; peakAfterFault: the worst over the ${peakWindowMs} ms after ` +
      `each kill`,
    ],
  };
}

/**
 * Each forged line in turn in the Redis ledger, written again and again for
 * `forgeForMs`; `forgedObserveMs` from each one's first write.
 */
async function forgedPhase(run: Run): Promise<Phase> {
  const { forgedLines, forgeForMs, forgeEveryMs, forgedObserveMs, stallMs, signal } = run.options;
  const { inFlight, loads } = run;
  const redis = run.store.redis!;
  const events: Record<string, unknown>[] = [];
  const notes: string[] = [];
  let from = Infinity, worst: number | null = 0;
  for (const [k, line] of forgedLines.entries()) {
    const id = `forged-${k}`;
    const rejectedBefore = sum(loads.map((l) => l.rejected));
    const kept = await forgeRedisLine(redis, LEVEL, id, line);
    const forgedAt = now();
    from = Math.min(from, forgedAt);
    let writes = 1, lastAt = forgedAt;
    while (now() + forgeEveryMs <= forgedAt + forgeForMs) {
      await pause(forgeEveryMs, signal);
      aborted(signal);
      await forgeRedisLine(redis, LEVEL, id, line);
      [writes, lastAt] = [writes + 1, now()];
    }
    await pause(forgedAt + forgedObserveMs - now(), signal);
    aborted(signal);
    const end = now();
    const done = loads.flatMap((l) => l.served.map((s) => s.done))
      .filter((t) => t >= forgedAt).sort((a, b) => a - b);
    const stall = findStall(done, forgedAt, end, stallMs);
    const recoveryMs = stall === null
      ? 0
      : stall.resumedAt === null
      ? null
      : Math.round(stall.resumedAt - forgedAt);
    worst = worst === null || recoveryMs === null ? null : Math.max(worst, recoveryMs);
    const left = await redisLedgerIds(redis, LEVEL);
    const stalledAfterMs = stall === null ? null : Math.round(stall.from - forgedAt);
    events.push({
      event: `forged line ${id} HSET`,
      line,
      keptLines: kept,
      writes,
      lastWriteAfterMs: Math.round(lastAt - forgedAt),
      stalledAfterMs,
      servedAgainAfterMs: recoveryMs,
      longestGapMs: Math.round(longestGap(done, forgedAt, end)),
      rejectedAfter: sum(loads.map((l) => l.rejected)) - rejectedBefore,
      peak: inFlight.peak(forgedAt, end),
      forgedLineStillThere: left.includes(id),
      linesAtEnd: left.length,
    });
    notes.push(
      stall === null
        ? `${id}: the level never stalled ${stallMs} ms or more`
        : stall.resumedAt === null
        ? `FINDING: ${id}: the level stopped serving ${stalledAfterMs} ms after the forgery ` +
          `and was not served again within ${forgedObserveMs} ms`
        : `${id}: the level stalled ${stalledAfterMs} ms after the forgery and was served ` +
          `again ${recoveryMs} ms after it`,
    );
  }
  return {
    window: { from, to: now(), what: `${forgedObserveMs} ms after each forgery` },
    peakAfterFault: inFlight.peak(from),
    recoveryMs: worst,
    events,
    notes: [
      `forged: ${forgedLines.length} line(s) added beside the gateways'; recoveryMs: the worst ` +
      `over the forgeries of the time from the forgery to the first 200 after a stall of ` +
      `${stallMs} ms or more (0: no stall)`,
      ...notes,
    ],
  };
}

const PHASES: Record<Fault, (run: Run) => Promise<Phase>> = {
  clocks: clocksPhase,
  freeze: freezePhase,
  amnesia: amnesiaPhase,
  forged: forgedPhase,
};

function optionsOf(options: FaultOptions): Options {
  const fault = options.fault;
  return {
    fault,
    serverConcurrency: options.serverConcurrency ?? 42,
    clientsPerGateway: options.clientsPerGateway ?? 8,
    sleepMs: options.sleepMs ?? 40,
    lease: options.lease ?? "2s",
    period: options.period ?? "500ms",
    policy: options.policy ?? "local",
    warmupMs: options.warmupMs ?? 3_000,
    loadMs: options.loadMs ?? 10_000,
    clockOffsets: fault === "clocks"
      ? options.clockOffsets ?? ["+10s", "-10s", null]
      : [null, null, null],
    freezeMs: options.freezeMs ?? 8_000,
    observeMs: options.observeMs ?? 6_000,
    peakWindowMs: options.peakWindowMs ?? 3_000,
    restarts: options.restarts ?? 3,
    restartGapMs: options.restartGapMs ?? 4_000,
    forgedLines: options.forgedLines ?? [FORGED_LINE],
    forgeForMs: options.forgeForMs ?? 0,
    forgeEveryMs: options.forgeEveryMs ?? 250,
    forgedObserveMs: options.forgedObserveMs ?? 15_000,
    stallMs: options.stallMs ?? 1_000,
    shareDelayMs: options.shareDelayMs ?? 0,
    signal: options.signal,
    log: options.log ?? (() => {}),
  };
}

/** The `apf serve` arguments of every gateway. */
function serveArgs(upstream: string, store: string, o: Options): string[] {
  return [
    ...["--upstream", upstream, "--config", TENANTS_FIXTURE, "--trust-identity-headers"],
    ...["--server-concurrency", String(o.serverConcurrency), "--coordinator", store],
    ...["--coordinator-mode", "budget", "--budget-lease", o.lease, "--budget-period", o.period],
    ...["--coordinator-policy", o.policy],
  ];
}

/**
 * Runs `options.fault` once: three gateways of `options.root` on one store,
 * equal load on each, the fault, and its numbers. Everything it started is
 * stopped before it settles, also when it fails or is aborted.
 */
export async function runFault(options: FaultOptions): Promise<FaultResult> {
  const { fault } = options;
  const storeKind = options.store ?? "redis";
  if ((fault === "amnesia" || fault === "forged") && storeKind !== "redis") {
    throw new Error(`the ${fault} fault needs the redis store`);
  }
  const root = options.root ?? THIS_ROOT;
  const o = optionsOf(options);
  const { signal, log } = o;
  const notes: string[] = [];
  const startedAt = new Date().toISOString();
  const task = taskPermissions("apf", root);
  const limit = await levelLimit(root, task, o.serverConcurrency);
  const inFlight = new InFlight();
  const upstream = testUpstream({ sleepMs: o.sleepMs, onActive: inFlight.record });
  let store: Store | null = null;
  const gateways: Gateway[] = [];
  const loads: GatewayLoad[] = [];
  try {
    store = await openStore(storeKind);
    const permissions = [...(options.permissions ?? task)];
    if (store.dir !== null && !permissions.some((p) => p.startsWith("--allow-write"))) {
      notes.push(`the permissions lack --allow-write, which kv: needs: added for the KV folder`);
      permissions.push(`--allow-write=${store.dir}`);
    }
    const args = serveArgs(upstream.url, store.address, o);
    log(`${fault}/${storeKind}: starting 3 gateways of ${root} (limit ${limit})`);
    const started = await Promise.allSettled(o.clockOffsets.map((offset, i) =>
      startGateway({
        name: `g${i}`,
        root,
        permissions,
        args,
        ...(offset !== null && { env: fakeClockEnv(offset) }),
      })
    ));
    for (const s of started) if (s.status === "fulfilled") gateways.push(s.value);
    const failed = started.find((s) => s.status === "rejected");
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    aborted(signal);

    for (const g of gateways) loads.push(equalLoad(g, o.clientsPerGateway));
    const loadStart = now();
    await pause(o.warmupMs, signal);
    aborted(signal);
    const faultAt = now();
    const baseline = { from: loadStart + Math.min(1_000, o.warmupMs / 2), to: faultAt };
    log(`${fault}/${storeKind}: injecting`);
    const phase = await PHASES[fault]({ inFlight, store, gateways, loads, options: o });
    aborted(signal);
    const end = now();

    const window = { ...phase.window, from: phase.window.from + o.shareDelayMs };
    const inWindow = loads.map((l) => servedWithin(l, window.from, window.to));
    const inBaseline = loads.map((l) => servedWithin(l, baseline.from, baseline.to));
    const dumps = await Promise.all(gateways.map((g) => g.dumpLevel(LEVEL)));
    await Promise.all(loads.map((l) => l.stop()));
    const stopped = await Promise.all(gateways.map((g) => g.stop()));
    const results: GatewayResult[] = gateways.map((g, i) => {
      const row = dumps[i]!;
      const { queues: _, ...dump } = typeof row === "string" ? { queues: null, error: row } : row;
      return {
        name: g.name,
        clock: o.clockOffsets[i] ?? "real",
        served: inWindow[i]!,
        share: sum(inWindow) === 0 ? 0 : round2(inWindow[i]! / sum(inWindow)),
        baselineServed: inBaseline[i]!,
        baselineShare: sum(inBaseline) === 0 ? 0 : round2(inBaseline[i]! / sum(inBaseline)),
        rejected: loads[i]!.rejected,
        errors: loads[i]!.errors,
        longestGapMs: Math.round(
          longestGap(loads[i]!.served.map((s) => s.done), window.from, window.to),
        ),
        peakInFlight: inFlight.peak(window.from, window.to, g.name),
        dump,
        exitCode: stopped[i]!.code,
        stderr: stopped[i]!.stderr.split("\n")
          .filter((l) => l !== "" && !/ level "(?!tenants")/.test(l)).slice(0, 12),
      };
    });
    notes.push(...phase.notes);
    const peakInFlight = inFlight.peak(faultAt, end), peakOverall = inFlight.peak();
    if (peakOverall > limit) {
      const when = peakInFlight > limit ? "" : " (before the fault)";
      notes.push(`FINDING: the upstream saw ${peakOverall} in flight${when}, limit ${limit}`);
    }
    // Shares mean something only where the level served: under equal load, < 15% is starving.
    if (sum(inWindow) >= 100) {
      for (const r of results.filter((r) => r.share < 0.15)) {
        notes.push(`FINDING: ${r.name} starved: ${Math.round(r.share * 100)}% of the 200s`);
      }
    }
    return {
      fault,
      store: storeKind,
      root,
      startedAt,
      limit,
      serverConcurrency: o.serverConcurrency,
      clientsPerGateway: o.clientsPerGateway,
      sleepMs: o.sleepMs,
      lease: o.lease,
      period: o.period,
      policy: o.policy,
      permissions,
      peakBaseline: inFlight.peak(baseline.from, baseline.to),
      peakOverall,
      peakInFlight,
      peakAfterFault: phase.peakAfterFault,
      window: o.shareDelayMs === 0
        ? window.what
        : `${window.what}, less its first ${o.shareDelayMs} ms`,
      recoveryMs: phase.recoveryMs,
      events: phase.events,
      gateways: results,
      notes,
    };
  } finally {
    await Promise.all(loads.map((l) => l.stop()));
    await Promise.all(gateways.map((g) => g.stop()));
    await store?.close();
    await upstream.close();
  }
}
