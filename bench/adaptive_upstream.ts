/**
 * The upstream of the adaptive-limit benchmark (bench/adaptive_gateway.sh): a
 * worker pool of K workers taking S ms each, the requests beyond K waiting in
 * one FIFO queue, as `tests/deno/gateway_adaptive_test.ts`'s pool and the
 * simulator's upstream (`src/sim/upstream.ts`) do. It counts what it holds
 * (in work plus queued) every 10 ms and what it completes, per second since
 * the last reset, and takes its orders on `/_ctl/` (sent straight to it, not
 * through the gateway):
 *
 * - `POST /_ctl/reset?workers=K&work=S`: K and S from now on, the counters cleared, time 0 now;
 * - `POST /_ctl/workers?k=K`: K from now on (fewer: the workers beyond K stop once their request
 *   is done; more: waiting requests start at once);
 * - `GET /_ctl/stats`: per second since the reset, `{ sec, workers, done, held: number[] }`
 *   (`held`: the 10 ms samples of requests held);
 * - anything else is work: the answer `done` once a worker has spent S ms on it.
 *
 * Run: `deno run --allow-net=127.0.0.1 bench/adaptive_upstream.ts [port=18480] [K=8] [S=50]`.
 *
 * @module
 */

const port = Number(Deno.args[0] ?? 18480);
let workers = Number(Deno.args[1] ?? 8);
let workMs = Number(Deno.args[2] ?? 50);

let busy = 0;
let held = 0;
const waiting: (() => void)[] = [];
let t0 = performance.now();

interface Second {
  sec: number;
  workers: number;
  done: number;
  held: number[];
}
let seconds: Second[] = [];

function secondNow(): Second {
  const sec = Math.floor((performance.now() - t0) / 1000);
  let s = seconds[sec];
  if (s === undefined) {
    s = { sec, workers, done: 0, held: [] };
    seconds[sec] = s;
  }
  return s;
}

/** Starts waiting requests while a worker is free. */
function pump(): void {
  while (busy < workers && waiting.length > 0) {
    busy++;
    waiting.shift()!();
  }
}

async function work(): Promise<Response> {
  held++;
  if (busy < workers) busy++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  await new Promise((resolve) => setTimeout(resolve, workMs));
  busy--;
  held--;
  secondNow().done++;
  pump();
  return new Response("done");
}

setInterval(() => {
  const s = secondNow();
  s.held.push(held);
  s.workers = workers;
}, 10);

function control(req: Request, url: URL): Response {
  const number = (name: string, fallback: number) => {
    const text = url.searchParams.get(name);
    const n = text === null ? fallback : Number(text);
    if (!(Number.isSafeInteger(n) && n >= 1)) throw new RangeError(`${name} must be ≥ 1: ${text}`);
    return n;
  };
  if (req.method === "POST" && url.pathname === "/_ctl/reset") {
    workers = number("workers", workers);
    workMs = number("work", workMs);
    t0 = performance.now();
    seconds = [];
    pump();
    return Response.json({ workers, workMs, held });
  }
  if (req.method === "POST" && url.pathname === "/_ctl/workers") {
    workers = number("k", workers);
    pump();
    return Response.json({ workers, atMs: performance.now() - t0 });
  }
  if (req.method === "GET" && url.pathname === "/_ctl/stats") {
    return Response.json(seconds.filter((s) => s !== undefined));
  }
  return new Response("unknown control\n", { status: 404 });
}

Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (req) => {
  const url = new URL(req.url);
  if (url.pathname.startsWith("/_ctl/")) {
    try {
      return control(req, url);
    } catch (e) {
      return new Response(`${(e as Error).message}\n`, { status: 400 });
    }
  }
  return work();
});
console.log(`upstream: ${workers} workers × ${workMs} ms on 127.0.0.1:${port}`);
