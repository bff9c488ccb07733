/**
 * Queue-set benchmarks: the cost of one steady-state cycle on a
 * saturated priority level — a request arrives and waits, the oldest
 * executing request finishes, and that dispatches one waiting request — at
 * Q = 16, 128 and 1024 queues. Run with `deno task bench bench/queue_set_bench.ts`.
 *
 * Targets: under 1 µs per cycle at Q = 128, and at most 1.5x growth from
 * Q = 16 to Q = 1024. The second group runs the same workload on a minimal
 * port of Kubernetes' linear-scan queue set, so that its growth with Q is
 * measured in the same run, on the same machine.
 *
 * Workload, both groups, the same at every Q so that only Q varies: 64
 * seats, all busy with one-seat requests; a backlog of 4,096 waiting
 * requests (4 per queue at Q = 1024), so every queue is non-empty (the
 * linear scan's worst case, and the dispatch tree's deepest walks); arrivals
 * cycle through 4,096 flows; hand size 6 at every Q (the largest the Dealer
 * accepts at Q = 1024, and keeping it fixed keeps shuffle sharding's cost
 * out of the growth factor). The fake clock moves 10 µs per cycle, so
 * requests run 0.64 ms and virtual time keeps moving.
 *
 * `deno bench` reports means of about 20 batch means for functions this
 * fast, whatever `n` says, so the file also prints, when it loads, the
 * median of 101 batches of 2,000 cycles per set, the sets taking turns so
 * that a busy machine slows them all alike.
 */

import {
  Dealer,
  ESTIMATED_SERVICE_DURATION_MS,
  FakeEventClock,
  QueueSet,
  type QueueSetRequest,
  seatsTimesDuration,
} from "../src/fairqueuing/mod.ts";

const QUEUE_COUNTS = [16, 128, 1024] as const;
const CONCURRENCY_LIMIT = 64;
const HAND_SIZE = 6;
const STEP_MS = 0.01;
const FLOWS = 4096;
const BENCH_OPTIONS = { n: 200_000, warmup: 50_000 };

/** `count` distinct, well-spread 64-bit flow hashes (splitmix64 of 1, 2, …). */
function flowHashes(count: number): bigint[] {
  const mask = (1n << 64n) - 1n;
  const out: bigint[] = [];
  for (let i = 1n; out.length < count; i++) {
    let z = (i * 0x9e3779b97f4a7c15n) & mask;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    out.push(z ^ (z >> 31n));
  }
  return out;
}

/** What a cycle needs from a queue set: start a request, and finish one. */
interface CycleDriver<R> {
  /** Starts a request of flow `hash`; `onDispatch` runs when it starts executing. */
  start(hash: bigint, onDispatch: (r: R) => void): void;
  /** Finishes an executing request; false when it was not executing (a broken cycle). */
  finish(r: R): boolean;
}

/**
 * Saturates a set through `driver` and returns one steady-state cycle. The
 * executing requests sit in a ring in dispatch order: each cycle finishes
 * the oldest, and the request that finish dispatches takes its slot, so
 * nothing leaks and the set keeps CL executing and FLOWS waiting.
 */
function saturatedCycle<R>(clock: FakeEventClock, driver: CycleDriver<R>): () => void {
  const hashes = flowHashes(FLOWS);
  const ring: R[] = [];
  let slot = 0;
  const onDispatch = (r: R) => {
    ring[slot] = r;
  };
  for (; slot < CONCURRENCY_LIMIT; slot++) driver.start(hashes[slot % hashes.length]!, onDispatch);
  if (ring.length !== CONCURRENCY_LIMIT) throw new Error("Cannot saturate: a request waited");
  for (const hash of hashes) driver.start(hash, onDispatch);
  slot = 0;
  let next = 0;
  return () => {
    driver.start(hashes[next]!, onDispatch);
    next = next + 1 === hashes.length ? 0 : next + 1;
    clock.advance(STEP_MS);
    if (!driver.finish(ring[slot]!)) throw new Error("Cannot cycle: the oldest was not executing");
    slot = slot + 1 === CONCURRENCY_LIMIT ? 0 : slot + 1;
  };
}

const ours = QUEUE_COUNTS.map((queues) => {
  const clock = new FakeEventClock();
  const qs = new QueueSet({
    type: "Limited",
    concurrencyLimit: CONCURRENCY_LIMIT,
    queuing: { queues, queueLengthLimit: 1_000_000, handSize: HAND_SIZE },
  }, { clock });
  const cycle = saturatedCycle<QueueSetRequest>(clock, {
    start: (hash, onDecision) => void qs.startRequest({ hash, onDecision }),
    finish: (r) => r.finish(),
  });
  for (let i = 0; i < 10 * CONCURRENCY_LIMIT; i++) cycle();
  if (qs.executingRequests !== CONCURRENCY_LIMIT || qs.waitingRequests !== FLOWS) {
    throw new Error(`Cannot bench Q=${queues}: the set is not in a steady state`);
  }
  return cycle;
});

// ---- benchmark baseline: Kubernetes' linear scan ---------------------------
//
// NOT the product: a minimal port of the Kubernetes QueueSet operations this
// workload exercises (`docs/semantics.md` §4.3-§4.7), kept only to measure how
// a linear scan grows with Q. Per operation, `syncTime` recomputes the
// virtual-time ratio over every queue (Kubernetes' `getVirtualTimeRatioLocked`)
// and `findDispatchQueue` scans every queue from `robinIndex + 1` for the least
// `nextDispatchR + head.totalWork`, strict `<` (`findDispatchQueueToBoundLocked`).
// Left out, which only makes the baseline cheaper than Kubernetes: metrics (including the
// nextDispatchR bounds tracked inside the scan), locks, contexts, epochs,
// multi-seat and final-phase work, rejection and cancellation.

class LinearReq {
  next: LinearReq | null = null;
  executing = false;
  startMs = 0;
  constructor(
    readonly queue: LinearQueue,
    readonly totalWork: number,
    readonly arrivalR: number,
    readonly onDispatch: (r: LinearReq) => void,
  ) {}
}

class LinearQueue {
  head: LinearReq | null = null;
  tail: LinearReq | null = null;
  waiting = 0;
  totalWorkSum = 0;
  nextDispatchR = 0;
  executing = 0;
  seatsInUse = 0;
}

class LinearScanQueueSet {
  #clock: FakeEventClock;
  #cl: number;
  #queues: LinearQueue[] = [];
  #dealer: Dealer;
  #hand: Int32Array;
  #work = seatsTimesDuration(1, ESTIMATED_SERVICE_DURATION_MS);
  #currentR = 0;
  #lastRealTime: number;
  #robinIndex = 0;
  #enqueues = 0;
  #totWaiting = 0;
  #totSeatsInUse = 0;

  constructor(clock: FakeEventClock, queues: number, concurrencyLimit: number, handSize: number) {
    this.#clock = clock;
    this.#cl = concurrencyLimit;
    for (let i = 0; i < queues; i++) this.#queues.push(new LinearQueue());
    this.#dealer = new Dealer(queues, handSize);
    this.#hand = new Int32Array(handSize);
    this.#lastRealTime = clock.now();
  }

  start(hash: bigint, onDispatch: (r: LinearReq) => void): void {
    this.#syncTime();
    const q = this.#queues[this.#shuffleShard(hash)]!;
    const r = new LinearReq(q, this.#work, this.#currentR, onDispatch);
    if (q.waiting === 0 && q.executing === 0) q.nextDispatchR = this.#currentR;
    if (q.tail === null) q.head = r;
    else q.tail.next = r;
    q.tail = r;
    q.waiting++;
    q.totalWorkSum += r.totalWork;
    this.#totWaiting++;
    this.#bound(q);
    this.#dispatchAsMuchAsPossible();
  }

  finish(r: LinearReq): boolean {
    if (!r.executing) return false;
    r.executing = false;
    this.#syncTime();
    const q = r.queue;
    q.executing--;
    q.nextDispatchR -= seatsTimesDuration(
      1,
      ESTIMATED_SERVICE_DURATION_MS - (this.#lastRealTime - r.startMs),
    );
    this.#bound(q);
    this.#totSeatsInUse--;
    q.seatsInUse--;
    this.#dispatchAsMuchAsPossible();
    return true;
  }

  #syncTime(): void {
    const now = this.#clock.now();
    const dt = now - this.#lastRealTime;
    this.#lastRealTime = now;
    let seats = 0, active = 0;
    for (const q of this.#queues) {
      seats += q.seatsInUse + q.waiting; // waiting max seats: one per request here
      if (q.waiting > 0 || q.executing > 0) active++;
    }
    const ratio = active === 0 ? 0 : Math.min(seats, this.#cl) / active;
    this.#currentR += seatsTimesDuration(ratio, dt);
  }

  #shuffleShard(hash: bigint): number {
    const hand = this.#dealer.dealIntoHand(hash, this.#hand);
    const n = hand.length;
    const offset = this.#enqueues++ % n;
    let best = -1, min = Infinity;
    for (let i = 0; i < n; i++) {
      const qi = hand[(offset + i) % n]!;
      const w = this.#queues[qi]!.totalWorkSum;
      if (w < min) {
        min = w;
        best = qi;
      }
    }
    return best;
  }

  #bound(q: LinearQueue): void {
    if (q.head !== null && q.nextDispatchR < q.head.arrivalR) q.nextDispatchR = q.head.arrivalR;
  }

  #dispatchAsMuchAsPossible(): void {
    while (this.#totWaiting !== 0 && this.#totSeatsInUse < this.#cl && this.#dispatchOne());
  }

  #dispatchOne(): boolean {
    // findDispatchQueue: the O(Q) scan this baseline exists for.
    const queues = this.#queues;
    const n = queues.length;
    let minFinish = Infinity, minQueue: LinearQueue | null = null, minIndex = -1;
    for (let k = 0; k < n; k++) {
      this.#robinIndex = (this.#robinIndex + 1) % n;
      const q = queues[this.#robinIndex]!;
      if (q.head !== null) {
        const finish = q.nextDispatchR + q.head.totalWork;
        if (finish < minFinish) {
          minFinish = finish;
          minQueue = q;
          minIndex = this.#robinIndex;
        }
      }
    }
    if (minQueue === null) return false;
    const r = minQueue.head!;
    if (this.#totSeatsInUse + 1 > this.#cl) return false;
    minQueue.head = r.next;
    if (minQueue.head === null) minQueue.tail = null;
    r.next = null;
    minQueue.waiting--;
    minQueue.totalWorkSum -= r.totalWork;
    this.#robinIndex = minIndex;
    this.#totWaiting--;
    r.executing = true;
    r.startMs = this.#lastRealTime;
    this.#totSeatsInUse++;
    minQueue.executing++;
    minQueue.seatsInUse++;
    minQueue.nextDispatchR += r.totalWork;
    this.#bound(minQueue);
    r.onDispatch(r);
    return true;
  }
}

const linear = QUEUE_COUNTS.map((queues) => {
  const clock = new FakeEventClock();
  const ks = new LinearScanQueueSet(clock, queues, CONCURRENCY_LIMIT, HAND_SIZE);
  const cycle = saturatedCycle<LinearReq>(clock, {
    start: (hash, onDispatch) => ks.start(hash, onDispatch),
    finish: (r) => ks.finish(r),
  });
  for (let i = 0; i < 10 * CONCURRENCY_LIMIT; i++) cycle();
  return cycle;
});

const groups = [["queue set cycle", ours], ["k8s linear scan reference", linear]] as const;
for (const [group, cycles] of groups) {
  QUEUE_COUNTS.forEach((queues, i) => {
    Deno.bench(`${group}: Q=${queues}`, { group, baseline: i === 0, ...BENCH_OPTIONS }, cycles[i]!);
  });
}

/** Median ns per cycle of each set: 101 batches of 2,000 cycles, the sets taking turns. */
function medians(cycles: readonly (() => void)[]): number[] {
  const batches = 101, perBatch = 2000;
  const samples = cycles.map(() => new Float64Array(batches));
  for (let b = 0; b < batches; b++) {
    cycles.forEach((cycle, k) => {
      const t0 = performance.now();
      for (let i = 0; i < perBatch; i++) cycle();
      samples[k]![b] = ((performance.now() - t0) * 1e6) / perBatch;
    });
  }
  return samples.map((s) => s.sort()[batches >> 1]!);
}

const all = medians([...ours, ...linear]);
const ns = (x: number) => `${x.toFixed(0)} ns`;
console.log("median per cycle (101 batches of 2,000 cycles, interleaved):");
console.log("| Q | queue set | growth | k8s linear scan | growth |");
console.log("| - | - | - | - | - |");
QUEUE_COUNTS.forEach((queues, i) => {
  const a = all[i]!, b = all[QUEUE_COUNTS.length + i]!;
  const a0 = all[0]!, b0 = all[QUEUE_COUNTS.length]!;
  console.log(
    `| ${queues} | ${ns(a)} | ${(a / a0).toFixed(2)}x | ${ns(b)} | ${(b / b0).toFixed(2)}x |`,
  );
});
