/**
 * Load on the real clock for the tests that drive a running gateway: loops
 * of `fetch` as one user (one flow, with `trustIdentityHeaders`), each
 * sending a request, reading its answer, and pausing, until stopped.
 */

import { sleep, systemClock } from "../../src/fairqueuing/clock.ts";

/** Who sends, how many loops, and how long each pauses. */
export interface FloodShape {
  /** `X-Remote-User`. */
  user: string;
  /** `X-Remote-Group` values (default none: `system:authenticated` only). */
  groups?: readonly string[];
  /** Concurrent loops, each with one request in flight at most. */
  loops: number;
  /** Pause after an answer other than 2xx (a 429), in ms. */
  pauseMs: number;
  /** Pause after a 2xx answer, in ms (default 0: at once). */
  thinkMs?: number;
  /**
   * Told of every answer: its status (0: a network error), when its request
   * was sent and when the answer was read, on the system clock.
   */
  onAnswer?: (status: number, sentAt: number, doneAt: number) => void;
}

/** A running flood; dispose it (or `stop()`) before the servers it talks to. */
export interface Flood extends AsyncDisposable {
  /** Answers by status (0: a network error). */
  readonly statuses: ReadonlyMap<number, number>;
  /** Stops the loops, abandons the requests in flight, and settles when every loop ended. */
  stop(): Promise<void>;
}

/** Starts `shape.loops` loops sending `GET url` as `shape.user`. */
export function flood(url: string, shape: FloodShape): Flood {
  const statuses = new Map<number, number>();
  const abandon = new AbortController();
  const headers = new Headers({ "X-Remote-User": shape.user });
  for (const group of shape.groups ?? []) headers.append("X-Remote-Group", group);

  const pause = (ms: number) => sleep(systemClock, ms, abandon.signal);

  const loop = async () => {
    while (!abandon.signal.aborted) {
      let status = 0;
      const sentAt = systemClock.now();
      try {
        const res = await fetch(url, { headers, signal: abandon.signal });
        await res.arrayBuffer();
        status = res.status;
      } catch {
        // Abandoned by stop(), or the server went away: counted as 0.
      }
      if (abandon.signal.aborted) break;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      shape.onAnswer?.(status, sentAt, systemClock.now());
      await pause(status >= 200 && status < 300 ? shape.thinkMs ?? 0 : shape.pauseMs);
    }
  };
  const loops = Array.from({ length: shape.loops }, loop);
  let stopping: Promise<void> | undefined;
  const stop = () => stopping ??= (abandon.abort(), Promise.all(loops).then(() => {}));
  return { statuses, stop, [Symbol.asyncDispose]: stop };
}
