/**
 * The learned server concurrency limit of a Cloudflare deployment, in one
 * process on a fake clock: the controller host and one level host per
 * level, callers in front of a simulated upstream of K workers, and the
 * controller's adjustment every sample window as its alarm runs it.
 */

import assert from "node:assert/strict";
import {
  checkConfiguration,
  configurationFromEnv,
} from "../../src/cloudflare/_controller_configuration.ts";
import { ControllerHost } from "../../src/cloudflare/_controller_host.ts";
import type { ApfBindings } from "../../src/cloudflare/env.ts";
import type { LevelSample, LevelSamples } from "../../src/cloudflare/_latency_samples.ts";
import { WorkerCoordinator } from "../../src/cloudflare/_worker_coordinator.ts";
import { outcomeOfStatus } from "../../src/coordinator/adaptive_limit.ts";
import { RELEASED_AS } from "../../src/coordinator/release_outcome.ts";
import { LearnedLimit } from "../../src/cloudflare/_learned_limit.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { resolveConfiguration } from "../../src/config/resolve.ts";
import { loadConfiguration } from "../../src/config/mod.ts";
import { withServerConcurrencyLimit } from "../../src/config/effective.ts";
import { queuingLevel } from "./_manifests.ts";
import { levelHosts, levelRpc, signalLiveness } from "./_in_process.ts";
import { settle } from "../_helpers/settle.ts";

const manifests = ["a", "b"].map((name) =>
  queuingLevel(name, { lendablePercent: 50, queues: 1, handSize: 1, queueLengthLimit: 1000 })
).join("\n");

/** An upstream of `workers` workers taking `serviceMs` each, first come first served. */
class Upstream {
  inFlight = 0;
  peak = 0;
  #busy = 0;
  #queue: Array<() => void> = [];
  constructor(readonly clock: FakeEventClock, readonly workers: number, public serviceMs: number) {}

  /** Serves one request; resolves when it is done. */
  serve(): Promise<void> {
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    return new Promise<void>((resolve) => {
      const start = () => {
        this.#busy++;
        this.clock.setTimer(this.serviceMs, () => {
          this.#busy--;
          this.inFlight--;
          this.#queue.shift()?.();
          resolve();
        });
      };
      if (this.#busy < this.workers) start();
      else this.#queue.push(start);
    });
  }
}

function setup(serverConcurrencyLimit: unknown = "auto") {
  const clock = new FakeEventClock();
  const { hosts, host, port } = levelHosts(clock);
  let seed = 1;
  const controller = new ControllerHost({
    levels: port,
    clock,
    // A fixed jitter: the runs repeat.
    random: () => (seed = (seed * 16807) % 2147483647) / 2147483647,
    initial: {
      manifests,
      serverConcurrencyLimit: serverConcurrencyLimit as "auto",
      mandatoryOnly: true,
    },
  });
  return { clock, hosts, host, controller };
}

/**
 * Runs `clients` closed-loop callers per level through the level hosts and
 * `upstream` for `ms`, the controller adjusting every window; calls
 * `each(t)` after every adjustment.
 */
async function run(
  { clock, host, controller }: ReturnType<typeof setup>,
  upstream: Upstream,
  clients: Record<string, number>,
  ms: number,
  each: (t: number) => void = () => {},
): Promise<{ rejected: number; served: number }> {
  const end = clock.now() + ms;
  const counts = { rejected: 0, served: 0 };
  const caller = async (level: string, user: number) => {
    while (clock.now() < end) {
      const a = await host(level).acquire({
        priorityLevel: level,
        flowSchema: level,
        flowHash: { hi: user, lo: user },
        waitLimitMs: 60_000,
      });
      if (!a.admitted) {
        counts.rejected++;
        await new Promise<void>((r) => clock.setTimer(100, r));
        continue;
      }
      const started = clock.now();
      await upstream.serve();
      // The Worker measures the seat's time and hands it with the release.
      host(level).release(a.seatId, clock.now() - started);
      counts.served++;
    }
  };
  const callers = Object.entries(clients).flatMap(([level, n]) =>
    Array.from({ length: n }, (_, i) => caller(level, i))
  );
  let nextTick = clock.now() + controller.adjustmentPeriodMs;
  while (clock.now() < end) {
    const next = Math.min(clock.nextTimerAt() ?? Infinity, nextTick, end);
    clock.advanceTo(next);
    await settle(10);
    if (clock.now() >= nextTick) {
      await controller.adjust();
      await settle(10);
      each(clock.now());
      nextTick = clock.now() + controller.adjustmentPeriodMs;
    }
  }
  // Let the callers finish their last requests.
  while (clock.pendingTimers > 0) {
    clock.advanceTo(clock.nextTimerAt()!);
    await settle(10);
  }
  await Promise.all(callers);
  return counts;
}

Deno.test("auto on Cloudflare: the controller learns the upstream's capacity from the level objects' samples", async () => {
  const t = setup();
  const { controller, host } = t;
  await controller.start();
  for (const name of ["a", "b"]) host(name).update(name, controller.levelUpdate());
  assert.equal(controller.adjustmentPeriodMs, 1000, "every sample window, not every 10 s");
  assert.equal(controller.levelUpdate().serverConcurrencyLimit, 20, "the initial limit");
  const upstream = new Upstream(t.clock, 8, 50);
  const limits: number[] = [];
  const inUpstream: number[] = [];
  const { rejected, served } = await run(t, upstream, { a: 30, b: 10 }, 40_000, () => {
    const learned = controller.adaptiveSnapshot()!.limit;
    limits.push(learned);
    inUpstream.push(upstream.inFlight);
    // Every level object serves at the learned limit, its limits recomputed from it.
    for (const name of ["a", "b"]) {
      const snapshot = host(name).snapshot();
      assert.equal(snapshot.serverConcurrencyLimit, learned);
      const expected = withServerConcurrencyLimit(
        resolveConfiguration(loadConfiguration({ manifests: [{ name: "m", text: manifests }] }), {
          mandatoryOnly: true,
        }),
        learned,
      ).priorityLevels.find((pl) => pl.name === name)!;
      const level = snapshot.levels[0]!;
      assert.deepEqual([level.nominalLimit, level.lowerLimit, level.upperLimit], [
        expected.nominal,
        expected.min,
        expected.max,
      ]);
    }
  });
  const snapshot = controller.adaptiveSnapshot()!;
  assert.equal(snapshot.minRttMeasurements, 1);
  assert.ok(Math.abs(snapshot.minRttMs! - 50) < 5, `minRTT ${snapshot.minRttMs}`);
  assert.ok(limits.includes(3), "pinned while the minRTT was measured");
  // 8 workers: the fixed point is about 1.25·8 + sqrt(1.25·8) ≈ 13 requests in the upstream
  // (docs/adaptive.md): enough to keep its workers busy, not its queue long. The learned
  // ServerCL sits a little lower, since the levels' NominalCLs, rounded up, add up to more.
  const settled = limits.slice(-20);
  const held = inUpstream.slice(-20);
  for (const l of settled) assert.ok(l >= 6 && l <= 16, `settled: ${settled}`);
  for (const n of held) assert.ok(n >= 8 && n <= 16, `in the upstream: ${held}`);
  assert.ok(upstream.peak <= 22, `the upstream held at most ${upstream.peak}`);
  assert.equal(rejected, 0, "nothing that waited was dropped");
  assert.ok(served > 40 * 8 * 0.8 * 20 * 0.5, `served ${served}`);
  controller.close();
  for (const h of t.hosts.values()) h.close();
});

Deno.test("auto on Cloudflare: a slower upstream (half the workers) brings the learned limit down", async () => {
  const t = setup({ min: 3, max: 100, initial: 30 });
  const { controller, host } = t;
  await controller.start();
  for (const name of ["a", "b"]) host(name).update(name, controller.levelUpdate());
  const upstream = new Upstream(t.clock, 16, 50);
  await run(t, upstream, { a: 40 }, 15_000);
  const before = controller.adaptiveSnapshot()!.limit;
  const fewer = new Upstream(t.clock, 4, 50);
  const limits: number[] = [];
  await run(t, fewer, { a: 40 }, 15_000, () => limits.push(controller.adaptiveSnapshot()!.limit));
  const after = limits.slice(-5);
  assert.ok(before >= 17, `at 16 workers: ${before}`);
  for (const l of after) assert.ok(l >= 4 && l <= 11, `at 4 workers, near 7: ${limits}`);
  controller.close();
  for (const h of t.hosts.values()) h.close();
});

Deno.test("auto on Cloudflare: configuration errors change nothing; a static limit stops learning", async () => {
  const t = setup({ min: 5, max: 50 });
  const { controller } = t;
  await controller.start();
  assert.deepEqual(controller.configuration.adaptive, { min: 5, max: 50 });
  assert.equal(controller.configuration.configuration.serverConcurrencyLimit, 20);
  await assert.rejects(
    controller.setConfiguration({ manifests, serverConcurrencyLimit: { min: 60, max: 50 } }),
    /max must be/,
  );
  await assert.rejects(
    controller.setConfiguration({ manifests, serverConcurrencyLimit: "fast" as "auto" }),
    /serverConcurrencyLimit must be a positive integer, "auto" or the adaptive controller's options, got "fast"/,
  );
  await assert.rejects(
    controller.setConfiguration({ manifests, serverConcurrencyLimit: { warp: 9 } as never }),
    /warp/,
  );
  assert.equal(controller.configuration.version, 1);
  assert.notEqual(controller.adaptiveSnapshot(), null);
  const learning = controller.adaptiveSnapshot();
  // The same options: learning goes on from where it is.
  await controller.setConfiguration({ manifests, serverConcurrencyLimit: { min: 5, max: 50 } });
  assert.deepEqual(controller.adaptiveSnapshot(), learning);
  await controller.setConfiguration({ manifests, serverConcurrencyLimit: 64 });
  assert.equal(controller.adaptiveSnapshot(), null);
  assert.equal(controller.adjustmentPeriodMs, 10_000);
  assert.equal(controller.levelUpdate().serverConcurrencyLimit, undefined);
  assert.equal(t.host("a").snapshot().serverConcurrencyLimit, 64);
  assert.equal(t.host("a").collectSamples(), null, "the level objects stopped sampling");
  controller.close();
  for (const h of t.hosts.values()) h.close();
});

Deno.test("auto on Cloudflare: the upstream's 503s reach the controller with the Worker's releases, and a window of them brings the limit down", async () => {
  const t = setup({ minRttRequests: 3, initial: 40 });
  const { clock, controller, host } = t;
  await controller.start();
  for (const name of ["a", "b"]) host(name).update(name, controller.levelUpdate());
  // The Worker's side: its coordinator asks the level objects over RPC (here, in process).
  const worker = new WorkerCoordinator(
    (name) => levelRpc(host(name)),
    null,
    signalLiveness,
    { clock, policy: "closed" },
  );
  const adjust = async (at: number) => {
    clock.advanceTo(at);
    await controller.adjust();
    await settle(10);
  };
  /** `n` requests of level a at once, each held `ms`, released with the outcome of `status`. */
  const serve = async (n: number, ms: number, status: number) => {
    const admissions = await Promise.all(
      Array.from({ length: n }, () => worker.acquire({ priorityLevel: "a", flowSchema: "a" })),
    );
    clock.advance(ms);
    for (const a of admissions) {
      assert.ok(a.admitted, JSON.stringify(a));
      // As apf() releases it after the handler's (or the upstream's) answer.
      a.seat.release(RELEASED_AS[outcomeOfStatus(status)]);
    }
    await settle(10);
  };
  await adjust(1000);
  assert.equal(controller.adaptiveSnapshot()!.phase, "measuring-min-rtt");
  for (let i = 0; i < 3; i++) await serve(1, 50, 200);
  await adjust(2000);
  assert.deepEqual(
    [controller.adaptiveSnapshot()!.phase, controller.adaptiveSnapshot()!.minRttMs],
    ["sampling", 50],
  );
  assert.equal(controller.levelUpdate().serverConcurrencyLimit, 40, "the limit restored");
  // A window of the upstream's 503s: refusals, slower than any served request.
  await serve(4, 30, 503);
  await adjust(3000);
  const s = controller.adaptiveSnapshot()!;
  assert.equal(s.sampleRttMs, Infinity);
  assert.equal(s.gradient, 0.5, "at the gradient's floor");
  // 0.5 · 40 + sqrt(20) ≈ 24, pushed to the level objects.
  assert.equal(s.limit, 24);
  assert.equal(host("a").snapshot().serverConcurrencyLimit, 24);
  worker.close();
  controller.close();
  for (const h of t.hosts.values()) h.close();
});

Deno.test("the controller replays each sample's outcome; one that is none is left out, and an older level object's (none) is served", () => {
  const clock = new FakeEventClock();
  const learned = new LearnedLimit({ minRttRequests: 2, initial: 20 }, clock);
  const batch = (samples: LevelSample[]): LevelSamples => ({
    samples,
    released: samples.length,
    peakDemand: 30,
  });
  clock.advance(1000);
  learned.learn([]);
  clock.advance(100);
  // Measuring: a refusal has no latency, and a sample whose outcome is none is left out.
  learned.learn([{
    samples: batch([[60, 10, 3, "rejected"], [50, 10, 3, "overload" as never], [40, 20, 3]]),
    receivedAt: clock.now(),
  }]);
  assert.equal(learned.snapshot().phase, "measuring-min-rtt", "one sample taken, of two");
  learned.learn([{ samples: batch([[10, 20, 3, "ok"]]), receivedAt: clock.now() }]);
  assert.deepEqual([learned.snapshot().phase, learned.snapshot().minRttMs], ["sampling", 20]);
  clock.advance(200);
  learned.learn([{
    samples: batch([[150, 15, 20, "ok"], [100, 18, 20, "error"]]),
    receivedAt: clock.now(),
  }]);
  clock.advance(1000);
  learned.learn([]);
  // An error faster than the minRTT says nothing of capacity: left out of the window (as served,
  // its 18 ms would be the window's p90).
  assert.equal(learned.snapshot().sampleRttMs, 15);
  learned.close();
});

Deno.test("the learned limit's minRTT takes only seats dispatched at the pin, whatever the replay says", () => {
  const clock = new FakeEventClock();
  const learned = new LearnedLimit({ minRttRequests: 3, initial: 20 }, clock);
  const batch = (samples: Array<[number, number, number]>): LevelSamples => ({
    samples,
    released: samples.length,
    peakDemand: 30,
  });
  clock.advance(1000);
  assert.equal(learned.learn([]), 3, "the first window over: pinned");
  clock.advance(500);
  // Released after the pin began, but dispatched at 20 (the level had not heard yet): ignored.
  learned.learn([{
    samples: batch([[100, 300, 20], [90, 300, 20], [80, 300, 20]]),
    receivedAt: clock.now(),
  }]);
  assert.equal(learned.snapshot().phase, "measuring-min-rtt");
  learned.learn([{
    samples: batch([[30, 50, 3], [20, 50, 3], [10, 52, 3]]),
    receivedAt: clock.now(),
  }]);
  assert.equal(learned.snapshot().minRttMs, 52);
  assert.equal(learned.limit, 20);
  learned.close();
});

Deno.test("APF_SERVER_CONCURRENCY=auto and its bounds from env; mistakes are named", () => {
  const env = (vars: Record<string, unknown>) => vars as unknown as ApfBindings;
  const limitOf = (vars: Record<string, unknown>) =>
    configurationFromEnv(env(vars)).serverConcurrencyLimit;
  assert.equal(limitOf({}), undefined);
  assert.equal(limitOf({ APF_SERVER_CONCURRENCY: "200" }), 200);
  assert.equal(limitOf({ APF_SERVER_CONCURRENCY: "auto" }), "auto");
  assert.deepEqual(
    limitOf({
      APF_SERVER_CONCURRENCY: "auto",
      APF_SERVER_CONCURRENCY_MIN: "4",
      APF_SERVER_CONCURRENCY_MAX: 200,
      APF_SERVER_CONCURRENCY_INITIAL: "",
    }),
    { min: 4, max: 200 },
  );
  // A JSON object in `vars`: auto with the controller's knobs.
  assert.deepEqual(
    limitOf({ APF_SERVER_CONCURRENCY: { sampleWindowMs: 2000 }, APF_SERVER_CONCURRENCY_MAX: "50" }),
    { sampleWindowMs: 2000, max: 50 },
  );
  assert.throws(
    () => limitOf({ APF_SERVER_CONCURRENCY: "200", APF_SERVER_CONCURRENCY_MIN: "4" }),
    /^TypeError: Cannot read the configuration from env: APF_SERVER_CONCURRENCY_MIN needs APF_SERVER_CONCURRENCY=auto, got APF_SERVER_CONCURRENCY="200"$/,
  );
  assert.throws(
    () => limitOf({ APF_SERVER_CONCURRENCY: "auto", APF_SERVER_CONCURRENCY_MAX: "lots" }),
    /APF_SERVER_CONCURRENCY_MAX must be a positive integer, got "lots"/,
  );
  // Out-of-range values are the configuration's to refuse, whole, when it is applied.
  assert.throws(
    () =>
      checkConfiguration(configurationFromEnv(env({
        APF_SERVER_CONCURRENCY: "auto",
        APF_SERVER_CONCURRENCY_MIN: "40",
        APF_SERVER_CONCURRENCY_MAX: "20",
      }))),
    /max must be/,
  );
  assert.throws(
    () => checkConfiguration(configurationFromEnv(env({ APF_SERVER_CONCURRENCY: "x" }))),
    /serverConcurrencyLimit must be a positive integer, got NaN/,
  );
});
