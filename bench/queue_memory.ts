/**
 * Memory per queued request (target: under 300 bytes). Run with
 * `deno run --allow-read --v8-flags=--expose-gc bench/queue_memory.ts`.
 *
 * One seat, taken before the measurement, so that every request started
 * afterwards waits; 1,000,000 of them in one queue. Heap in use is read after
 * a forced collection before and after starting them. The handles are kept
 * in an array allocated before the first reading, and the array is measured
 * on its own, so the table shows the queue set's cost with and without the
 * caller's slot per handle. Variants:
 *
 * - plain: `startRequest({})`;
 * - descriptor: a `descriptor` shared by all requests (the field exists
 *   anyway, so this should cost nothing);
 * - waitLimitMs: each request has a deadline, so it also sits in the wait
 *   deadline heap;
 * - signal: one `AbortSignal` shared by all requests. The queue set adds a
 *   single listener per distinct signal and keeps the requests waiting on it
 *   in a set (Deno's `addEventListener`/`removeEventListener` scan the
 *   listeners already on a signal, so one listener per request cost O(N²):
 *   adding 100,000 took about 19 s on a 2-core EPYC VM);
 * - signal per request: one `AbortController` per request, allocated before
 *   the first reading, so only the listener is counted (most of it is
 *   Deno's bookkeeping for a signal's first listener).
 *
 * The clock reads a fractional time and virtual time is past the
 * small-integer range, as in production, where V8 boxes such fields.
 *
 * Then every request is cancelled and the seat released; the last column
 * shows the heap left over relative to the reading before the queue set was
 * created, with the emptied queue set still alive and the handles dropped.
 */

import {
  FakeEventClock,
  QueueSet,
  type QueueSetRequest,
  type StartRequestInit,
} from "../src/fairqueuing/mod.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  throw new Error("Cannot measure memory: run with --v8-flags=--expose-gc");
}

function heapAfterGc(): number {
  // Twice: the first collection may only promote what the second frees.
  gc!();
  gc!();
  return Deno.memoryUsage().heapUsed;
}

interface Row {
  variant: string;
  n: number;
  /** Heap per waiting request, the handle array excluded. */
  perRequest: number;
  /** Heap of the handle array, per slot. */
  perSlot: number;
  /** Real time to start one request, in ns. */
  startNs: number;
  /** Heap above the first reading once all is cancelled, the set still alive. */
  leftOver: number;
}

/**
 * Measures `n` waiting requests started with `init(state, i)`; `prepare(n)`
 * builds `state` before the readings, so what it allocates is not counted.
 */
function measure<T>(
  variant: string,
  n: number,
  prepare: (n: number) => T,
  init: (state: T, i: number) => StartRequestInit,
): Row {
  const before = heapAfterGc();
  // A fractional clock, then a minute of virtual time before measuring.
  const clock = new FakeEventClock(1_000.5);
  const qs = new QueueSet(
    {
      type: "Limited",
      concurrencyLimit: 1,
      queuing: { queues: 1, queueLengthLimit: 2_000_000, handSize: 1 },
    },
    { clock },
  );
  const seat = qs.startRequest();
  clock.advance(60_000);
  const row = fillAndCancel(qs, variant, n, prepare, init);
  if (!seat.finish() || !qs.isIdle || qs.snapshot().rejected.cancelled !== n) {
    throw new Error(`Cannot clean up ${variant}: the queue set is not idle`);
  }
  // Read here, once fillAndCancel's frame (its handles and state) is gone.
  return { ...row, leftOver: heapAfterGc() - before };
}

function fillAndCancel<T>(
  qs: QueueSet,
  variant: string,
  n: number,
  prepare: (n: number) => T,
  init: (state: T, i: number) => StartRequestInit,
): Omit<Row, "leftOver"> {
  const state = prepare(n);
  const ready = heapAfterGc();
  const handles: QueueSetRequest[] = new Array(n).fill(null);
  const withArray = heapAfterGc();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) handles[i] = qs.startRequest(init(state, i));
  const startNs = ((performance.now() - t0) * 1e6) / n;
  if (qs.waitingRequests !== n) {
    throw new Error(`Cannot measure ${variant}: ${qs.waitingRequests} of ${n} requests wait`);
  }
  const after = heapAfterGc();
  for (let i = 0; i < n; i++) {
    if (!handles[i]!.cancel()) throw new Error(`Cannot clean up ${variant}: request ${i} ran`);
  }
  return {
    variant,
    n,
    perRequest: (after - withArray) / n,
    perSlot: (withArray - ready) / n,
    startNs,
  };
}

const N = 1_000_000;
const N_SHARED_SIGNAL = 1_000_000;
const N_OWN_SIGNAL = 200_000;
const descriptor = { flowSchema: "global-default", distinguisher: "alice" };
const shared = new AbortController();

const rows: Row[] = [
  measure("plain", N, () => ({}), (init) => init),
  measure("descriptor (shared object)", N, () => ({ descriptor }), (init) => init),
  measure("waitLimitMs (deadline heap)", N, () => ({ waitLimitMs: 60_000 }), (init) => init),
  measure(
    "signal (one shared)",
    N_SHARED_SIGNAL,
    () => ({ signal: shared.signal }),
    (init) => init,
  ),
  measure(
    "signal (one per request)",
    N_OWN_SIGNAL,
    (n) => Array.from({ length: n }, () => new AbortController()),
    (controllers, i) => ({ signal: controllers[i]!.signal }),
  ),
];

const fmt = (x: number) => x.toFixed(1);
console.log(
  "| variant | requests | bytes/request | + handle slot | start | heap left after cleanup |",
);
console.log("| - | -: | -: | -: | -: | -: |");
for (const r of rows) {
  console.log(
    `| ${r.variant} | ${r.n.toLocaleString("en-US")} | ${fmt(r.perRequest)} | ${
      fmt(r.perRequest + r.perSlot)
    } (slot ${fmt(r.perSlot)}) | ${r.startNs.toFixed(0)} ns | ${
      (r.leftOver / 1024).toFixed(0)
    } KiB |`,
  );
}
