/**
 * The gateway's seat follows the upstream: it is held until the upstream's
 * response body has ended, whether the client reads it, or has gone away.
 */

import assert from "node:assert/strict";
import { serveGateway } from "../../src/deno/mod.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import type { Coordinator, Seat } from "../../src/coordinator/types.ts";
import { smallConfig } from "./_helpers.ts";
import { sleep } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";

/**
 * An upstream that works `headersMs` before answering, then `bodyMs` more on
 * its body (3 chunks); a request is in flight until its body has ended or
 * failed to be sent.
 */
function workingUpstream(headersMs: number, bodyMs: number) {
  let active = 0, maxActive = 0, finished = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    await sleep(headersMs);
    let sent = 0;
    let over = false;
    const end = () => {
      if (over) return;
      over = true;
      active--;
      finished++;
    };
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          await sleep(bodyMs / 3);
          controller.enqueue(new TextEncoder().encode(`part ${++sent};`));
          if (sent === 3) {
            controller.close();
            end();
          }
        },
        cancel: end,
      }),
    );
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
    get finished() {
      return finished;
    },
    close: () => server.shutdown(),
  };
}

const TWO_SEATS = smallConfig(tenantsManifest({ shares: 95, reject: true }), 2);

function seatsInUse(gateway: ReturnType<typeof serveGateway>): number {
  return gateway.middleware.snapshot()!.levels.find((l) => l.name === "tenants")!.queueSet
    .seatsInUse;
}

Deno.test("a slow response body keeps its seat until it has ended", async () => {
  const upstream = workingUpstream(0, 150);
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    config: TWO_SEATS,
  });
  try {
    const url = `http://127.0.0.1:${gateway.addr.port}/export`;
    // Arrivals 40 ms apart: each finds the seats of the bodies still streaming taken.
    const statuses = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        await sleep(40 * i);
        const res = await fetch(url);
        const text = await res.text();
        if (res.status === 200) assert.equal(text, "part 1;part 2;part 3;");
        return res.status;
      }),
    );
    assert.ok(upstream.maxActive <= 2, `upstream had ${upstream.maxActive} bodies in flight`);
    assert.equal(statuses.filter((s) => s === 200).length, upstream.finished);
    assert.ok(statuses.includes(429), `the level is full while bodies stream: ${statuses}`);
    assert.equal(seatsInUse(gateway), 0);
  } finally {
    await upstream.close();
  }
});

/** Sends a request and hangs up `afterMs` later, without reading the response. */
async function hitAndRun(addr: Deno.NetAddr, afterMs: number): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: addr.port });
  await conn.write(new TextEncoder().encode("GET /work HTTP/1.1\r\nHost: gw\r\n\r\n"));
  await sleep(afterMs);
  conn.close();
}

Deno.test("a client that goes away leaves its seat held until the upstream has finished", async () => {
  const upstream = workingUpstream(120, 90);
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    config: TWO_SEATS,
  });
  try {
    // Eight clients 20 ms apart that leave 30 ms after sending, before the upstream answers.
    await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      await sleep(20 * i);
      await hitAndRun(gateway.addr, 30);
    }));
    assert.equal(seatsInUse(gateway), 2, "the upstream is still working on two of them");
    while (upstream.finished < 2) await sleep(10);
    while (seatsInUse(gateway) > 0) await sleep(10);
    assert.ok(upstream.maxActive <= 2, `upstream had ${upstream.maxActive} requests in flight`);
    assert.equal(upstream.active, 0);
  } finally {
    await upstream.close();
  }
});

Deno.test("a client gone while the body streams: the seat waits for the upstream's end, at most the deadline", async () => {
  const upstream = workingUpstream(0, 3_000);
  await using gateway = serveGateway({
    upstream: upstream.url,
    listen: { hostname: "127.0.0.1", port: 0 },
    config: TWO_SEATS,
    requestTimeoutMs: 300,
  });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gateway.addr.port });
    await conn.write(new TextEncoder().encode("GET /work HTTP/1.1\r\nHost: gw\r\n\r\n"));
    const buf = new Uint8Array(4096);
    assert.ok((await conn.read(buf))! > 0, "the response began");
    conn.close();
    await sleep(100);
    assert.equal(seatsInUse(gateway), 1, "held while the upstream is still sending");
    // The upstream would take 3 s; the 300 ms deadline ends the wait.
    const start = performance.now();
    while (seatsInUse(gateway) > 0) await sleep(10);
    assert.ok(performance.now() - start < 1_500);
    while (upstream.active > 0) await sleep(10);
  } finally {
    await upstream.close();
  }
});

/**
 * A coordinator whose seats say whether they are still held as `held()`
 * says (a budget holder's after its lease lapsed), counting acquires and
 * releases.
 */
function leasedCoordinator(held: () => boolean) {
  const inner = new EmbeddedCoordinator(TWO_SEATS);
  const counts = { acquired: 0, released: 0 };
  const coordinator: Coordinator = {
    async acquire(request, options) {
      const admission = await inner.acquire(request, options);
      if (!admission.admitted) return admission;
      counts.acquired++;
      const seat = admission.seat;
      const leased: Seat = {
        priorityLevel: seat.priorityLevel,
        release: (o) => {
          const released = seat.release(o);
          if (released) counts.released++;
          return released;
        },
        initialized: () => {
          if (seat.release()) counts.released++;
        },
        [Symbol.dispose]: () => leased.release(),
        stillHeld: held,
      };
      return { ...admission, seat: leased };
    },
  };
  return { coordinator, counts, close: () => inner.close() };
}

for (const upstreamClient of ["http1", "fetch"] as const) {
  Deno.test(`${upstreamClient}: a request whose seat's lease lapsed before it was sent gets 429 and never reaches the upstream`, async () => {
    const upstream = workingUpstream(0, 0);
    let held = true;
    const leased = leasedCoordinator(() => held);
    await using gateway = serveGateway({
      upstream: upstream.url,
      listen: { hostname: "127.0.0.1", port: 0 },
      config: TWO_SEATS,
      coordinator: leased.coordinator,
      upstreamClient,
    });
    try {
      const url = `http://127.0.0.1:${gateway.addr.port}/export`;
      const ok = await fetch(url);
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
      held = false;
      const lapsed = await fetch(url);
      assert.equal(lapsed.status, 429);
      assert.equal(lapsed.headers.get("retry-after"), "1");
      assert.ok(lapsed.headers.has("x-kubernetes-pf-prioritylevel-uid"));
      await lapsed.body?.cancel();
      assert.equal(upstream.finished + upstream.active, 1, "only the first reached the upstream");
      // The seats go back as the responses end, just after the client has them.
      for (let i = 0; i < 100 && leased.counts.released < 2; i++) await sleep(10);
      await sleep(20);
      assert.deepEqual(leased.counts, { acquired: 2, released: 2 }, "each seat given back once");
    } finally {
      await upstream.close();
      leased.close();
    }
  });
}
