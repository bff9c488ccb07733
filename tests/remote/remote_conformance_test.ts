/**
 * The coordinator conformance suite, run unchanged against the remote
 * client over a real loopback WebSocket: once on the global `WebSocket`
 * (the default), once on `noDelayWebSocket()`, the transport `apf serve`
 * uses on Deno.
 *
 * The suite moves time with `clock.advance()` right after starting
 * operations, without awaiting in between (for example `seat.release()`
 * then `advance(499)`), as it may in-process. Over a socket those operations
 * reach the server only later, so the server runs on its own fake clock,
 * which `settle()` moves up to the suite's clock once every frame in flight
 * was delivered: operations made before an advance happen before time
 * moves, as in-process. The client's own timers (deadlines, renewals) run
 * on the suite's clock.
 */

import assert from "node:assert/strict";
import { connectCoordinator, type CoordinatorSocket } from "../../src/remote/client.ts";
import { noDelayWebSocket } from "../../src/deno/no_delay_websocket.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { assertIdle } from "../_helpers/coordinator_assert.ts";
import { coordinatorConformance } from "../_helpers/coordinator_conformance.ts";
import { startServer } from "./_server.ts";

const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const transports: [string, ((url: string) => CoordinatorSocket) | undefined][] = [
  ["RemoteCoordinator", undefined],
  ["RemoteCoordinator over noDelayWebSocket", noDelayWebSocket()],
];

for (const [name, webSocket] of transports) {
  coordinatorConformance(name, (config, clock) => {
    const serverClock = new FakeEventClock(clock.now());
    // Leases far longer than any case: renewals cannot cross the socket inside one synchronous advance.
    const server = startServer({ config, clock: serverClock, leaseMs: 3_600_000, graceMs: 1_000 });
    const client = connectCoordinator(server.url, {
      clock,
      policy: "closed",
      client: "conformance",
      ...(webSocket !== undefined && { webSocket }),
    });
    return {
      coordinator: client,
      async settle() {
        let last = "";
        for (let quiet = 0, i = 0; quiet < 2; i++) {
          assert.ok(i < 5_000, "the connection settles");
          await macrotask();
          const counts = [
            client.stats.framesSent,
            server.framesIn,
            server.framesOut,
            client.stats.framesReceived,
          ];
          const balanced = client.state === "connected" && counts[0] === counts[1] &&
            counts[2] === counts[3];
          if (!balanced) {
            quiet = 0;
          } else if (serverClock.now() < clock.now()) {
            serverClock.advanceTo(clock.now());
            quiet = 0;
          } else {
            quiet = counts.join() === last ? quiet + 1 : 1;
          }
          last = counts.join();
        }
      },
      async close() {
        try {
          assertIdle(server.coordinator.snapshot());
          assert.equal(client.stats.garbage, 0);
          assert.equal(client.stats.fallbacks, 0, "every answer came from the server");
        } finally {
          await client.close();
          await server.close();
        }
        assert.equal(clock.pendingTimers, 0, "no client timer left behind");
        assert.equal(serverClock.pendingTimers, 0, "no server timer left behind");
      },
    };
  });
}
