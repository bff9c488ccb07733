/** A test upstream on loopback, and a port where nothing listens. */

import { sleep } from "./real_time.ts";

/** A test upstream on 127.0.0.1 that counts its concurrency. */
export interface TestUpstream {
  url: string;
  /** Requests being handled now. */
  readonly active: number;
  /** The most handled at once. */
  readonly maxActive: number;
  /** Requests handled, ever. */
  readonly handled: number;
  /** Every request received, in order. */
  readonly received: Request[];
  /** Stops the server once the requests in flight have been answered. */
  close(): Promise<void>;
  /** Same as {@linkcode TestUpstream.close}. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@linkcode testUpstream}. */
export interface TestUpstreamOptions {
  /** How long the default handler sleeps before it answers, in ms (default 0). */
  sleepMs?: number;
  /** The handler (default: sleeps `sleepMs`, then answers `ok <path>`). */
  handle?: (req: Request) => Response | Promise<Response>;
  /**
   * Told of every change of the requests being handled, as it happens:
   * the count after it, `+1` or `-1`, and the request (for a timeline of
   * the requests in flight, by path).
   */
  onActive?: (active: number, change: 1 | -1, req: Request) => void;
}

/**
 * Starts an upstream whose handler is `handle` (default: sleeps `sleepMs`, then answers
 * `ok <path>`), counting how many requests it handles at once.
 */
export function testUpstream(options: TestUpstreamOptions = {}): TestUpstream {
  let active = 0, maxActive = 0, handled = 0;
  const received: Request[] = [];
  const handle = options.handle ?? (async (req: Request) => {
    await sleep(options.sleepMs ?? 0);
    return new Response(`ok ${new URL(req.url).pathname}`);
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    received.push(req);
    active++;
    maxActive = Math.max(maxActive, active);
    options.onActive?.(active, 1, req);
    try {
      return await handle(req);
    } finally {
      active--;
      handled++;
      options.onActive?.(active, -1, req);
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
    get handled() {
      return handled;
    },
    received,
    close: () => server.shutdown(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** A port on 127.0.0.1 where nobody listens (bound, then closed). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
