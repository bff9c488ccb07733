import assert from "node:assert/strict";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import type { ConnectionDriver, ConnectionHooks } from "../../src/deno/_deno_http.ts";
import { type ExpiryReason, GuardedConnection } from "../../src/deno/_guarded_connection.ts";

/** A driver that serves nothing: the test plays its hooks and sees its closes. */
function fakeDriver() {
  const state = { hooks: null as ConnectionHooks | null, closes: 0, finish: () => {} };
  const driver: ConnectionDriver = (_conn, _handler, _onError, hooks) => {
    state.hooks = hooks;
    const finished = new Promise<void>((resolve) => state.finish = resolve);
    return {
      finished,
      close: () => {
        state.closes++;
        state.finish();
      },
    };
  };
  return { driver, state };
}

function guarded() {
  const clock = new FakeEventClock();
  const { driver, state } = fakeDriver();
  const expired: ExpiryReason[] = [];
  const connection = new GuardedConnection({} as Deno.TcpConn, {
    driver,
    handler: () => new Response(),
    onError: () => new Response(null, { status: 500 }),
    clock,
    headerTimeoutMs: 1_000,
    idleTimeoutMs: 5_000,
    onExpired: (reason) => expired.push(reason),
  });
  return { clock, state, expired, connection, hooks: state.hooks! };
}

Deno.test("GuardedConnection: the header timeout runs from the start until the first request", () => {
  const { clock, state, expired } = guarded();
  clock.advance(999);
  assert.equal(state.closes, 0);
  clock.advance(1);
  assert.equal(state.closes, 1);
  assert.deepEqual(expired, ["header"]);
});

Deno.test("GuardedConnection: no timeout while a request is in flight; the idle one between", () => {
  const { clock, state, expired, hooks } = guarded();
  clock.advance(500);
  hooks.requestStarted();
  clock.advance(60_000); // a slow handler: nothing times out
  hooks.requestEnded();
  clock.advance(4_999);
  hooks.requestStarted(); // the next request, just in time
  hooks.requestEnded();
  clock.advance(4_999);
  assert.equal(state.closes, 0);
  clock.advance(1);
  assert.equal(state.closes, 1);
  assert.deepEqual(expired, ["idle"]);
});

Deno.test("GuardedConnection: pipelined requests arm the idle timeout after the last one", () => {
  const { clock, state, hooks } = guarded();
  hooks.requestStarted();
  hooks.requestStarted();
  hooks.requestEnded();
  clock.advance(10_000);
  assert.equal(state.closes, 0);
  hooks.requestEnded();
  clock.advance(5_000);
  assert.equal(state.closes, 1);
});

Deno.test("GuardedConnection: drain closes an idle connection at once, a busy one after its response", async () => {
  const idle = guarded();
  idle.connection.drain();
  assert.equal(idle.state.closes, 1);
  await idle.connection.finished;

  const busy = guarded();
  busy.hooks.requestStarted();
  busy.connection.drain();
  assert.equal(busy.state.closes, 0);
  busy.hooks.requestEnded();
  assert.equal(busy.state.closes, 1);
  await busy.connection.finished;
  busy.clock.runUntilIdle();
  assert.equal(busy.state.closes, 1);
});

Deno.test("GuardedConnection: an upgraded connection has no timeout; a finished one arms none", async () => {
  const upgraded = guarded();
  upgraded.hooks.requestStarted();
  upgraded.hooks.upgraded();
  upgraded.clock.runUntilIdle();
  assert.equal(upgraded.state.closes, 0);
  upgraded.state.finish();
  await upgraded.connection.finished;

  const gone = guarded();
  gone.hooks.requestStarted();
  gone.state.finish(); // the client went away mid-request
  await gone.connection.finished;
  gone.hooks.requestEnded();
  assert.equal(gone.clock.nextTimerAt(), undefined);
});

Deno.test("GuardedConnection: an idle timeout shorter than the header timeout still applies", () => {
  const clock = new FakeEventClock();
  const { driver, state } = fakeDriver();
  new GuardedConnection({} as Deno.TcpConn, {
    driver,
    handler: () => new Response(),
    onError: () => new Response(null, { status: 500 }),
    clock,
    headerTimeoutMs: 10_000,
    idleTimeoutMs: 300,
    onExpired: () => {},
  });
  state.hooks!.requestStarted();
  state.hooks!.requestEnded();
  clock.advance(299);
  assert.equal(state.closes, 0);
  clock.advance(1);
  assert.equal(state.closes, 1);
});

Deno.test("GuardedConnection: Infinity turns a timeout off", () => {
  const clock = new FakeEventClock();
  const { driver, state } = fakeDriver();
  new GuardedConnection({} as Deno.TcpConn, {
    driver,
    handler: () => new Response(),
    onError: () => new Response(null, { status: 500 }),
    clock,
    headerTimeoutMs: Infinity,
    idleTimeoutMs: Infinity,
    onExpired: () => {},
  });
  assert.equal(clock.nextTimerAt(), undefined);
  state.hooks!.requestStarted();
  state.hooks!.requestEnded();
  assert.equal(clock.nextTimerAt(), undefined);
  state.finish();
});
