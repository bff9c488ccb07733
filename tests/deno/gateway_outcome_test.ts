/**
 * The gateway states how the upstream's work ended with the release of
 * every seat (`ReleaseOptions.outcome`, `docs/adaptive.md`), not only of
 * the seats of its own learned limit: a seat of a coordinator of one's own,
 * as a remote coordinator's is, carries it to the coordinator that learns.
 * On both data paths, the gateway's own HTTP/1.1 server and `Deno.serve`.
 */

import assert from "node:assert/strict";
import { systemClock } from "../../mod.ts";
import { serveGateway } from "../../src/deno/mod.ts";
import type { Coordinator } from "../../src/coordinator/types.ts";
import { recordingCoordinator } from "../_helpers/recording_coordinator.ts";
import { sleep, waitFor } from "../_helpers/real_time.ts";
import { tenantsManifest } from "../_helpers/tenants.ts";
import { smallConfig } from "./_helpers.ts";

const CONFIG = smallConfig(tenantsManifest({ shares: 95, reject: true }), 4);

/** An upstream answering by path: its status, a body in one piece or streamed, or too late. */
function upstream() {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/slow") {
      // Past the gateway's deadline; done early once the gateway gives up.
      await Promise.race([sleep(3_000), new Promise((r) => req.signal.onabort = r)]);
      return new Response("late");
    }
    const status = Number(path.split("/")[2]);
    if (path.startsWith("/cut/")) {
      // A body that fails after its first chunk: the connection ends before the body does.
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await sleep(20);
          if (sent) controller.error(new Error("the upstream failed mid-body"));
          else controller.enqueue(new Uint8Array(1000));
          sent = true;
        },
      });
      return new Response(body, { status });
    }
    if (path.startsWith("/trickle/")) {
      // Two chunks (the second one finds the client gone), then nothing for 3 s: the gateway's
      // deadline ends the wait, cancelling this.
      let pulls = 0;
      let timer: ReturnType<typeof systemClock.setTimer> | null = null;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          pulls++;
          if (pulls === 1) return controller.enqueue(new Uint8Array(1000));
          if (pulls === 2) {
            await sleep(100);
            return controller.enqueue(new Uint8Array(1000));
          }
          await new Promise<void>((resolve) => timer = systemClock.setTimer(3_000, resolve));
          controller.close();
        },
        cancel: () => timer?.cancel(),
      });
      return new Response(body, { status });
    }
    if (path.startsWith("/streamed/")) {
      // No length, and more than comes with the head: passed on as a stream that releases the seat.
      let left = 3;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await sleep(20);
          if (left-- === 0) controller.close();
          else controller.enqueue(new Uint8Array(1000));
        },
      });
      return new Response(body, { status });
    }
    return new Response("x", { status });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

/** A port nobody listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A gateway to `upstream` on `coordinator`'s seats, with a deadline of 300 ms. */
function recordedGateway(
  upstream: string,
  coordinator: Coordinator,
  upstreamClient: "http1" | "fetch",
) {
  return serveGateway({
    upstream,
    listen: { hostname: "127.0.0.1", port: 0 },
    config: CONFIG,
    coordinator,
    upstreamClient,
    requestTimeoutMs: 300,
    onUpstreamError: () => {},
  });
}

for (const upstreamClient of ["http1", "fetch"] as const) {
  Deno.test(`${upstreamClient}: the gateway releases any coordinator's seat with the outcome of the upstream's answer`, async () => {
    const up = upstream();
    const recording = recordingCoordinator(CONFIG);
    const gateways = [up.url, `http://127.0.0.1:${closedPort()}`].map((url) =>
      recordedGateway(url, recording.coordinator, upstreamClient)
    );
    try {
      const [working, unreachable] = gateways.map((g) => `http://127.0.0.1:${g.addr.port}`);
      const statuses: number[] = [];
      const paths = [
        `${working}/status/200`,
        `${working}/status/404`,
        `${working}/status/503`,
        `${working}/status/500`,
        `${working}/streamed/503`,
        `${working}/streamed/200`,
        `${working}/cut/200`,
        `${working}/slow`,
        `${unreachable}/status/200`,
      ];
      for (const url of paths) {
        const res = await fetch(url);
        statuses.push(res.status);
        // A body cut short fails for the client too.
        await res.arrayBuffer().catch(() => {});
        // A streamed body's seat goes back as its end is passed on, just after the client has it.
        await waitFor(() => recording.ends.length === statuses.length, `the seat of ${url}`);
      }
      assert.deepEqual(statuses, [200, 404, 503, 500, 503, 200, 200, 504, 502]);
      assert.deepEqual(recording.ends, [
        { outcome: "ok" },
        { outcome: "ok" },
        { outcome: "rejected" },
        { outcome: "error" },
        { outcome: "rejected" },
        { outcome: "ok" },
        { outcome: "error" }, // a 200 whose body the upstream cut short
        { outcome: "timeout" },
        { outcome: "error" },
      ]);
    } finally {
      for (const g of gateways) await g.shutdown();
      await up.close();
      recording.close();
    }
  });

  Deno.test(`${upstreamClient}: a body read on for a client that left goes back as an error when the upstream fails it, as a timeout when the deadline ends it`, async () => {
    const up = upstream();
    const recording = recordingCoordinator(CONFIG);
    const gateway = recordedGateway(up.url, recording.coordinator, upstreamClient);
    try {
      for (const path of ["/cut/200", "/trickle/200"]) {
        // The client reads the head and leaves; the gateway reads the rest of the body itself.
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: gateway.addr.port });
        await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`));
        assert.ok((await conn.read(new Uint8Array(4096)))! > 0, `the response to ${path} began`);
        conn.close();
        await waitFor(() => recording.ends.length > 0, `the seat of ${path}`);
        assert.deepEqual(recording.ends.splice(0), [
          { outcome: path === "/cut/200" ? "error" : "timeout" },
        ]);
      }
    } finally {
      await gateway.shutdown();
      await up.close();
      recording.close();
    }
  });
}
