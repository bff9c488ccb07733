/**
 * Coordinator benchmarks: acquire + release pairs per second of
 * the {@linkcode EmbeddedCoordinator}, beside the bare {@linkcode QueueSet}
 * and two popular limiters from npm (p-limit, p-queue) as outside
 * references. Run with `deno run --allow-read --allow-env=LOG_TOKENS,LOG_STREAM
 * bench/coordinator_bench.ts` (or `deno task bench bench/coordinator_bench.ts`).
 *
 * Target: uncontended, the coordinator's pair on `global-default` at least
 * matches p-limit's rate in the same run, and never falls below 1,000,000
 * pairs/s.
 *
 * Uncontended: one request at a time, `await c.acquire(req)` then
 * `seat.release()`, on the built-in configuration (`global-default`:
 * queuing, 128 queues; `exempt`; `catch-all`: Reject), on the real
 * `systemClock`; the same with a `FlowcontrolMetrics` attached, and on a
 * `FakeEventClock` (what reading real time costs). The bare queue set runs
 * `global-default`'s configuration and awaits `r.wait()`, one await of a
 * settled promise like the coordinator's, so the async overhead is equal.
 *
 * Saturated: 64 seats all busy and 1,000 requests waiting (the queueing
 * variants: 128 queues, hand size 6, one flow hash each of 1,000, cycling).
 * One step = a request arrives and waits, the oldest holder releases its
 * seat, and the step ends when the request that release dispatched has its
 * seat (its promise settled), so every step has one dispatch's async hops.
 *
 * `deno bench` reports means and runs one function at a time, so this file
 * registers no `Deno.bench`: it prints, when it loads, the median of
 * interleaved batches (the variants taking turns, so a busy machine slows
 * them all alike), and ratios to p-limit; then it closes its coordinators
 * (each holds a 10 s borrowing timer on the real clock).
 *
 * With `APF_BASELINE=<dir>` (another checkout), its coordinator on
 * `global-default` takes part in the uncontended rounds too.
 *
 * Then the coordinator on `global-default` (bare, with a
 * `FlowcontrolMetrics` observer as `apf()` gives it, and on a clock that
 * only counts: what the pair costs but for the runtime's clock, two calls
 * of `performance.now()` a pair) and p-limit once more,
 * each alone in an isolate of its own (`_pairs_worker.ts`), as an
 * application with one coordinator runs it: in this isolate the
 * coordinator's code serves five variants, and V8's inline caches on its
 * path are shared by all of them, where p-limit's serve one. With
 * `APF_BASELINE`, that checkout's two coordinators are there too, alone as
 * well: the measure of a change to the coordinator's path, which the shared
 * isolate skews in the baseline's favour (its code serves one variant).
 */

// Outside references for this bench only, so kept out of deno.json's import map (the package's).
// deno-lint-ignore no-import-prefix
import pLimit from "npm:p-limit@7.3.3";
// deno-lint-ignore no-import-prefix
import PQueue from "npm:p-queue@9.3.5";
import {
  bootstrapConfiguration,
  type EffectiveConfiguration,
  effectiveConfiguration,
  EmbeddedCoordinator,
  FakeEventClock,
  type QueueSetRequest,
  type Seat,
  type SeatRequest,
} from "../mod.ts";
import { QueueSet, type QueueSetConfig, type StartRequestInit } from "../src/fairqueuing/mod.ts";
import { FlowcontrolMetrics } from "../src/observe/mod.ts";
import { configOf, limited } from "../tests/_helpers/coordinator_config.ts";

const SATURATED_SEATS = 64;
const SATURATED_FLOWS = 1000;
const QUEUING = { queues: 128, handSize: 6, queueLengthLimit: 50 };

/** `count` distinct, well-spread flow hashes as halves (splitmix32-style of 1, 2, …). */
function flowHashes(count: number): { hi: number; lo: number }[] {
  const mix = (x: number) => {
    x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
    x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
    return (x ^ (x >>> 16)) >>> 0;
  };
  return Array.from({ length: count }, (_, i) => ({ hi: mix(2 * i + 1), lo: mix(2 * i + 2) }));
}

const builtIn = effectiveConfiguration(bootstrapConfiguration());
const HASH = flowHashes(1)[0]!;

function seatRequest(priorityLevel: string, flowHash: { hi: number; lo: number } | null) {
  return {
    priorityLevel,
    flowSchema: priorityLevel === "exempt" ? "exempt" : "global-default",
    flowHash,
    distinguisher: "alice",
  } satisfies SeatRequest;
}

/** Every coordinator made here, closed at the end (each holds a 10 s borrowing timer). */
const coordinators: EmbeddedCoordinator[] = [];
function coordinator(
  config: EffectiveConfiguration,
  options: ConstructorParameters<typeof EmbeddedCoordinator>[1] = {},
): EmbeddedCoordinator {
  const c = new EmbeddedCoordinator(config, options);
  coordinators.push(c);
  return c;
}

// ---- uncontended ------------------------------------------------------------

type Pairs = (n: number) => Promise<void>;

function coordinatorPairs(c: EmbeddedCoordinator, request: SeatRequest): Pairs {
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const a = await c.acquire(request);
      if (!a.admitted) throw new Error(`Cannot bench: rejected (${a.reason})`);
      a.seat.release();
    }
  };
}

/** `global-default`'s seats in the built-in configuration (56 at ServerCL 600). */
const GLOBAL_DEFAULT_SEATS = builtIn.priorityLevels.find((l) => l.name === "global-default")!
  .currentLimit;
const globalDefault: QueueSetConfig = {
  type: "Limited",
  concurrencyLimit: GLOBAL_DEFAULT_SEATS,
  queuing: QUEUING,
};

function queueSetPairs(qs: QueueSet): Pairs {
  // What the coordinator hands the queue set for `global-default`.
  const init: StartRequestInit = {
    hash: HASH,
    waitLimitMs: 15_000,
    descriptor: { flowSchema: "global-default", distinguisher: "alice" },
  };
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const r = qs.startRequest(init);
      if (await r.wait() !== "execute") throw new Error("Cannot bench: rejected");
      r.finish();
    }
  };
}

/** `APF_BASELINE`, read only with the permission to (the documented command has none). */
function baselineCheckout(): string | undefined {
  const allowed = Deno.permissions.querySync({ name: "env", variable: "APF_BASELINE" });
  return allowed.state === "granted" ? Deno.env.get("APF_BASELINE") : undefined;
}

/**
 * With `APF_BASELINE=<dir>` (another checkout, e.g. from `git archive`): its
 * coordinator on `global-default`, in the same rounds, to measure a change
 * against what it replaces.
 */
async function baselineVariants(): Promise<[string, Pairs][]> {
  const dir = baselineCheckout();
  if (dir === undefined) return [];
  const base = await import(`${dir}/mod.ts`);
  const c = new base.EmbeddedCoordinator(
    base.effectiveConfiguration(base.bootstrapConfiguration()),
  ) as EmbeddedCoordinator;
  coordinators.push(c);
  return [[
    "coordinator of APF_BASELINE, global-default",
    coordinatorPairs(c, seatRequest("global-default", HASH)),
  ]];
}

const fakeClock = new FakeEventClock();
const uncontended: [string, Pairs][] = [
  [
    "coordinator, global-default",
    coordinatorPairs(coordinator(builtIn), seatRequest("global-default", HASH)),
  ],
  ["coordinator, exempt", coordinatorPairs(coordinator(builtIn), seatRequest("exempt", null))],
  [
    "coordinator, catch-all (Reject)",
    coordinatorPairs(coordinator(builtIn), seatRequest("catch-all", null)),
  ],
  [
    "coordinator, global-default + FlowcontrolMetrics",
    coordinatorPairs(
      coordinator(builtIn, { metrics: new FlowcontrolMetrics() }),
      seatRequest("global-default", HASH),
    ),
  ],
  [
    "coordinator, global-default, FakeEventClock",
    coordinatorPairs(
      coordinator(builtIn, { clock: fakeClock }),
      seatRequest("global-default", HASH),
    ),
  ],
  ["bare QueueSet, global-default's config", queueSetPairs(new QueueSet(globalDefault))],
  ...await baselineVariants(),
  [
    "p-limit(56)",
    (() => {
      const limit = pLimit(GLOBAL_DEFAULT_SEATS);
      return async (n: number) => {
        for (let i = 0; i < n; i++) await limit(() => {});
      };
    })(),
  ],
  [
    "p-queue(concurrency 56)",
    (() => {
      const queue = new PQueue({ concurrency: GLOBAL_DEFAULT_SEATS });
      return async (n: number) => {
        for (let i = 0; i < n; i++) await queue.add(() => {});
      };
    })(),
  ],
];

// ---- saturated --------------------------------------------------------------

/** What a saturated step needs: submit a request, told of its seat (or null: rejected); release. */
interface Limiter<H> {
  submit(index: number, onSeat: (h: H | null) => void): void;
  release(h: H): void;
}

/**
 * Fills `limiter`'s seats and queue, then returns `n` steady-state steps:
 * the holders sit in a ring in the order they got seats; each step submits
 * one request, releases the oldest holder, and awaits the seat that release
 * handed out (which takes the freed slot).
 */
async function saturated<H>(limiter: Limiter<H>): Promise<Pairs> {
  const ring: H[] = [];
  let slot = 0, submitted = 0, granted = 0, rejected = 0;
  let wake: (() => void) | null = null;
  const onSeat = (h: H | null) => {
    if (h === null) return void rejected++;
    granted++;
    if (ring.length < SATURATED_SEATS) ring.push(h);
    else {
      ring[slot] = h;
      slot = slot + 1 === SATURATED_SEATS ? 0 : slot + 1;
    }
    const w = wake;
    wake = null;
    w?.();
  };
  for (; submitted < SATURATED_SEATS + SATURATED_FLOWS; submitted++) {
    limiter.submit(submitted, onSeat);
  }
  for (let i = 0; i < 100 && granted < SATURATED_SEATS; i++) await null;
  if (granted !== SATURATED_SEATS || ring.length !== SATURATED_SEATS) {
    throw new Error(`Cannot saturate: ${granted} seats granted, expected ${SATURATED_SEATS}`);
  }
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const { promise, resolve } = Promise.withResolvers<void>();
      wake = resolve;
      limiter.submit(submitted++, onSeat);
      limiter.release(ring[slot]!);
      await promise;
    }
    if (rejected !== 0 || granted !== submitted - SATURATED_FLOWS) {
      throw new Error(`Cannot step: ${rejected} rejected, ${submitted - granted} not granted`);
    }
  };
}

/** One limited level of exactly 64 seats that neither lends nor borrows, with 128 queues. */
function saturatedConfig(): EffectiveConfiguration {
  const config = configOf(67, [
    limited("bench", {
      shares: 95,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      queuing: QUEUING,
    }),
  ]);
  const limit = config.priorityLevels.find((l) => l.name === "bench")!.currentLimit;
  if (limit !== SATURATED_SEATS) throw new Error(`Cannot bench: the level has ${limit} seats`);
  return config;
}

const flows = flowHashes(SATURATED_FLOWS);

function saturatedCoordinator(): Limiter<Seat> {
  const c = coordinator(saturatedConfig());
  const requests = flows.map((h) => ({ ...seatRequest("bench", h), flowSchema: "bench" }));
  return {
    submit(index, onSeat) {
      c.acquire(requests[index % SATURATED_FLOWS]!).then((a) => onSeat(a.admitted ? a.seat : null));
    },
    release: (seat) => void seat.release(),
  };
}

function saturatedQueueSet(): Limiter<QueueSetRequest> {
  const qs = new QueueSet({ type: "Limited", concurrencyLimit: SATURATED_SEATS, queuing: QUEUING });
  const inits: StartRequestInit[] = flows.map((hash) => ({
    hash,
    waitLimitMs: 15_000,
    descriptor: { flowSchema: "bench", distinguisher: "alice" },
  }));
  return {
    submit(index, onSeat) {
      const r = qs.startRequest(inits[index % SATURATED_FLOWS]!);
      r.wait().then((d) => onSeat(d === "execute" ? r : null));
    },
    release: (r) => void r.finish(),
  };
}

/** A p-limit or p-queue task holds its slot until its release function runs. */
function taskLimiter(run: (task: () => Promise<void>) => unknown): Limiter<() => void> {
  return {
    submit(_index, onSeat) {
      run(() => new Promise<void>((resolve) => onSeat(resolve)));
    },
    release: (release) => release(),
  };
}

/**
 * Built only when measured: a seat held across other measurements would run
 * for seconds, and fair queuing would rightly charge its queue for it.
 */
const saturatedVariants: [string, () => Limiter<unknown>][] = [
  ["coordinator", saturatedCoordinator as () => Limiter<unknown>],
  ["bare QueueSet", saturatedQueueSet as () => Limiter<unknown>],
  ["p-limit(64)", () => taskLimiter(pLimit(SATURATED_SEATS)) as Limiter<unknown>],
  ["p-queue(concurrency 64)", () => {
    const queue = new PQueue({ concurrency: SATURATED_SEATS });
    return taskLimiter((task) => queue.add(task)) as Limiter<unknown>;
  }],
];

// ---- interleaved medians ----------------------------------------------------

/** Median pairs (steps) per second of each variant: `rounds` batches of `n`, taking turns. */
async function medians(variants: [string, Pairs][], rounds: number, n: number) {
  for (const [, run] of variants) await run(n); // warm up
  const samples = variants.map(() => new Float64Array(rounds));
  for (let b = 0; b < rounds; b++) {
    for (let k = 0; k < variants.length; k++) {
      const t0 = performance.now();
      await variants[k]![1](n);
      samples[k]![b] = n / ((performance.now() - t0) / 1000);
    }
  }
  return samples.map((s) => s.sort()[rounds >> 1]!);
}

function print(title: string, variants: [string, Pairs][], rates: number[], reference: number) {
  console.log(title);
  console.log("| variant | per second | ns each | vs p-limit |");
  console.log("| - | - | - | - |");
  variants.forEach(([name], k) => {
    const rate = rates[k]!;
    console.log(
      `| ${name} | ${(rate / 1e6).toFixed(2)}M | ${(1e9 / rate).toFixed(0)} | ${
        (rate / rates[reference]!).toFixed(2)
      }x |`,
    );
  });
}

const ROUNDS = 101;
const u = await medians(uncontended, ROUNDS, 20_000);
print(
  `uncontended acquire + release pairs (median of ${ROUNDS} interleaved batches of 20,000):`,
  uncontended,
  u,
  uncontended.findIndex(([name]) => name.startsWith("p-limit")),
);

// ---- alone, each in an isolate of its own ----------------------------------

/** What a worker of `_pairs_worker.ts` sets up: a limiter, and for a coordinator its options. */
type Isolated = {
  setup: "coordinator" | "p-limit";
  metrics?: boolean;
  checkout?: string;
  countingClock?: boolean;
};

/** A limiter in a worker of its own (`_pairs_worker.ts`), as `Pairs`. */
async function isolated(setup: Isolated): Promise<[Pairs, () => void]> {
  const worker = new Worker(new URL("./_pairs_worker.ts", import.meta.url).href, {
    type: "module",
  });
  let answer: (value: unknown) => void = () => {};
  worker.onmessage = (e) => answer(e.data);
  const ask = (message: unknown) =>
    new Promise<unknown>((resolve) => {
      answer = resolve;
      worker.postMessage(message);
    });
  await ask({
    ...setup,
    request: seatRequest("global-default", HASH),
    seats: GLOBAL_DEFAULT_SEATS,
  });
  return [async (n) => void await ask({ pairs: n }), () => worker.postMessage({ close: true })];
}

// Timed by the main thread around each batch: the same for all, a message each way included.
// With APF_BASELINE, that checkout's coordinator too, each alone as well: in this isolate its
// code serves one variant where this checkout's serves five, which favours it.
const baseline = baselineCheckout();
const aloneSetups: [string, Isolated][] = [
  ["coordinator, global-default, alone in a worker", { setup: "coordinator" }],
  ["coordinator, global-default + FlowcontrolMetrics, alone", {
    setup: "coordinator",
    metrics: true,
  }],
  // Every step of the pair, the time-dependent ones included, without the runtime's clock.
  ["coordinator, global-default, a counting clock, alone", {
    setup: "coordinator",
    countingClock: true,
  }],
  ...(baseline === undefined ? [] : [
    ["coordinator of APF_BASELINE, global-default, alone", {
      setup: "coordinator",
      checkout: baseline,
    }],
    ["coordinator of APF_BASELINE + FlowcontrolMetrics, alone", {
      setup: "coordinator",
      metrics: true,
      checkout: baseline,
    }],
  ] as [string, Isolated][]),
  ["p-limit(56), alone in a worker", { setup: "p-limit" }],
];
const aloneVariants: [string, Pairs][] = [];
const closers: (() => void)[] = [];
for (const [name, setup] of aloneSetups) {
  const [run, close] = await isolated(setup);
  aloneVariants.push([name, run]);
  closers.push(close);
}
const a = await medians(aloneVariants, ROUNDS, 20_000);
print(
  `each alone in an isolate of its own (a Worker; median of ${ROUNDS} interleaved batches of 20,000):`,
  aloneVariants,
  a,
  aloneVariants.length - 1,
);
for (const close of closers) close();

const saturatedSteps: [string, Pairs][] = [];
for (const [name, make] of saturatedVariants) saturatedSteps.push([name, await saturated(make())]);
const s = await medians(saturatedSteps, ROUNDS, 5_000);
print(
  `saturated steps, 64 seats, 1,000 waiting (median of ${ROUNDS} interleaved batches of 5,000):`,
  saturatedSteps,
  s,
  2,
);

for (const c of coordinators) c.close();
