/**
 * The upstream's response body failing: before anything of it went out (the
 * caller answers 502 and releases the seat) and mid-way (the client's
 * stream fails, the seat goes back as an error); told once either way.
 * Then the gateway's exchange on a body that fails at once: a clean 502
 * with the APF fields, the seat back, the failure told.
 */

import assert from "node:assert/strict";
import { upstreamBody, UpstreamBodyFailed } from "../../src/deno/_upstream_body.ts";
import { gatewayExchange } from "../../src/deno/_gateway_exchange.ts";
import type { GatewayRequest } from "../../src/deno/_gateway_server.ts";
import type { Http1UpstreamClient, UpstreamReply } from "../../src/deno/upstream_client.ts";
import type { ReleaseOptions, Seat } from "../../src/coordinator/types.ts";
import { RELEASED_AS } from "../../src/coordinator/release_outcome.ts";
import { apf } from "../../src/hono/mod.ts";
import { admissionOf } from "../../src/hono/admission.ts";
import { FLOW_SCHEMA_UID_HEADER } from "../../src/hono/_response.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";

/** A byte stream that fails on its first read, after `chunks` (sent one per pull). */
function failingBody(chunks: Uint8Array[] = []): ReadableStream<Uint8Array> {
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.error(new Error("connection reset"));
      else controller.enqueue(next);
    },
  });
}

/** A seat that records its releases. */
function recordingSeat(): Seat & { releases: (ReleaseOptions | undefined)[] } {
  const releases: (ReleaseOptions | undefined)[] = [];
  return {
    releases,
    release(options?: ReleaseOptions) {
      releases.push(options);
      return releases.length === 1;
    },
    initialized() {},
    [Symbol.dispose]() {},
  } as unknown as Seat & { releases: (ReleaseOptions | undefined)[] };
}

const deadline = { resume: () => Promise.resolve(), cancel() {}, passed: false };

Deno.test("a body failing before any of it is passed on: rejected, told once, the seat left to the caller", async () => {
  for (const length of [5, null]) {
    const told: UpstreamBodyFailed[] = [];
    const seat = recordingSeat();
    const answer = upstreamBody(failingBody(), length, deadline, {
      seat,
      releasedAs: RELEASED_AS.ok,
      onFailure: (e) => told.push(e),
    });
    if (length === null) {
      // A body of unknown length is streamed at once: the failure comes with its first pull.
      const stream = await answer as ReadableStream<Uint8Array>;
      await assert.rejects(new Response(stream).arrayBuffer());
      assert.equal(told.length, 1);
      assert.deepEqual(seat.releases, [RELEASED_AS.error], "the stream gives the seat back");
      continue;
    }
    const failure = await answer.then(() => null, (e) => e);
    assert.ok(failure instanceof UpstreamBodyFailed, String(failure));
    assert.equal((failure.cause as Error).message, "connection reset");
    assert.deepEqual(told, [failure]);
    assert.deepEqual(seat.releases, [], "nothing of it went out: the caller releases");
  }
});

Deno.test("a body failing mid-way: the client's stream fails, the seat goes back as an error, told once", async () => {
  const told: UpstreamBodyFailed[] = [];
  const seat = recordingSeat();
  const body = await upstreamBody(
    failingBody([new Uint8Array([1, 2, 3])]),
    100,
    deadline,
    { seat, releasedAs: RELEASED_AS.ok, onFailure: (e) => told.push(e) },
  );
  assert.ok(body instanceof ReadableStream);
  const reader = body.getReader();
  assert.deepEqual([...(await reader.read()).value!], [1, 2, 3]);
  const failure = await reader.read().then(() => null, (e) => e);
  assert.ok(failure instanceof UpstreamBodyFailed, String(failure));
  assert.deepEqual(told, [failure]);
  assert.deepEqual(seat.releases, [RELEASED_AS.error]);
});

Deno.test("the gateway's exchange answers a body failing at once with a clean 502, and the seat goes back", async () => {
  const clock = new FakeEventClock();
  const middleware = apf({ clock });
  const errors: unknown[] = [];
  const reply: UpstreamReply = {
    status: 200,
    statusText: "OK",
    fields: ["content-type", "text/plain"],
    plain: true,
    length: 5,
    body: failingBody(),
  };
  const client = {
    base: (origin: string) => origin,
    sendTo: () => Promise.resolve(reply),
  } as unknown as Http1UpstreamClient;
  const exchange = gatewayExchange({
    upstream: new URL("http://upstream.test"),
    admission: admissionOf(middleware),
    client,
    clock,
    requestTimeoutMs: 60_000,
    onError: (e) => errors.push(e),
  });
  const request = {
    method: "GET",
    target: "/x",
    fields: ["host", "gateway.test"],
    body: null,
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
    signal: new AbortController().signal,
    gone: false,
    contentLength: null,
    refused: null,
  } as GatewayRequest;
  try {
    const answer = await exchange(request);
    assert.equal(answer.status, 502);
    assert.equal(new TextDecoder().decode(answer.body as Uint8Array), "Bad Gateway\n");
    assert.ok(answer.fields.includes(FLOW_SCHEMA_UID_HEADER), "the APF fields are on it");
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof UpstreamBodyFailed, String(errors[0]));
    for (const level of middleware.snapshot()!.levels) {
      assert.equal(level.queueSet.seatsInUse, 0, level.name);
      assert.equal(level.queueSet.executingRequests, 0, level.name);
    }
  } finally {
    middleware.close();
  }
});
