import assert from "node:assert/strict";
import { eventually } from "./_eventually.ts";
import { MINIFLARE_TEST_OPTIONS, startWorker } from "./_miniflare.ts";
import type { SmokeObject, SmokeStats } from "./_fixtures/smoke_worker.ts";

/** The stats of an object nothing happened to. */
const NONE: SmokeStats = {
  acquired: 0,
  released: 0,
  releasedByDispose: 0,
  disposeCalls: 0,
  alarms: 0,
  sockets: 0,
};

/** The next message of `ws`, parsed as JSON. */
function nextMessage(ws: Pick<WebSocket, "addEventListener">): Promise<unknown> {
  return new Promise((resolve) =>
    ws.addEventListener("message", (e) => resolve(JSON.parse(String(e.data))), { once: true })
  );
}

Deno.test({
  name: "a TypeScript Worker with a Durable Object runs in workerd through Miniflare",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async (t) => {
    await using worker = await startWorker({
      entry: new URL("./_fixtures/smoke_worker.ts", import.meta.url),
      durableObjects: { SMOKE: "SmokeObject" },
      bindings: { GREETING: "hello" },
    });
    const stats = async (name: string): Promise<SmokeStats> => {
      const stub = await worker.durableObject<SmokeObject>("SMOKE", name);
      // A proxy: copy its fields (read synchronously) into a plain object.
      return { ...await stub.stats() };
    };

    await t.step("the Hono app takes a lease over RPC and releases it once", async () => {
      const res = await worker.fetch("/lease/a");
      assert.equal(res.status, 200);
      const body = await res.json() as { stats: SmokeStats };
      assert.deepEqual(body, {
        released: true,
        again: false,
        greeting: "hello",
        // The stub's disposal (end of the `using` block) may or may not have arrived yet.
        stats: { ...NONE, acquired: 1, released: 1, disposeCalls: body.stats.disposeCalls },
      });
    });

    await t.step("disposing a released lease's stub runs [Symbol.dispose], a no-op", async () => {
      // The Worker's `using` block disposed of its stub; the call reaches the object later.
      const after = await eventually(() => stats("a"), (s) => s.disposeCalls === 1);
      assert.deepEqual(after, { ...NONE, acquired: 1, released: 1, disposeCalls: 1 });
    });

    await t.step(
      "a lease whose stub is only disposed is released by [Symbol.dispose]",
      async () => {
        const res = await worker.fetch("/lease/b?release=no");
        assert.equal(res.status, 200);
        assert.equal((await res.json() as { released: boolean }).released, false);
        const after = await eventually(() => stats("b"), (s) => s.disposeCalls === 1);
        assert.deepEqual(after, {
          ...NONE,
          acquired: 1,
          released: 1,
          releasedByDispose: 1,
          disposeCalls: 1,
        });
      },
    );

    await t.step("the test calls the Durable Object over RPC through Miniflare", async () => {
      const stub = await worker.durableObject<SmokeObject>("SMOKE", "c");
      const lease = await stub.acquire();
      assert.equal(await lease.release(), true);
      assert.equal(await lease.release(), false);
      assert.deepEqual(await stats("c"), { ...NONE, acquired: 1, released: 1 });
    });

    await t.step("the alarm's body runs from a method; a scheduled alarm fires", async () => {
      const stub = await worker.durableObject<SmokeObject>("SMOKE", "d");
      assert.equal((await stub.runAlarm()).alarms, 1);
      await stub.scheduleAlarm(20);
      await eventually(() => stats("d"), (s) => s.alarms === 2);
    });

    await t.step(
      "a WebSocket from dispatchFetch reaches the Hibernation API handlers",
      async () => {
        const res = await worker.fetch("/ws/e", { headers: { Upgrade: "websocket" } });
        assert.equal(res.status, 101);
        const ws = res.webSocket;
        assert.ok(ws);
        ws.accept();
        const reply = nextMessage(ws);
        ws.send("ping");
        assert.deepEqual(await reply, {
          echo: "ping",
          stats: { ...NONE, sockets: 1 },
        });
        const closed = new Promise((resolve) => ws.addEventListener("close", resolve));
        ws.close(1000, "done");
        await closed;
      },
    );

    await t.step("a WebSocket from Deno over 127.0.0.1 reaches them too", async () => {
      const url = new URL("/ws/f", worker.url);
      url.protocol = "ws:";
      const ws = new WebSocket(url);
      await new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = reject;
      });
      const reply = nextMessage(ws);
      ws.send("ping");
      assert.deepEqual(await reply, {
        echo: "ping",
        stats: { ...NONE, sockets: 1 },
      });
      const closed = new Promise((resolve) => ws.onclose = resolve);
      ws.close(1000, "done");
      await closed;
    });
  },
});

Deno.test({
  name: "a native `using` (esbuild target esnext) runs in workerd",
  ...MINIFLARE_TEST_OPTIONS,
  fn: async () => {
    await using worker = await startWorker({
      entry: new URL("./_fixtures/smoke_worker.ts", import.meta.url),
      durableObjects: { SMOKE: "SmokeObject" },
      bindings: { GREETING: "hello" },
      target: "esnext",
    });
    assert.match(worker.code, /\busing lease = await stub\.acquire\(\)/);
    const res = await worker.fetch("/lease/a?release=no");
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const stub = await worker.durableObject<SmokeObject>("SMOKE", "a");
    await eventually(async () => ({ ...await stub.stats() }), (s) => s.releasedByDispose === 1);
  },
});
