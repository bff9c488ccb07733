/**
 * The remote client's `webSocket` seam: any {@linkcode CoordinatorSocket}
 * carries the protocol, and a transport that cannot even be created counts
 * as a lost connection. On a fake clock and an in-memory socket: no network.
 */

import assert from "node:assert/strict";
import { connectCoordinator, type CoordinatorSocket } from "../../src/remote/client.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";

/** A socket the test opens, feeds and closes by hand; it records what the client sends. */
class MemorySocket implements CoordinatorSocket {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  closedWith: [number | undefined, string | undefined] | null = null;
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  url: string;
  constructor(url: string) {
    this.url = url;
  }
  send(data: string): void {
    assert.equal(this.readyState, 1, "sends only while open");
    this.sent.push(JSON.parse(data));
  }
  close(code?: number, reason?: string): void {
    this.closedWith = [code, reason];
    this.readyState = 3;
    queueMicrotask(() => this.onclose?.(new CloseEvent("close", { code: code ?? 1005 })));
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event("open"));
  }
  deliver(message: unknown): void {
    this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(message) }));
  }
}

const welcome = (session: string, v = 1) => ({
  t: "welcome",
  v,
  session,
  leaseMs: 30_000,
  graceMs: 5_000,
  config: { serverConcurrencyLimit: 10, mandatoryOnly: false, objects: [] },
  reclaimed: [],
});

const request = { priorityLevel: "catch-all", flowSchema: "catch-all" };

Deno.test("client: the webSocket option carries the protocol over any CoordinatorSocket", async () => {
  const clock = new FakeEventClock();
  const sockets: MemorySocket[] = [];
  const client = connectCoordinator("ws://coordinator.test:7070/apf", {
    clock,
    policy: "closed",
    client: "memory",
    token: "secret",
    webSocket: (url) => {
      const s = new MemorySocket(url);
      sockets.push(s);
      return s;
    },
  });
  assert.equal(sockets.length, 1);
  assert.equal(sockets[0]!.url, "ws://coordinator.test:7070/apf");
  const s = sockets[0]!;
  s.open();
  assert.deepEqual(s.sent, [{
    t: "hello",
    v: [1, 2],
    token: "secret",
    client: "memory",
    resume: null,
  }]);
  s.deliver(welcome("s-1"));
  assert.equal(client.state, "connected");
  assert.equal(client.session, "s-1");

  const admission = client.acquire(request);
  await Promise.resolve();
  const ops = s.sent[1] as unknown as { t: string; ops: unknown[][] };
  assert.equal(ops.t, "ops");
  assert.equal(ops.ops[0]![0], "acquire");
  const id = ops.ops[0]![1] as number;
  s.deliver({ t: "decisions", d: [[id, "admitted", 3]] });
  const a = await admission;
  assert.ok(a.admitted);
  assert.equal(a.waitedMs, 3);
  a.seat.release();
  await Promise.resolve();
  assert.deepEqual(s.sent[2], { t: "ops", ops: [["release", id, null]] });

  await client.close();
  assert.deepEqual(s.closedWith, [1000, "client closed"]);
  assert.equal(clock.pendingTimers, 0);
});

/** A client connected to a server of protocol `version` (`policy: closed`), and its socket. */
function connectedTo(
  version: number,
): { client: ReturnType<typeof connectCoordinator>; s: MemorySocket } {
  let s!: MemorySocket;
  const client = connectCoordinator("ws://coordinator.test:7070", {
    clock: new FakeEventClock(),
    policy: "closed",
    webSocket: (url) => s = new MemorySocket(url),
  });
  s.open();
  s.deliver(welcome("s-1", version));
  return { client, s };
}

Deno.test("client: a release states its outcome to a server of version 2, and goes without it to one of version 1", async () => {
  for (const v of [2, 1]) {
    const { client, s } = connectedTo(v);
    const released: unknown[] = [];
    for (const outcome of ["rejected", "ok", undefined, "timeout"] as const) {
      const admission = client.acquire(request);
      await Promise.resolve();
      const ops = s.sent.at(-1) as { ops: [string, number][] };
      const id = ops.ops[0]![1];
      s.deliver({ t: "decisions", d: [[id, "admitted", 0]] });
      const a = await admission;
      assert.ok(a.admitted);
      a.seat.release(outcome === undefined ? undefined : { outcome });
      await Promise.resolve();
      released.push((s.sent.at(-1) as { ops: unknown[] }).ops[0]);
    }
    // "ok" goes without saying; a server of version 1 would refuse the field, and the frame.
    const stated = v === 2 ? ["rejected", null, null, "timeout"] : [null, null, null, null];
    const expected = stated.map((o, id) =>
      o === null ? ["release", id, null] : ["release", id, null, o]
    );
    assert.deepEqual(released, expected, `version ${v}`);
    await client.close();
  }
});

Deno.test("client: a release with an outcome that is none throws, and the seat stays held", async () => {
  const { client, s } = connectedTo(2);
  const admission = client.acquire(request);
  await Promise.resolve();
  s.deliver({ t: "decisions", d: [[0, "admitted", 0]] });
  const a = await admission;
  assert.ok(a.admitted);
  const sent = s.sent.length;
  assert.throws(
    () => a.seat.release({ outcome: "overload" as never }),
    /^TypeError: Cannot release a seat: outcome must be one of "ok", "error", "rejected", "timeout", got "overload"$/,
  );
  await Promise.resolve();
  assert.equal(s.sent.length, sent, "nothing sent");
  assert.equal(a.seat.release({ outcome: "error" }), true, "still held: released now");
  await Promise.resolve();
  assert.deepEqual(s.sent.at(-1), { t: "ops", ops: [["release", 0, null, "error"]] });
  await client.close();
});

Deno.test("client: a webSocket factory that throws is a lost connection, retried after the backoff", async () => {
  const clock = new FakeEventClock();
  let calls = 0;
  const client = connectCoordinator("ws://coordinator.test:7070", {
    clock,
    policy: "closed",
    reconnect: { initialMs: 100, maxMs: 100 },
    random: () => 0.5,
    webSocket: () => {
      calls++;
      throw new TypeError("no network here");
    },
  });
  assert.equal(calls, 1);
  assert.equal(client.state, "disconnected");
  assert.deepEqual(await client.acquire(request), {
    admitted: false,
    reason: "unavailable",
    retryAfterSeconds: 1,
  });
  clock.advance(75); // backoff: 100 ms with jitter 0.5 -> 75 ms
  assert.equal(calls, 2);
  await client.close();
  clock.advance(1_000);
  assert.equal(calls, 2, "no attempt after close()");
  assert.equal(clock.pendingTimers, 0);
});
