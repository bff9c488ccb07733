/**
 * `apf()`'s randomized fault run in a real server (`Deno.serve` on
 * loopback): a dozen clients at once, each request's fate drawn from one
 * seeded PRNG. On the handler's side: a text answered at once or late, a
 * throw, a body streamed slowly, a streamed body that fails mid-way, a
 * watch (its seat back once initialized) and an event stream. On the
 * client's: an abort at a random moment, the body cancelled unread. Seats
 * are few and queues short, so requests also wait and are rejected.
 *
 * Checked: every request settles in bounded time with a status its fate
 * allows (or a 429); a body read to its end is exactly what the handler
 * made; at the end no seat is held and nothing waits (a seat follows its
 * body, so this is awaited, bounded), and the server then answers requests
 * in a row with 200.
 *
 * The fates come from one seeded PRNG (`APF_FAULT_SEED` with
 * `--allow-env=APF_FAULT_SEED` to try another seed); real time also shapes
 * the run, so a seed reproduces the fates, not every interleaving.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { frontProxyIdentity, systemClock } from "../../mod.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { xorshift } from "../_helpers/closed_loop_upstream.ts";
import { faultSeed } from "../_helpers/fault_seed.ts";
import { sleep, waitFor, within } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { smallConfig } from "../deno/_helpers.ts";

const SEED = faultSeed(0x5eed_a9f);
const CLIENTS = 12;
const REQUESTS_PER_CLIENT = 25;
const REQUEST_TIMEOUT_MS = 400;
/** Scheduling slack allowed past the longest fate (a loaded machine's timers run late). */
const SLACK_MS = 2_000;

const FATES = ["text", "late", "throw", "stream", "stream-fails", "watch", "events"] as const;
type Fate = typeof FATES[number];

/** What a client may see for each fate, besides a 429. */
const ALLOWED: Record<Fate, { status: number; body?: string }> = {
  "text": { status: 200, body: "hello" },
  "late": { status: 200, body: "hello" },
  "throw": { status: 500 },
  "stream": { status: 200, body: "a,b,c," },
  // Its body fails after "a,": never read to a clean end.
  "stream-fails": { status: 200 },
  "watch": { status: 200, body: "event-1\nevent-2\n" },
  "events": { status: 200, body: "data: 1\n\ndata: 2\n\n" },
};

const encoder = new TextEncoder();

/** A body of `parts`, one every `delayMs`, failing after the first when `fails`. */
function slowBody(parts: string[], delayMs: number, fails = false): ReadableStream<Uint8Array> {
  let i = 0;
  let timer: { cancel(): void } | null = null;
  return new ReadableStream({
    pull(controller) {
      return new Promise<void>((resolve) => {
        timer = systemClock.setTimer(delayMs, () => {
          timer = null;
          if (fails && i === 1) controller.error(new Error("the source failed"));
          else if (i === parts.length) controller.close();
          else controller.enqueue(encoder.encode(parts[i++]!));
          resolve();
        });
      });
    },
    cancel() {
      timer?.cancel();
    },
  });
}

function serve() {
  const limiter = apf({
    // 5 seats for `tenants` (5 of 10 shares), 8 queues of 2: requests wait and are rejected.
    config: smallConfig(
      tenantsManifest({ shares: 5, queues: 8, handSize: 2, queueLengthLimit: 2 }),
      10,
    ),
    identify: frontProxyIdentity(),
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  const app = new Hono<ApfEnv>();
  app.onError((_e, c) => c.text("handler failed", 500));
  app.use(limiter);
  app.get("/fate/:fate/:delay", async (c): Promise<Response> => {
    const delay = Number(c.req.param("delay"));
    switch (c.req.param("fate") as Fate) {
      case "text":
        return c.text("hello");
      case "late":
        await sleep(delay);
        return c.text("hello");
      case "throw":
        throw new Error("the handler failed");
      case "stream":
        return new Response(slowBody(["a,", "b,", "c,"], delay / 3));
      case "stream-fails":
        return new Response(slowBody(["a,", "b,"], delay / 3, true));
      case "watch":
        return new Response(slowBody(["event-1\n", "event-2\n"], delay / 2));
      case "events":
        return new Response(slowBody(["data: 1\n\n", "data: 2\n\n"], delay / 2), {
          headers: { "Content-Type": "text/event-stream" },
        });
      default:
        return c.text("no such fate", 404);
    }
  });
  // Deno.serve tells its onError of a body that failed after its head went out.
  const failed: unknown[] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
    onError: (e) => {
      failed.push(e);
      return new Response(null, { status: 500 });
    },
  }, app.fetch);
  return { limiter, server, failed, base: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test("apf() in a server: random handler and client faults settle as the contract says, and no seat is left held", async () => {
  const random = xorshift(SEED);
  const { limiter, server, failed, base } = serve();
  const seen = new Map<string, number>();
  const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
  const one = async (client: number): Promise<void> => {
    const fate = FATES[Math.floor(random() * FATES.length)]!;
    const delay = 3 + Math.floor(random() * 40);
    const abortAfterMs = random() < 0.25 ? random() * 60 : -1;
    const cancelBody = random() < 0.15;
    const controller = new AbortController();
    const timer = abortAfterMs < 0
      ? null
      : systemClock.setTimer(abortAfterMs, () => controller.abort());
    const what = () => `seed ${SEED}: ${fate} (delay ${delay}, abort ${abortAfterMs.toFixed(0)})`;
    // A watch is told by its verb: the query, as Kubernetes reads it.
    const query = fate === "watch" ? "?watch=true" : "";
    let status: number | "aborted" = "aborted";
    try {
      const res = await fetch(`${base}/fate/${fate}/${delay}${query}`, {
        headers: {
          "X-Remote-User": `user-${client % 4}`,
          "X-Remote-Group": "system:authenticated",
        },
        signal: controller.signal,
      });
      status = res.status;
      if (res.status === 429) {
        await res.body?.cancel();
      } else {
        assert.equal(res.status, ALLOWED[fate].status, what());
        if (cancelBody) {
          await res.body?.cancel();
        } else {
          const body = await res.text().then((t) => t, () => null);
          if (fate === "stream-fails") {
            assert.equal(body, null, `${what()}: a failed body read to a clean end`);
          } else if (!controller.signal.aborted) {
            assert.equal(body, ALLOWED[fate].body ?? body, what());
          }
        }
      }
    } catch (e) {
      if (!(e instanceof DOMException && e.name === "AbortError")) throw e;
      assert.ok(controller.signal.aborted, what());
    } finally {
      timer?.cancel();
    }
    count(`fate ${fate}`);
    count(`status ${status}`);
  };
  try {
    await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; i < REQUESTS_PER_CLIENT; i++) {
        await within(
          one(client),
          REQUEST_TIMEOUT_MS + SLACK_MS,
          () => `seed ${SEED}: a request of client ${client} did not settle`,
        );
      }
    }));

    // The run exercised what it is about.
    for (const fate of FATES) assert.ok(seen.has(`fate ${fate}`), `seed ${SEED}: no ${fate}`);
    for (const status of [200, 429, 500, "aborted"]) {
      assert.ok(seen.has(`status ${status}`), `seed ${SEED}: no ${status} in ${[...seen]}`);
    }

    // What failed after its head was the handlers' own bodies, passed on as they failed.
    for (const e of failed) assert.equal((e as Error).message, "the source failed", String(e));

    // A seat follows its body: each comes back once the body ends, fails or is cancelled.
    const idle = () =>
      limiter.snapshot()!.levels.every((l) =>
        l.queueSet.seatsInUse === 0 && l.queueSet.waitingRequests === 0 &&
        l.queueSet.executingRequests === 0
      );
    await waitFor(idle, `seed ${SEED}: every seat back`, SLACK_MS);

    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${base}/fate/text/0`, {
        headers: { "X-Remote-User": "after", "X-Remote-Group": "system:authenticated" },
      });
      assert.equal(res.status, 200, `seed ${SEED}: request ${i} after the run`);
      assert.equal(await res.text(), "hello");
    }
  } finally {
    await server.shutdown();
    limiter.close();
  }
});
