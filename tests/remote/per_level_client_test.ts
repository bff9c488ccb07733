import assert from "node:assert/strict";
import { connectPerLevel } from "../../src/remote/per_level_client.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_conformance.ts";
import { startServer } from "./_server.ts";

Deno.test("connectPerLevel: each level's acquires go to its own server; the primary supplies the configuration", async () => {
  const config = conformanceConfiguration();
  const wire = (n: number) => ({ serverConcurrencyLimit: n, mandatoryOnly: false, objects: [] });
  const servers = {
    "catch-all": startServer({ config, wire: wire(6) }),
    queued: startServer({ config, wire: wire(7) }),
  };
  const asked: string[] = [];
  const coordinator = connectPerLevel((level) => {
    asked.push(level);
    return servers[level as keyof typeof servers].url;
  }, { policy: "closed" });
  try {
    await coordinator.ready();
    assert.equal(coordinator.configuration?.serverConcurrencyLimit, 6, "the primary's");
    const a = await coordinator.acquire({ priorityLevel: "queued", flowSchema: "fs" });
    assert.ok(a.admitted);
    const queued = servers.queued.coordinator.snapshot().levels.find((l) => l.name === "queued")!;
    assert.equal(queued.queueSet.seatsInUse, 1, "taken from the queued level's server");
    a.seat.release();
    assert.deepEqual(asked, ["catch-all", "queued"]);
    await assert.rejects(
      coordinator.acquire({ priorityLevel: 7 } as never),
      /invalid request at priorityLevel/,
    );
    assert.throws(() => connectPerLevel("ws://x" as never), /urlFor must be a function/);
  } finally {
    await coordinator.close();
    for (const s of Object.values(servers)) await s.close();
  }
  const after = await coordinator.acquire({ priorityLevel: "queued", flowSchema: "fs" });
  assert.equal(!after.admitted && after.reason, "unavailable");
});
