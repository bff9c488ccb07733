import assert from "node:assert/strict";
import { Hono } from "hono";
import { FakeEventClock } from "../../mod.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";

const S = 50;

/** An app whose handler works `S` ms on the fake clock, answering `status`. */
function appWith(options: Parameters<typeof apf>[0], clock: FakeEventClock) {
  const middleware = apf(options);
  let status = 200;
  const app = new Hono<ApfEnv>().use(middleware).get("*", async (c) => {
    await new Promise<void>((resolve) => clock.setTimer(S, resolve));
    return c.text("done", status as 200);
  });
  return { middleware, app, answer: (s: number) => status = s };
}

/** `n` requests at once, the clock run until all are answered. */
async function burst(app: Hono<ApfEnv>, clock: FakeEventClock, n: number): Promise<number[]> {
  const answers = Array.from({ length: n }, () => app.request("/x"));
  const statuses: number[] = [];
  for (const answer of answers) {
    while (true) {
      const done = await Promise.race([answer, Promise.resolve(null)]);
      if (done !== null) {
        statuses.push(done.status);
        break;
      }
      clock.advance(1);
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  return statuses;
}

Deno.test('apf({ serverConcurrencyLimit: "auto" }): a window at the initial limit, the minRTT at the pin, then the limit learned from the handlers\' time', async () => {
  const clock = new FakeEventClock(100_000);
  const { middleware, app } = appWith({
    clock,
    serverConcurrencyLimit: { minRttRequests: 5, initial: 20 },
  }, clock);
  try {
    assert.equal(middleware.adaptiveSnapshot(), null, "no coordinator before the first request");
    assert.deepEqual(await burst(app, clock, 3), [200, 200, 200]);
    let s = middleware.adaptiveSnapshot()!;
    assert.equal(s.phase, "warming-up");
    assert.equal(middleware.configuration.serverConcurrencyLimit, 20, "the initial limit");
    assert.equal(
      middleware.snapshot()!.levels.find((l) => l.name === "global-default")!.nominalLimit,
      2,
    );
    clock.advance(1000);
    s = middleware.adaptiveSnapshot()!;
    assert.equal(s.phase, "measuring-min-rtt");
    assert.equal(s.limit, 3);
    // Requests of S ms each: the minRTT is S (the queue wait never counts).
    assert.deepEqual(await burst(app, clock, 6), [200, 200, 200, 200, 200, 200]);
    s = middleware.adaptiveSnapshot()!;
    assert.equal(s.phase, "sampling");
    assert.equal(s.minRttMs, S);
    assert.equal(s.limit, 20);
    const metrics = middleware.metrics!.registry.expose();
    assert.match(metrics, /^apf_adaptive_concurrency_limit 20$/m);
    assert.match(metrics, /^apf_adaptive_min_rtt_seconds 0\.05$/m);
    assert.match(metrics, /^apf_adaptive_min_rtt_calculation_active 0$/m);
  } finally {
    middleware.close();
  }
});

Deno.test('apf("auto"): the handler\'s 503s count as refusals: a window of them halves the limit', async () => {
  const clock = new FakeEventClock(100_000);
  const { middleware, app, answer } = appWith({
    clock,
    serverConcurrencyLimit: { minRttRequests: 3, initial: 40 },
  }, clock);
  try {
    await burst(app, clock, 1);
    clock.advance(1000);
    await burst(app, clock, 3);
    assert.equal(middleware.adaptiveSnapshot()!.limit, 40);
    answer(503);
    await burst(app, clock, 10);
    clock.advance(1000);
    const s = middleware.adaptiveSnapshot()!;
    assert.equal(s.gradient, 0.5);
    assert.equal(s.sampleRttMs, Infinity);
    // 0.5 × 40 + sqrt(20), rounded.
    assert.equal(s.limit, 24);
    assert.equal(middleware.configuration.serverConcurrencyLimit, 24);
  } finally {
    middleware.close();
  }
});

Deno.test('apf("auto") is checked at creation: the controller\'s options, and no coordinator of your own', () => {
  assert.throws(() => apf({ serverConcurrencyLimit: { minn: 3 } as never }), {
    name: "TypeError",
    message: /minn/,
  });
  assert.throws(() => apf({ serverConcurrencyLimit: { min: 10, max: 5 } }), { name: "RangeError" });
  assert.throws(() => apf({ serverConcurrencyLimit: "automatic" as never }), {
    name: "TypeError",
    message: /"auto"/,
  });
  assert.throws(
    () =>
      apf({
        serverConcurrencyLimit: "auto",
        coordinator: { acquire: () => Promise.reject(new Error("unused")) },
      }),
    { name: "TypeError", message: /embedded coordinator/ },
  );
});
