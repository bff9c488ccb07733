/**
 * The demo's clients: one "elephant" flow keeping many requests in flight,
 * and "mice" flows sending one request at a time with think time. Each flow
 * is a user, named in `X-Remote-User`.
 *
 * @module
 */

import { type Clock, sleep as sleepFor } from "../fairqueuing/clock.ts";

/** What one flow got so far. */
export interface FlowStats {
  /** The user name. */
  readonly user: string;
  /** Requests sent. */
  sent: number;
  /** Requests answered 2xx. */
  served: number;
  /** Requests answered 429. */
  rejected: number;
  /** Requests that failed otherwise (5xx, network errors). */
  failed: number;
  /** Requests sent and not answered yet. */
  inFlight: number;
  /** Latency of every served request, ms. */
  readonly latencies: number[];
}

/** The shape of the load. */
export interface LoadShape {
  /** Concurrent request loops of the elephant. */
  elephantLoops: number;
  /** Pause of an elephant loop after a 429, ms. */
  elephantPauseMs: number;
  /** Number of mice. */
  mice: number;
  /** Think time of a mouse between requests, ms. */
  mouseThinkMs: number;
}

/** A running load. */
export interface Load {
  /** Per flow: the elephant first, then the mice. */
  readonly flows: readonly FlowStats[];
  /** Stops sending, abandons what is in flight, and settles once every loop ended. */
  stop(): Promise<void>;
}

function flowStats(user: string): FlowStats {
  return { user, sent: 0, served: 0, rejected: 0, failed: 0, inFlight: 0, latencies: [] };
}

/** Starts the load against `url`. */
export function startLoad(url: string, shape: LoadShape, clock: Clock): Load {
  const elephant = flowStats("elephant");
  const mice = Array.from({ length: shape.mice }, (_, i) => flowStats(`mouse-${i + 1}`));
  const abandon = new AbortController();
  let stopped = false;
  const sleep = (ms: number) => stopped ? Promise.resolve() : sleepFor(clock, ms, abandon.signal);

  /** Sends one request; returns its status (0: failed or abandoned). */
  const send = async (flow: FlowStats): Promise<number> => {
    flow.sent++;
    flow.inFlight++;
    const start = clock.now();
    try {
      const res = await fetch(url, {
        headers: { "X-Remote-User": flow.user },
        signal: abandon.signal,
      });
      await res.arrayBuffer();
      if (stopped) return 0;
      if (res.ok) {
        flow.served++;
        flow.latencies.push(clock.now() - start);
      } else if (res.status === 429) flow.rejected++;
      else flow.failed++;
      return res.status;
    } catch {
      // Abandoned at the end of the phase: not counted against anyone.
      if (!stopped) flow.failed++;
      return 0;
    } finally {
      flow.inFlight--;
    }
  };

  const loops: Promise<void>[] = [];
  for (let i = 0; i < shape.elephantLoops; i++) {
    loops.push((async () => {
      while (!stopped) {
        const status = await send(elephant);
        // An impatient client: a short pause after a 429, not the Retry-After it was given.
        if (status === 429 || status === 0) await sleep(shape.elephantPauseMs);
      }
    })());
  }
  for (const mouse of mice) {
    loops.push((async () => {
      while (!stopped) {
        await send(mouse);
        await sleep(shape.mouseThinkMs);
      }
    })());
  }
  return {
    flows: [elephant, ...mice],
    async stop() {
      stopped = true;
      abandon.abort();
      await Promise.all(loops);
    },
  };
}

/** Percentile `p` (0..1) of `values` by nearest rank; `undefined` when there are none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
