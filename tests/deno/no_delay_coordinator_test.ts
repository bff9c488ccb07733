/**
 * The remote coordinator's client on `noDelayWebSocket()` through the
 * failures that exercise its transport: the server dropping the socket
 * (a server-initiated close, then a resume) and a server that never
 * welcomes (the connect timeout drops a socket that is open, then reconnects).
 * The conformance suite runs on it too (`remote_conformance_test.ts`).
 */

import assert from "node:assert/strict";
import { connectCoordinator } from "../../src/coordinator/client.ts";
import type { Admission } from "../../src/coordinator/types.ts";
import { noDelayWebSocket } from "../../src/deno/no_delay_websocket.ts";
import { assertNoLeak, queued, waitFor } from "../coordinator/_client_helpers.ts";
import { conformanceConfiguration } from "../coordinator/_conformance.ts";
import { startServer } from "../coordinator/_server.ts";

const fast = {
  policy: "closed" as const,
  deadlineMarginMs: 200,
  connectTimeoutMs: 1_000,
  reconnect: { initialMs: 20, maxMs: 100 },
  webSocket: noDelayWebSocket({ closeTimeoutMs: 200 }),
};

async function admitted(p: Promise<Admission>) {
  const a = await p;
  assert.ok(a.admitted, `admitted, got ${JSON.stringify(a)}`);
  return a.seat;
}

Deno.test("client on noDelayWebSocket: a dropped socket resumes its session and reclaims its seats", async () => {
  const server = startServer({ config: conformanceConfiguration(), graceMs: 2_000 });
  const client = connectCoordinator(server.url, fast);
  try {
    const a = await admitted(client.acquire(queued()));
    const b = await admitted(client.acquire(queued()));
    const waiter = client.acquire(queued({ waitLimitMs: 5_000 }));
    await waitFor(() => server.host.stats.sessions === 1, "session open");
    const session = client.session;
    await server.dropClients();
    assert.equal((await waiter).admitted, false, "a waiter on the lost socket: the policy");
    assert.equal(a.release(), true);
    await waitFor(() => client.state === "connected", "reconnected");
    assert.equal(client.session, session, "the same session");
    assert.deepEqual([client.stats.reconnects, client.stats.reclaimed, client.stats.lost], [
      1,
      1,
      0,
    ]);
    await waitFor(() => client.stats.lateReleases === 1, "a released after the resume");
    assert.equal(b.release(), true);
    await assertNoLeak(server);
  } finally {
    await client.close();
    await server.close();
  }
});

Deno.test("client on noDelayWebSocket: a server that never welcomes is dropped at the connect timeout, and retried", async () => {
  const server = startServer({ config: conformanceConfiguration(), mode: "stall" });
  const client = connectCoordinator(server.url, { ...fast, connectTimeoutMs: 100 });
  try {
    assert.equal((await client.acquire(queued())).admitted, false);
    // Attempts go on: hello frames keep reaching the stalled server, one per attempt.
    await waitFor(() => server.framesIn >= 3, "three attempts");
    assert.notEqual(client.state, "connected");
  } finally {
    await client.close();
    await server.close();
  }
  assert.equal(server.host.stats.sessions, 0);
});
