/**
 * The client kit (`SeatClient`) over a fake transport on the fake clock:
 * deadlines against a slow transport, the unreachable policies, a refused
 * credential, lease renewal, and a seat given back exactly once whatever
 * the path. The transport records what the kit asks of it; the test plays
 * the server through the kit's events.
 */

import assert from "node:assert/strict";
import type { Admission, SeatRequest } from "../../src/coordinator/types.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { ClientState } from "../../src/remote/client_types.ts";
import {
  SeatClient,
  type SeatClientOptions,
  type SeatClientStats,
} from "../../src/remote/seat_client.ts";
import type { SeatTransport, TransportEvents } from "../../src/remote/seat_transport.ts";
import { conformanceConfiguration } from "../_helpers/coordinator_conformance.ts";
import { queued } from "./_client_helpers.ts";
import { settle } from "../_helpers/settle.ts";

type Op = [string, number] | ["release", number, number | null];

/** Records every operation; `cancel` is `null` for a transport that cannot cancel (RPC). */
class FakeTransport implements SeatTransport {
  state: ClientState;
  leaseMs = 1_000;
  ops: Op[] = [];
  cancel: ((id: number) => void) | null;

  constructor(state: ClientState, canCancel: boolean) {
    this.state = state;
    this.cancel = canCancel ? (id) => this.ops.push(["cancel", id]) : null;
  }

  acquire(id: number): void {
    this.ops.push(["acquire", id]);
  }
  release(id: number, executionMs: number | null): void {
    this.ops.push(["release", id, executionMs]);
  }
  initialized(id: number): void {
    this.ops.push(["initialized", id]);
  }
  renew(id: number): void {
    this.ops.push(["renew", id]);
  }
  /** The operations of one kind. */
  of(kind: string): Op[] {
    return this.ops.filter((op) => op[0] === kind);
  }
}

interface Setup {
  clock: FakeEventClock;
  client: SeatClient;
  events: TransportEvents;
  transport: FakeTransport;
  stats: SeatClientStats;
}

function setup(
  options: SeatClientOptions & { state?: ClientState; canCancel?: boolean } = {},
): Setup {
  const clock = new FakeEventClock();
  const { state = "connected", canCancel = true, ...kitOptions } = options;
  const transport = new FakeTransport(state, canCancel);
  const stats: SeatClientStats = { fallbacks: 0, lateReleases: 0, lost: 0 };
  let events: TransportEvents | null = null;
  const client = new SeatClient(
    "Cannot test",
    { clock, policy: "closed", deadlineMarginMs: 200, ...kitOptions },
    stats,
    (e) => {
      events = e;
      return transport;
    },
  );
  return { clock, client, events: events!, transport, stats };
}

/** Ends a setup: every timer gone. */
function done(s: Setup): void {
  s.client.close(true);
  assert.equal(s.clock.pendingTimers, 0, "no timer left behind");
}

/** The promise's outcome so far, or `"pending"`. */
async function peek<T>(p: Promise<T>): Promise<T | "pending"> {
  let outcome: T | "pending" = "pending";
  p.then((v) => outcome = v, () => {});
  await settle();
  return outcome;
}

const admit = { admitted: true, waitedMs: 5 } as const;
const UNAVAILABLE: Admission = { admitted: false, reason: "unavailable", retryAfterSeconds: 1 };
const req = (extra: Partial<SeatRequest> = {}) => queued({ waitLimitMs: 1_000, ...extra });

async function held(s: Setup, request = req()) {
  const p = s.client.acquire(request);
  const id = s.transport.of("acquire").at(-1)![1];
  s.events.decided(id, admit);
  const a = await p;
  assert.ok(a.admitted);
  return { seat: a.seat, id };
}

Deno.test("kit: a slow transport's request is answered at its deadline; the late grant goes back once", async () => {
  const s = setup();
  const p = s.client.acquire(req());
  assert.deepEqual(s.transport.ops, [["acquire", 0]]);
  s.clock.advance(1_199);
  assert.equal(await peek(p), "pending", "within the wait limit plus the margin");
  s.clock.advance(1);
  assert.deepEqual(await p, UNAVAILABLE);
  assert.deepEqual(s.transport.ops, [["acquire", 0], ["cancel", 0]], "cancelled on the server");
  assert.equal(s.stats.fallbacks, 1);
  s.events.decided(0, admit);
  s.events.decided(0, { admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
  // Given back unused: an early release, no sample of a learned limit.
  assert.deepEqual(s.transport.of("initialized"), [["initialized", 0]]);
  assert.deepEqual(s.transport.of("release"), []);
  assert.equal(s.stats.lateReleases, 1);
  done(s);
});

Deno.test("kit: without cancel, the deadline and an abort answer at once; a late grant goes back once, unused", async () => {
  const s = setup({ canCancel: false, measureExecution: true });
  const slow = s.client.acquire(req());
  const abort = new AbortController();
  const aborted = s.client.acquire(req(), { signal: abort.signal });
  abort.abort();
  assert.deepEqual(await aborted, { admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
  s.clock.advance(1_200);
  assert.deepEqual(await slow, UNAVAILABLE);
  s.events.decided(1, admit);
  s.events.decided(0, admit);
  assert.deepEqual(s.transport.ops, [
    ["acquire", 0],
    ["acquire", 1],
    ["initialized", 1],
    ["initialized", 0],
  ]);
  assert.equal(s.stats.lateReleases, 2);
  done(s);
});

Deno.test("kit: with cancel, an abort asks the server and takes its answer, a seat included", async () => {
  const s = setup();
  const abort = new AbortController();
  const p = s.client.acquire(req(), { signal: abort.signal });
  abort.abort();
  assert.deepEqual(s.transport.ops, [["acquire", 0], ["cancel", 0]]);
  assert.equal(await peek(p), "pending", "the server decides");
  s.events.decided(0, admit);
  const a = await p;
  assert.ok(a.admitted, "granted before the cancel arrived");
  assert.equal(a.seat.release(), true);
  assert.deepEqual(s.transport.of("release"), [["release", 0, null]]);
  // Already aborted: sent anyway, then cancelled (it runs if it need not wait).
  const q = s.client.acquire(req(), { signal: AbortSignal.abort() });
  assert.deepEqual(s.transport.ops.slice(-2), [["acquire", 1], ["cancel", 1]]);
  s.events.decided(1, { admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
  assert.deepEqual(await q, { admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
  done(s);
});

Deno.test("kit: unreachable, each policy answers at once: local limits, open admits, closed rejects", async () => {
  const config = conformanceConfiguration();
  for (const policy of ["local", "open", "closed"] as const) {
    const s = setup({
      policy,
      state: "disconnected",
      fallback: { configuration: config, fraction: 0.5 },
    });
    const a = await s.client.acquire(req());
    const b = await s.client.acquire(req({ waitLimitMs: 0 }));
    assert.deepEqual(s.transport.ops, [], `${policy}: nothing sent`);
    assert.equal(s.stats.fallbacks, 2, policy);
    if (policy === "closed") {
      assert.deepEqual([a, b], [UNAVAILABLE, UNAVAILABLE]);
    } else if (policy === "open") {
      assert.ok(a.admitted && b.admitted, "open admits");
      assert.equal(a.seat.release(), true);
      assert.equal(a.seat.release(), false, "released once");
    } else {
      assert.ok(a.admitted, "the local limiter's one seat");
      assert.equal(!b.admitted && b.reason, "time-out", "the local limit is one seat");
      const level = s.client.snapshot()!.levels.find((l) => l.name === "queued")!;
      assert.equal(level.queueSet.seatsInUse, 1);
      a.seat.release();
    }
    if (b.admitted) b.seat.release();
    done(s);
  }
});

Deno.test("kit: a lost connection or a failed call leaves the policy only what is left of the wait", async () => {
  const s = setup({
    policy: "local",
    fallback: { configuration: conformanceConfiguration(), fraction: 0.5 },
  });
  const first = s.client.acquire(req());
  const second = s.client.acquire(req());
  const third = s.client.acquire(req());
  s.clock.advance(600);
  // A server failure goes to the policy; a malformed request is the caller's, rejected.
  assert.equal(s.events.failed(0, new Error("overloaded")), true);
  const a = await first;
  assert.ok(a.admitted, "the local limiter's one seat");
  assert.equal(s.events.failed(1, new TypeError("bad request")), false);
  await assert.rejects(second, TypeError);
  s.transport.state = "disconnected";
  s.events.unreachable();
  assert.equal(await peek(third), "pending", "queued locally");
  s.clock.advance(399);
  assert.equal(await peek(third), "pending");
  s.clock.advance(1);
  const c = await third;
  assert.equal(!c.admitted && c.reason, "time-out", "at 1,000 ms, not 1,600");
  assert.equal(s.stats.fallbacks, 2);
  a.seat.release();
  done(s);
});

Deno.test("kit: requests waiting in the local limiter move to the coordinator once it is reached", async () => {
  const s = setup({
    policy: "local",
    state: "disconnected",
    fallback: { configuration: conformanceConfiguration(), fraction: 0.5 },
  });
  const local = await s.client.acquire(req());
  assert.ok(local.admitted);
  const waiting = s.client.acquire(req());
  s.clock.advance(300);
  s.transport.state = "connected";
  assert.equal(s.events.reachable([]), 0);
  await settle();
  assert.deepEqual(s.transport.ops, [["acquire", 0]], "moved to the coordinator");
  s.events.decided(0, admit);
  const moved = await waiting;
  assert.ok(moved.admitted);
  moved.seat.release();
  local.seat.release();
  assert.deepEqual(s.transport.of("release"), [["release", 0, null]]);
  done(s);
});

Deno.test("kit: requests made while connecting wait for the connection and leave then", async () => {
  const s = setup({ state: "connecting" });
  let ready = false;
  void s.client.ready().then(() => ready = true);
  const p = s.client.acquire(req());
  const aborted = s.client.acquire(req(), { signal: AbortSignal.abort() });
  await settle();
  assert.deepEqual(s.transport.ops, []);
  assert.equal(ready, false);
  s.transport.state = "connected";
  s.events.reachable([]);
  await settle();
  assert.equal(ready, true);
  assert.deepEqual(s.transport.ops, [["acquire", 0], ["acquire", 1], ["cancel", 1]]);
  s.events.decided(0, admit);
  s.events.decided(1, { admitted: false, reason: "cancelled", retryAfterSeconds: 1 });
  const a = await p;
  assert.ok(a.admitted);
  assert.equal((await aborted).admitted, false);
  a.seat.release();
  done(s);
});

Deno.test("kit: a refused credential is an error for every caller, never the policy's answer", async () => {
  const s = setup({ state: "connecting", policy: "open" });
  const ready = s.client.ready();
  const waiting = s.client.acquire(req());
  const refusal = new Error("refused: wrong token");
  s.transport.state = "refused";
  s.events.refused(refusal);
  await assert.rejects(waiting, (e) => e === refusal);
  await assert.rejects(ready, (e) => e === refusal);
  await assert.rejects(s.client.acquire(req()), (e) => e === refusal);
  await assert.rejects(s.client.ready(), (e) => e === refusal);
  assert.equal(s.stats.fallbacks, 0, "never the policy");
  assert.deepEqual(s.transport.ops, []);
  done(s);
});

Deno.test("kit: a refusal takes held seats: lost, their release sends nothing", async () => {
  const s = setup();
  const { seat } = await held(s);
  s.transport.state = "refused";
  s.events.refused(new Error("refused"));
  assert.equal(seat.release(), false);
  assert.deepEqual(s.transport.of("release"), []);
  s.clock.advance(5_000);
  assert.deepEqual(s.transport.of("renew"), [], "no renewal after the refusal");
  done(s);
});

Deno.test("kit: a held seat's lease is renewed every half lease, and no more once released", async () => {
  const s = setup();
  const { seat, id } = await held(s);
  s.clock.advance(499);
  assert.deepEqual(s.transport.of("renew"), []);
  s.clock.advance(1);
  assert.deepEqual(s.transport.of("renew"), [["renew", id]]);
  s.clock.advance(500);
  assert.equal(s.transport.of("renew").length, 2);
  // One granted just before a renewal waits for the next (held less than a quarter lease).
  s.clock.advance(400);
  const second = await held(s);
  s.clock.advance(100);
  assert.deepEqual(s.transport.of("renew").slice(2), [["renew", id]]);
  s.clock.advance(500);
  assert.deepEqual(s.transport.of("renew").slice(3), [["renew", id], ["renew", second.id]]);
  seat.release();
  second.seat.release();
  assert.equal(s.clock.pendingTimers, 0, "renewals stop with the last seat");
  s.clock.advance(5_000);
  assert.equal(s.transport.of("renew").length, 5);
  done(s);
});

Deno.test("kit: renewals pause while unreachable; a seat the server no longer has is lost", async () => {
  const s = setup();
  const { seat, id } = await held(s);
  s.transport.state = "disconnected";
  s.events.unreachable();
  s.clock.advance(1_000);
  assert.deepEqual(s.transport.of("renew"), []);
  s.transport.state = "connected";
  assert.equal(s.events.reachable([id]), 1, "kept by the resumed session");
  s.clock.advance(500);
  assert.deepEqual(s.transport.of("renew"), [["renew", id]]);
  s.events.expired(id);
  assert.equal(s.stats.lost, 1);
  assert.equal(seat.release(), false, "a lost seat releases nothing");
  assert.deepEqual(s.transport.of("release"), []);
  done(s);
});

Deno.test("kit: a seat goes back exactly once, whatever the path", async () => {
  const s = setup();
  // Released twice, or initialized then released: one operation.
  const a = await held(s);
  assert.equal(a.seat.release({ executionMs: 7 }), true);
  assert.equal(a.seat.release(), false);
  const b = await held(s);
  b.seat.initialized();
  assert.equal(b.seat.release(), false);
  assert.deepEqual(s.transport.ops.filter((op) => op[0] !== "acquire"), [
    ["release", a.id, 7],
    ["initialized", b.id],
  ]);
  s.transport.ops = [];
  // Released while unreachable: nothing leaves; the resumed session kept it, so it goes then.
  const c = await held(s);
  const d = await held(s);
  s.transport.state = "disconnected";
  s.events.unreachable();
  assert.equal(c.seat.release(), true);
  s.transport.state = "connected";
  // d was not kept (a new session): lost, never doubled.
  assert.equal(s.events.reachable([c.id]), 0);
  assert.equal(d.seat.release(), false);
  // Given back as unused (its time and outcome here are lost with the connection): no sample.
  assert.deepEqual(s.transport.of("initialized"), [["initialized", c.id]]);
  assert.deepEqual(s.transport.of("release"), []);
  assert.deepEqual([s.stats.lateReleases, s.stats.lost], [1, 1]);
  s.transport.ops = [];
  // Closing gives held seats back once; their holders' releases then do nothing.
  const e = await held(s);
  s.client.close(true);
  assert.equal(e.seat.release(), false);
  assert.deepEqual(s.transport.of("release"), [["release", e.id, null]]);
  assert.deepEqual(await s.client.acquire(req()), UNAVAILABLE, "closed");
  done(s);
});

Deno.test("kit: close answers waiters unavailable; close(false) leaves held seats to their holders", async () => {
  const s = setup({ canCancel: false, measureExecution: true });
  const { seat, id } = await held(s);
  const waiting = s.client.acquire(req());
  s.client.close(false);
  assert.deepEqual(await waiting, UNAVAILABLE);
  assert.deepEqual(s.transport.of("release"), [], "still held");
  s.clock.advance(500);
  assert.deepEqual(s.transport.of("renew"), [["renew", id]], "and renewed");
  s.clock.advance(30);
  assert.equal(seat.release(), true);
  assert.deepEqual(s.transport.of("release"), [["release", id, 530]], "measured by the client");
  s.events.decided(1, admit);
  assert.deepEqual(s.transport.of("initialized"), [["initialized", 1]], "late grant back");
  done(s);
});

Deno.test("kit: invalid options and requests are refused, and change nothing", async () => {
  for (
    const [options, kind, message] of [
      [{ policy: "maybe" as never }, TypeError, /policy must be local, open or closed, got maybe/],
      [{ fallback: { fraction: 0 } }, RangeError, /fraction must be in \(0, 1\], got 0/],
      [{ fallback: { fraction: "0.5" as never } }, TypeError, /fraction must be in \(0, 1\]/],
      [{ deadlineMarginMs: -1 }, RangeError, /deadlineMarginMs must be >= 0, got -1/],
    ] as const
  ) {
    let made = false;
    assert.throws(
      () =>
        new SeatClient("Cannot test", options, { fallbacks: 0, lateReleases: 0, lost: 0 }, () => {
          made = true;
          return new FakeTransport("connected", true);
        }),
      (e) => e instanceof kind && message.test((e as Error).message),
    );
    assert.equal(made, false, "no transport made");
  }
  const s = setup();
  await assert.rejects(s.client.acquire(null as never), /request must be an object/);
  await assert.rejects(s.client.acquire({ priorityLevel: 3 } as never), TypeError);
  assert.deepEqual(s.transport.ops, []);
  done(s);
});

Deno.test("kit: the exempt level is admitted here, whatever the transport's state, and never sent", async () => {
  for (const state of ["connected", "connecting", "disconnected"] as const) {
    const s = setup({ state, policy: "closed" });
    const a = await s.client.acquire(req({ priorityLevel: "exempt" }));
    assert.ok(a.admitted, `${state}: the mandatory exempt level admits`);
    assert.equal(a.waitedMs, 0);
    assert.equal(a.seat.priorityLevel, "exempt");
    assert.equal(a.seat.release(), true);
    assert.equal(a.seat.release(), false, "released once");
    assert.deepEqual(s.transport.ops, [], `${state}: nothing crossed the transport`);
    assert.equal(s.stats.fallbacks, 0, "not a fallback");
    done(s);
  }

  // Any other level goes to the coordinator (only the mandatory level can be exempt).
  const s = setup();
  const limited = s.client.acquire(req());
  assert.deepEqual(s.transport.ops, [["acquire", 0]], "a limited level goes to the coordinator");
  s.events.decided(0, admit);
  const l = await limited;
  assert.ok(l.admitted);
  l.seat.release();
  done(s);
});

Deno.test("kit: a refused credential refuses exempt requests too; a closed kit answers unavailable", async () => {
  const refused = setup();
  refused.events.refused(new Error("the coordinator refused the token"));
  await assert.rejects(
    refused.client.acquire(req({ priorityLevel: "exempt" })),
    /refused the token/,
  );
  done(refused);
  const closed = setup();
  closed.client.close(true);
  assert.deepEqual(await closed.client.acquire(req({ priorityLevel: "exempt" })), UNAVAILABLE);
  done(closed);
});

Deno.test("kit: every deadline and the lease renewal share one timer; seats coming and going add none", async () => {
  const s = setup();
  const waiting = [s.client.acquire(req()), s.client.acquire(req({ waitLimitMs: 2_000 }))];
  assert.equal(s.clock.pendingTimers, 1, "one timer for two deadlines");
  const { seat, id } = await held(s);
  assert.equal(s.clock.pendingTimers, 1, "the renewal joins it");
  seat.release();
  for (let i = 0; i < 5; i++) (await held(s)).seat.release();
  assert.equal(s.clock.pendingTimers, 1, "still one while acquires wait");
  // The renewal still works on the shared timer.
  const kept = await held(s);
  s.clock.advance(500);
  assert.deepEqual(s.transport.of("renew"), [["renew", kept.id]]);
  assert.notEqual(kept.id, id);
  s.clock.advance(700);
  assert.deepEqual(await waiting[0], UNAVAILABLE, "the first deadline: 1,000 ms + 200 ms margin");
  assert.equal(await peek(waiting[1]!), "pending");
  s.clock.advance(1_000);
  assert.deepEqual(await waiting[1], UNAVAILABLE, "the second: 2,000 ms + 200 ms");
  kept.seat.release();
  assert.equal(s.clock.pendingTimers, 0, "nothing waits, nothing held: no timer");
  done(s);
});
