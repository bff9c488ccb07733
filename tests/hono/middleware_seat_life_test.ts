/**
 * How long apf() holds a seat: while the handler runs, whether or not its
 * client is still there, and while a streamed body is being made.
 */

import assert from "node:assert/strict";
import { Hono } from "hono";
import { FakeEventClock, frontProxyIdentity } from "../../mod.ts";
import { apf, type ApfEnv } from "../../src/hono/mod.ts";
import { settle } from "../_helpers/settle.ts";
import { gate, tinyConfig } from "./_helpers.ts";

function setup() {
  const clock = new FakeEventClock(100_000);
  const limiter = apf({ config: tinyConfig(), identify: frontProxyIdentity(), clock });
  const app = new Hono<ApfEnv>();
  app.use(limiter);
  const seatsInUse = () =>
    limiter.snapshot()!.levels.find((l) => l.name === "tiny")!.queueSet.seatsInUse;
  return { app, limiter, seatsInUse };
}

const dev = { headers: { "X-Remote-User": "alice", "X-Remote-Group": "dev" } };

/** A body the test feeds by hand; `cancelled` settles once its source was told to cancel. */
function handFed(onCancel: () => Promise<void> = () => Promise.resolve()) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: async () => {
      cancelled = true;
      await onCancel();
    },
  });
  return {
    body,
    push: (s: string) => controller.enqueue(new TextEncoder().encode(s)),
    end: () => controller.close(),
    fail: () => controller.error(new Error("source failed")),
    get cancelled() {
      return cancelled;
    },
  };
}

Deno.test("a streamed body holds its seat until it has ended", async () => {
  const { app, limiter, seatsInUse } = setup();
  const s = handFed();
  app.get("/report", () => new Response(s.body, { headers: { "Content-Type": "text/csv" } }));
  const res = await app.request("/report", dev);
  assert.equal(seatsInUse(), 1, "the handler returned, the body is still being made");
  const reader = res.body!.getReader();
  s.push("a,b\n");
  assert.equal(new TextDecoder().decode((await reader.read()).value), "a,b\n");
  assert.equal(seatsInUse(), 1);
  s.end();
  assert.equal((await reader.read()).done, true);
  assert.equal(seatsInUse(), 0, "released when the body ended");
  // Released once only: a second request gets the one seat.
  const again = await app.request("/report2", dev);
  assert.equal(again.status, 404);
  assert.equal(seatsInUse(), 0);
  limiter.close();
});

Deno.test("a streamed body that fails releases its seat", async () => {
  const { app, limiter, seatsInUse } = setup();
  const s = handFed();
  app.get("/report", () => new Response(s.body));
  const res = await app.request("/report", dev);
  assert.equal(seatsInUse(), 1);
  s.fail();
  await assert.rejects(res.text(), /source failed/);
  assert.equal(seatsInUse(), 0);
  limiter.close();
});

Deno.test("a body cancelled by its client releases its seat once its source has finished cancelling", async () => {
  const { app, limiter, seatsInUse } = setup();
  const cleanup = gate();
  const s = handFed(() => cleanup.promise);
  app.get("/report", () => new Response(s.body));
  const res = await app.request("/report", dev);
  assert.equal(seatsInUse(), 1, "held before the cancel");
  const cancelling = res.body!.cancel(new Error("client went away"));
  await settle();
  assert.equal(s.cancelled, true);
  assert.equal(seatsInUse(), 1, "the source is still winding its work down");
  cleanup.open();
  await cancelling;
  assert.equal(seatsInUse(), 0);
  limiter.close();
});

Deno.test("bodies given whole release their seat when the handler returns", async () => {
  const { app, limiter, seatsInUse } = setup();
  app.get("/text", (c) => c.text("hello"));
  app.get("/json", (c) => c.json({ a: 1 }));
  app.get("/html", (c) => c.html("<p>hi</p>"));
  app.get("/bytes", () => new Response(new Uint8Array([1, 2, 3])));
  app.get("/empty", (c) => c.body(null, 204));
  app.get("/status", (c) => c.text("created", 201, { "X-A": "1" }));
  for (const path of ["/text", "/json", "/html", "/bytes", "/empty", "/status"]) {
    const res = await app.request(path, dev);
    assert.ok(res.status < 300, path);
    assert.equal(seatsInUse(), 0, `${path}: released before its body was read`);
    await res.arrayBuffer();
  }
  limiter.close();
});

Deno.test("a handler still running after its client left keeps its seat until it returns", async () => {
  const { app, limiter, seatsInUse } = setup();
  const held = gate();
  let finished = false;
  app.get("/work", async (c) => {
    await held.promise;
    finished = true;
    return c.text("done");
  });
  const client = new AbortController();
  const pending = app.request("/work", { ...dev, signal: client.signal });
  await settle();
  assert.equal(seatsInUse(), 1);
  client.abort();
  await settle();
  assert.equal(seatsInUse(), 1, "the client is gone, the handler is still working");
  // The tiny level has one seat and no queue: a second request is refused meanwhile.
  assert.equal((await app.request("/other", dev)).status, 429);
  held.open();
  await pending;
  assert.equal(finished, true);
  assert.equal(seatsInUse(), 0);
  limiter.close();
});
