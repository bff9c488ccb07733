import assert from "node:assert/strict";
import { connectCoordinator } from "../../src/remote/client.ts";
import { loadConfiguration } from "../../src/config/load.ts";
import { serveCoordinator } from "../../src/deno/coordinator_server.ts";
import { serveGateway } from "../../src/deno/gateway.ts";
import { waitFor } from "../_helpers/real_time.ts";
import { flood, tenantsManifest } from "../_helpers/tenants.ts";
import { testUpstream } from "../_helpers/upstream.ts";

Deno.test("two gateways share one coordinator: mice stay served, the upstream never exceeds the level, a dead coordinator is survived", async () => {
  const upstream = testUpstream({ sleepMs: 30 });
  const coordinator = serveCoordinator({
    listen: { hostname: "127.0.0.1", port: 0 },
    configuration: loadConfiguration({
      manifests: [{
        name: "t",
        text: tenantsManifest({ shares: 95, queues: 64, handSize: 2, queueLengthLimit: 4 }),
      }],
    }),
    mandatoryOnly: true,
    serverConcurrencyLimit: 4,
  });
  const url = `ws://127.0.0.1:${coordinator.addr.port}/`;
  const clients = [0, 1].map(() =>
    connectCoordinator(url, { policy: "closed", deadlineMarginMs: 200 })
  );
  const gateways = clients.map((remote) =>
    serveGateway({
      upstream: upstream.url,
      listen: { hostname: "127.0.0.1", port: 0 },
      trustIdentityHeaders: true,
      coordinator: remote,
      requestTimeoutMs: 4000,
    })
  );
  try {
    await waitFor(() => clients.every((c) => c.state === "connected"), "both clients connected");
    await waitFor(
      () =>
        gateways.every((g) =>
          g.middleware.configuration.priorityLevels.some((pl) => pl.name === "tenants")
        ),
      "gateways classifying with the coordinator's configuration",
    );
    const limit = coordinator.coordinator.snapshot().levels.find((l) =>
      l.name === "tenants"
    )!.currentLimit;
    const [a, b] = gateways.map((g) => `http://127.0.0.1:${g.addr.port}`);

    const elephant = flood(`${a}/big`, "elephant");
    const mice = await Promise.all([1, 2, 3].map(async (m) => {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await fetch(`${b}/small`, { headers: { "X-Remote-User": `mouse-${m}` } });
        statuses.push(res.status);
        await res.body?.cancel();
      }
      return statuses;
    }));
    await elephant.stop();
    assert.deepEqual(mice.flat().filter((s) => s !== 200), [], "every mouse request served");
    assert.ok(elephant.rejected > 0, "the elephant was held to its share");
    assert.ok(
      upstream.maxActive <= limit,
      `upstream saw ${upstream.maxActive} at once, limit ${limit}`,
    );

    // The coordinator dies: the gateways follow their policy (closed) without hanging.
    await coordinator.shutdown();
    await waitFor(() => clients.every((c) => c.state !== "connected"), "clients noticing");
    const started = Date.now();
    const res = await fetch(`${b}/small`, { headers: { "X-Remote-User": "mouse-1" } });
    await res.body?.cancel();
    assert.equal(res.status, 429);
    assert.ok(Date.now() - started < 3000, "answered without hanging");
  } finally {
    for (const g of gateways) await g.shutdown();
    for (const c of clients) await c.close();
    await coordinator.shutdown();
    await upstream.close();
  }
});
