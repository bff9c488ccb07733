/**
 * The gateway's randomized fault run, for both upstream clients: a dozen
 * clients at once in front of a raw-socket upstream, each request's fate
 * drawn from one seeded PRNG. On the upstream's side: a response whole, a
 * late one, a chunked one, a chunked one cut short, a close before any
 * byte, garbage, a length longer than the body, a head later than the
 * request timeout, a body delimited by the close, a 503, a close in the
 * middle of the head. On the client's: an abort at a random moment, the
 * body cancelled unread, a POST with a body by length or streamed
 * (chunked), a streamed one sometimes broken off by the client itself (a
 * `400` if it gets an answer at all). Seats are few and queues
 * short, so requests also wait, time out waiting and are rejected.
 *
 * Checked: every request settles in bounded time; its status is one the
 * gateway's contract allows for its fate (`docs/semantics.md` §11.2), and
 * a 200 whose body is read to its end carries exactly what the upstream
 * sent whole (a body cut short is never a complete 200). Every body the
 * upstream cut short after its head went out is reported to
 * `onUpstreamError`, and nothing is logged as a failure of the gateway's
 * own. At the end no
 * seat is held and nothing waits (seats follow the upstream, so this is
 * awaited, within the request timeout), and the gateway then answers
 * requests in a row with 200: no connection or seat of a failed exchange
 * poisons the next.
 *
 * The fates come from one seeded PRNG (`SEED`; run with
 * `--allow-env=APF_FAULT_SEED` and `APF_FAULT_SEED=n` to try another).
 * Real time also shapes the run, so a seed reproduces the fates, not every
 * interleaving.
 */

import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import { UpstreamBodyFailed } from "../../src/deno/_upstream_body.ts";
import { captureConsole } from "../_helpers/console.ts";
import { okResponse, rawUpstream, type Respond } from "../_helpers/raw_upstream.ts";
import { xorshift } from "../_helpers/closed_loop_upstream.ts";
import { sleep, waitFor, within } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { systemClock } from "../../mod.ts";
import { smallConfig } from "./_helpers.ts";
import { faultSeed } from "../_helpers/fault_seed.ts";

const DEFAULT_SEED = 0x27_f4a1;
const SEED = faultSeed(DEFAULT_SEED);
const CLIENTS = 12;
const REQUESTS_PER_CLIENT = 25;
const REQUEST_TIMEOUT_MS = 400;
/** Scheduling slack allowed past the request timeout (a loaded machine's timers run late). */
const SLACK_MS = 2_000;

const FATES = [
  "whole",
  "late",
  "chunked",
  "chunked-cut",
  "close-first",
  "garbage",
  "short",
  "slow-head",
  "close-delimited",
  "busy",
  "head-cut",
] as const;
type Fate = typeof FATES[number];

/** What a client may see for each fate, besides a 429 (a seat not had in time). */
const ALLOWED: Record<Fate, { statuses: number[]; body?: string }> = {
  "whole": { statuses: [200], body: "hello" },
  "late": { statuses: [200], body: "hello" },
  "chunked": { statuses: [200], body: "hellohellohello" },
  // Cut after the head went out: a 200 whose body fails; before: a 502.
  "chunked-cut": { statuses: [200, 502] },
  "close-first": { statuses: [502] },
  "garbage": { statuses: [502] },
  "short": { statuses: [200, 502] },
  "slow-head": { statuses: [504] },
  "close-delimited": { statuses: [200], body: "hello world" },
  "busy": { statuses: [503], body: "busy" },
  "head-cut": { statuses: [502] },
};
/** The fates whose whole body never comes: reading it must fail. */
const CUT: ReadonlySet<Fate> = new Set(["chunked-cut", "short"]);

/** The upstream acts out the fate named in the target: `/fate/<fate>/<delay ms>`. */
const respond: Respond = async (req, conn) => {
  const [, , fate, delay] = req.target.split("?")[0]!.split("/") as [string, string, Fate, string];
  const write = async (text: string) => {
    if (!conn.closed) await conn.write(text).catch(() => {});
  };
  switch (fate) {
    case "whole":
      return await write(okResponse("hello"));
    case "late":
      await sleep(Number(delay));
      return await write(okResponse("hello"));
    case "chunked":
      await write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (let i = 0; i < 3; i++) {
        await sleep(Number(delay) / 3);
        await write("5\r\nhello\r\n");
      }
      return await write("0\r\n\r\n");
    case "chunked-cut":
      await write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel");
      await sleep(Number(delay));
      return conn.close();
    case "close-first":
      return conn.close();
    case "garbage":
      await write("HTTZ/9 what\r\n\r\n");
      return conn.close();
    case "short":
      await write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello");
      await sleep(Number(delay));
      return conn.close();
    case "slow-head":
      await sleep(REQUEST_TIMEOUT_MS + 200);
      return await write(okResponse("hello"));
    case "close-delimited":
      await write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello world");
      return conn.close();
    case "busy":
      return await write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy");
    case "head-cut":
      await write("HTTP/1.1 200 OK\r\nContent-Le");
      return conn.close();
  }
};

/**
 * A streamed request body of `length` bytes in two chunks a moment apart,
 * or, with `breaks`, one chunk and then an error: the client's fetch gives
 * up on the request mid-body.
 */
function clientBody(length: number, breaks: boolean): ReadableStream<Uint8Array> {
  const half = new TextEncoder().encode("x".repeat(Math.ceil(length / 2) + 1));
  let sent = 0;
  return new ReadableStream({
    async pull(controller) {
      if (sent++ === 0) return controller.enqueue(half);
      await sleep(5);
      if (breaks) return controller.error(new Error("the client broke its body off"));
      controller.enqueue(half);
      controller.close();
    },
  });
}

/** What happened to one request, for the failure message. */
interface Outcome {
  fate: Fate;
  method: string;
  /** The client broke its own streamed body off. */
  brokeBody: boolean;
  aborted: boolean;
  status: number | "aborted";
  body: string | "cancelled" | "failed" | "unread";
}

function check(o: Outcome): void {
  const what = `seed ${SEED}: ${JSON.stringify(o)}`;
  if (o.status === "aborted") {
    assert.ok(o.aborted, `only a request its client aborted may end without a response: ${what}`);
    return;
  }
  if (o.status === 429) return;
  // A body the client broke off is its own error (RFC 9110 §15.5.1), whatever the fate.
  if (o.brokeBody && o.status === 400) return;
  const allowed = ALLOWED[o.fate];
  assert.ok(allowed.statuses.includes(o.status), `status not allowed for the fate: ${what}`);
  if (o.status !== 200 || o.body === "cancelled") return;
  if (CUT.has(o.fate)) {
    // The client that aborted may have cut it itself; otherwise the body must fail.
    if (!o.aborted) assert.equal(o.body, "failed", `a body cut short read as whole: ${what}`);
    return;
  }
  if (o.body !== "failed" || !o.aborted) {
    assert.equal(o.body, allowed.body, `the body of a 200 is not what the upstream sent: ${what}`);
  }
}

for (const kind of ["http1", "fetch"] as const) {
  Deno.test(`${kind}: random upstream and client faults: every request settles as the contract says, and no seat is left held`, async () => {
    const random = xorshift(SEED);
    using logged = captureConsole("error");
    const reported: unknown[] = [];
    /** The URL of each request whose failure was reported as the upstream's. */
    const blamed: string[] = [];
    await using upstream = rawUpstream(respond);
    await using gateway = serveGateway({
      upstream: upstream.url,
      listen: { hostname: "127.0.0.1", port: 0 },
      upstreamClient: kind,
      trustIdentityHeaders: true,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      onUpstreamError: (e, request) => {
        reported.push(e);
        blamed.push(request.url);
      },
      // 5 seats for `tenants` (5 of 10 shares), 8 queues of 2: requests wait and are rejected.
      config: smallConfig(
        tenantsManifest({ shares: 5, queues: 8, handSize: 2, queueLengthLimit: 2 }),
        10,
      ),
    });
    const base = `http://127.0.0.1:${gateway.addr.port}`;
    const seen = new Map<string, number>();
    const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);

    async function one(client: number): Promise<void> {
      const fate = FATES[Math.floor(random() * FATES.length)]!;
      const delay = Math.floor(random() * 30);
      const abortAfterMs = random() < 0.25 ? random() * 60 : -1;
      const cancelBody = random() < 0.15;
      const post = random() < 0.2;
      const streamed = post && random() < 0.5;
      const breaksBody = streamed && random() < 0.4;
      const controller = new AbortController();
      const timer = abortAfterMs < 0
        ? null
        : systemClock.setTimer(abortAfterMs, () => controller.abort());
      const outcome: Outcome = {
        fate,
        method: post ? "POST" : "GET",
        brokeBody: breaksBody,
        aborted: false,
        status: "aborted",
        body: "unread",
      };
      try {
        // The query marks a body the client breaks off, for the reports' check.
        const res = await fetch(`${base}/fate/${fate}/${delay}${breaksBody ? "?broken" : ""}`, {
          method: outcome.method,
          headers: {
            "X-Remote-User": `user-${client % 4}`,
            "X-Remote-Group": "system:authenticated",
          },
          ...(post &&
            { body: streamed ? clientBody(delay * 50, breaksBody) : "x".repeat(delay * 50) }),
          signal: controller.signal,
        });
        outcome.status = res.status;
        if (cancelBody) {
          await res.body?.cancel();
          outcome.body = "cancelled";
        } else {
          try {
            outcome.body = await res.text();
          } catch {
            outcome.body = "failed";
          }
        }
      } catch (e) {
        // A client that broke its body off sees its own fetch fail.
        if (!(e instanceof DOMException && e.name === "AbortError") && !breaksBody) throw e;
      } finally {
        timer?.cancel();
        outcome.aborted = controller.signal.aborted || breaksBody;
      }
      count(`fate ${fate}`);
      if (breaksBody) count("broke body");
      count(`status ${outcome.status}`);
      if (
        CUT.has(fate) && outcome.status === 200 && outcome.body === "failed" && !outcome.aborted
      ) {
        count("cut short");
      }
      check(outcome);
    }

    await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; i < REQUESTS_PER_CLIENT; i++) {
        await within(
          one(client),
          REQUEST_TIMEOUT_MS + SLACK_MS,
          `seed ${SEED}: a request of client ${client} did not settle`,
        );
      }
    }));

    // The run exercised what it is about.
    for (const fate of FATES) assert.ok(seen.has(`fate ${fate}`), `seed ${SEED}: no ${fate}`);
    for (const status of [200, 429, 502, 503, 504, "aborted"]) {
      assert.ok(seen.has(`status ${status}`), `seed ${SEED}: no ${status} in ${[...seen]}`);
    }

    // A body cut short after its head is the upstream's failure, reported as such (also when
    // its client aborted meanwhile, then not counted here); nothing failed on the gateway's side.
    const bodyFailures = reported.filter((e) => e instanceof UpstreamBodyFailed).length;
    assert.ok(
      bodyFailures >= (seen.get("cut short") ?? 0) && (seen.get("cut short") ?? 0) > 0,
      `seed ${SEED}: ${bodyFailures} bodies reported failed, ${
        seen.get("cut short")
      } seen cut short`,
    );
    assert.deepEqual(logged.lines(), [], `seed ${SEED}: logged as the gateway's own failures`);
    // A body the client broke off is never the upstream's failure.
    assert.ok(seen.has("broke body"), `seed ${SEED}: no client broke its body off`);
    assert.deepEqual(
      blamed.filter((url) => url.endsWith("?broken")),
      [],
      `seed ${SEED}: the upstream blamed for bodies the client broke off`,
    );

    // Seats follow the upstream: each comes back once its exchange ends, within the timeout.
    const idle = () =>
      gateway.middleware.snapshot()!.levels.every((l) =>
        l.queueSet.seatsInUse === 0 && l.queueSet.waitingRequests === 0 &&
        l.queueSet.executingRequests === 0
      );
    await waitFor(idle, `seed ${SEED}: every seat back`, REQUEST_TIMEOUT_MS + SLACK_MS);

    // Nothing of a failed exchange is left to poison the next ones.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${base}/fate/whole/0`, {
        headers: { "X-Remote-User": "after", "X-Remote-Group": "system:authenticated" },
      });
      assert.equal(res.status, 200, `seed ${SEED}: request ${i} after the run`);
      assert.equal(await res.text(), "hello");
    }
    await sleep(0);
  });
}
