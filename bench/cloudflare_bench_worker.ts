/**
 * The Worker of `bench/cloudflare_level_bench.ts`: each route drives one
 * level object (`bench`) from inside the Worker, as an app would, and
 * reports how many acquire+release pairs it made in how long.
 *
 * - `/rpc?n=N&k=K`: one RPC per operation (`acquire`, then the seat's
 *   `release`), K loops at once.
 * - `/batch?n=N&size=S&k=K`: `acquireMany(S)` then `releaseMany(S)`, K loops.
 * - `/ws?n=N&size=S`: protocol v1 over a WebSocket to the object
 *   (Hibernation API), S acquires per frame, each decision frame answered
 *   with its releases and the next acquires in one frame.
 *
 * @module
 */

import { Hono } from "hono";
import { BENCH_REQUESTS } from "./_bench_requests.ts";
import type { ApfBindings } from "../src/cloudflare/env.ts";
import type { WorkerdResponse } from "../src/cloudflare/_workers_types.d.ts";

export { ControllerObject, PriorityLevelObject } from "../src/cloudflare/mod.ts";

const requests = BENCH_REQUESTS;
const req = (i: number) => requests[i % requests.length]!;

const app = new Hono<{ Bindings: ApfBindings }>();
const number = (
  v: string | undefined,
  fallback: number,
) => (v === undefined ? fallback : Number(v));

app.get("/rpc", async (c) => {
  const n = number(c.req.query("n"), 1000), k = number(c.req.query("k"), 16);
  const stub = c.env.APF_LEVELS.getByName("bench");
  let next = 0, admitted = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: k }, async () => {
    while (next < n) {
      const a = await stub.acquire(req(next++));
      if (!a.admitted) continue;
      admitted++;
      using seat = a.seat;
      await seat.release();
    }
  }));
  return c.json({ admitted, ms: Date.now() - t0 });
});

app.get("/batch", async (c) => {
  const n = number(c.req.query("n"), 10_000), size = number(c.req.query("size"), 100);
  const k = number(c.req.query("k"), 4);
  const stub = c.env.APF_LEVELS.getByName("bench");
  let next = 0, admitted = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: k }, async () => {
    while (next < n) {
      const batch = Array.from({ length: size }, () => req(next++));
      const answers = await stub.acquireMany(batch);
      const ids: number[] = [];
      for (const a of answers) if (a.admitted) ids.push(a.seatId);
      admitted += ids.length;
      await stub.releaseMany(ids);
    }
  }));
  return c.json({ admitted, ms: Date.now() - t0 });
});

app.get("/ws", async (c) => {
  const n = number(c.req.query("n"), 100_000), size = number(c.req.query("size"), 100);
  const stub = c.env.APF_LEVELS.getByName("bench");
  const res = await stub.fetch("https://level/?level=bench", {
    headers: { Upgrade: "websocket" },
  }) as WorkerdResponse;
  const ws = res.webSocket;
  if (ws === null) return c.text(`no WebSocket: ${res.status} ${await res.text()}`, 500);
  ws.accept();
  let next = 0, admitted = 0, outstanding = 0, t0 = 0;
  const acquires = () => {
    const ops: unknown[] = [];
    for (let i = 0; i < size && next < n; i++) ops.push(["acquire", next, req(next++)]);
    outstanding += ops.length;
    return ops;
  };
  const finished = new Promise<void>((resolve, reject) => {
    ws.addEventListener("message", (e) => {
      const m = JSON.parse(String(e.data));
      if (m.t === "welcome") {
        t0 = Date.now();
        ws.send(JSON.stringify({ t: "ops", ops: acquires() }));
        return;
      }
      if (m.t !== "decisions") return reject(new Error(String(e.data)));
      const ops: unknown[] = [];
      for (const d of m.d) {
        outstanding--;
        if (d[1] === "admitted") {
          admitted++;
          ops.push(["release", d[0], null]);
        }
      }
      if (outstanding === 0) ops.push(...acquires());
      if (ops.length > 0) ws.send(JSON.stringify({ t: "ops", ops }));
      if (outstanding === 0 && next >= n) resolve();
    });
  });
  ws.send(
    JSON.stringify({
      t: "hello",
      v: [1],
      token: c.env.APF_TOKEN ?? null,
      client: "bench",
      resume: null,
    }),
  );
  await finished;
  const ms = Date.now() - t0;
  ws.close(1000, "done");
  return c.json({ admitted, ms });
});

export default app;
