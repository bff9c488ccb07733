/**
 * The demo's upstream: an in-process HTTP server with a fixed number of
 * worker slots. Requests beyond them wait in FIFO order inside the server,
 * as in a thread-pool server, so an unprotected flood delays everyone.
 *
 * @module
 */

import type { Clock } from "../fairqueuing/clock.ts";

/** A running demo upstream. */
export interface DemoUpstream {
  /** Its base URL, on 127.0.0.1. */
  readonly url: string;
  /** Slots busy now. */
  readonly busy: number;
  /** Requests waiting for a slot. */
  readonly waiting: number;
  /** Requests whose work is done, since it started. */
  readonly completed: number;
  /** Requests a second its slots can do: slots over the mean handling time. */
  readonly capacityPerSecond: number;
  /** Stops it (after the requests it holds). */
  close(): Promise<void>;
}

/** Options of {@linkcode startDemoUpstream}. */
export interface DemoUpstreamOptions {
  /** Worker slots: requests handled at once. */
  slots: number;
  /** Shortest handling time, ms. */
  minMs: number;
  /** Longest handling time, ms. */
  maxMs: number;
  /** Timers. */
  clock: Clock;
}

/** Starts the upstream on 127.0.0.1 at a free port. */
export function startDemoUpstream(options: DemoUpstreamOptions): DemoUpstream {
  const { slots, minMs, maxMs, clock } = options;
  let busy = 0;
  let completed = 0;
  const queue: (() => void)[] = [];
  // A fixed pseudo-random sequence: the same handling times in both phases of a run.
  let seed = 0x9e3779b9;
  const nextMs = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return minMs + (seed / 2 ** 32) * (maxMs - minMs);
  };
  const acquire = (signal: AbortSignal): Promise<boolean> => {
    if (busy < slots) {
      busy++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        signal.removeEventListener("abort", leave);
        resolve(true);
      };
      const leave = () => {
        const at = queue.indexOf(grant);
        if (at >= 0) queue.splice(at, 1);
        resolve(false);
      };
      queue.push(grant);
      signal.addEventListener("abort", leave, { once: true });
    });
  };
  const release = () => {
    const next = queue.shift();
    // The slot passes straight to the next in line.
    if (next !== undefined) next();
    else busy--;
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (!(await acquire(req.signal))) return new Response(null, { status: 499 });
    try {
      const ms = nextMs();
      await new Promise((resolve) => clock.setTimer(ms, () => resolve(undefined)));
      completed++;
      return new Response(`done in ${Math.round(ms)} ms\n`);
    } finally {
      release();
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get busy() {
      return busy;
    },
    get waiting() {
      return queue.length;
    },
    get completed() {
      return completed;
    },
    capacityPerSecond: slots * 1000 / ((minMs + maxMs) / 2),
    close: () => server.shutdown(),
  };
}
