/**
 * A worker of `bench/coordinator_bench.ts`: acquire + release pairs of one
 * limiter, alone in an isolate of its own (a `Worker`), as an application
 * with one coordinator runs them. In the bench's own isolate the
 * coordinator's code serves five variants (other levels, a fake clock, a
 * metrics observer), and V8's inline caches on its path see all of them;
 * p-limit's serve one. Here each sees only its own.
 *
 * Messages: `{ setup: "coordinator" | "p-limit", request, seats, metrics?,
 * checkout? }` (answers `"ready"`; with `metrics`, the coordinator has a
 * `FlowcontrolMetrics` observer, as `apf()` gives it; with `checkout`, the
 * coordinator is that directory's, another checkout of the project; with
 * `countingClock`, its clock is a counter that moves 0.3 µs a read: every
 * step of the pair, the time-dependent ones included, without a call into
 * the runtime for the time), `{ pairs: n }` (answers the milliseconds `n`
 * pairs took), `{ close: true }`.
 *
 * @module
 */

// An outside reference for this bench only, so kept out of deno.json's import map (the package's).
// deno-lint-ignore no-import-prefix
import pLimit from "npm:p-limit@7.3.3";
import type { EmbeddedCoordinator, SeatRequest } from "../mod.ts";

type Setup = {
  setup: "coordinator" | "p-limit";
  request: SeatRequest;
  seats: number;
  metrics?: boolean;
  checkout?: string;
  countingClock?: boolean;
};
type Message = Setup | { pairs: number } | { close: true };

/** The worker's own scope (typed apart: the project is checked with the window's types). */
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Message>) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
};

let pairs: (n: number) => Promise<void> = () => Promise.reject(new Error("not set up"));
let coordinator: EmbeddedCoordinator | null = null;

async function setUp(m: Setup): Promise<void> {
  if (m.setup === "coordinator") {
    const root = m.checkout === undefined ? new URL("..", import.meta.url).href : `${m.checkout}/`;
    const apf = await import(`${root}mod.ts`);
    const { FlowcontrolMetrics } = await import(`${root}src/observe/mod.ts`);
    let ms = 0;
    const c = coordinator = new apf.EmbeddedCoordinator(
      apf.effectiveConfiguration(apf.bootstrapConfiguration()),
      {
        ...(m.metrics === true && { metrics: new FlowcontrolMetrics() }),
        ...(m.countingClock === true && {
          clock: { now: () => (ms += 0.0003), setTimer: apf.systemClock.setTimer },
        }),
      },
    ) as EmbeddedCoordinator;
    pairs = async (n) => {
      for (let i = 0; i < n; i++) {
        const a = await c.acquire(m.request);
        if (!a.admitted) throw new Error(`Cannot bench: rejected (${a.reason})`);
        a.seat.release();
      }
    };
  } else {
    const limit = pLimit(m.seats);
    pairs = async (n) => {
      for (let i = 0; i < n; i++) await limit(() => {});
    };
  }
}

scope.onmessage = async (e) => {
  const m = e.data;
  if ("setup" in m) {
    await setUp(m);
    scope.postMessage("ready");
  } else if ("pairs" in m) {
    const t0 = performance.now();
    await pairs(m.pairs);
    scope.postMessage(performance.now() - t0);
  } else {
    coordinator?.close();
    scope.close();
  }
};
