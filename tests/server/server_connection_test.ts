import assert from "node:assert/strict";
import { constantTimeEqual } from "../../src/_shared/secrets.ts";
import { EmbeddedCoordinator } from "../../src/coordinator/embedded.ts";
import { ServerConnection } from "../../src/server/server_connection.ts";
import { SessionHost } from "../../src/server/sessions.ts";
import { CLOSE_UNAUTHENTICATED, type WireError } from "../../src/protocol/wire.ts";
import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { configOf, limited } from "../_helpers/coordinator_config.ts";
import { settle } from "../_helpers/settle.ts";

function setup(token: string | null = "s3cret") {
  const clock = new FakeEventClock();
  const coordinator = new EmbeddedCoordinator(
    configOf(6, [
      limited("queued", { shares: 10, queuing: { queues: 1, handSize: 1, queueLengthLimit: 3 } }),
    ]),
    { clock },
  );
  const host = new SessionHost(coordinator, { clock });
  const sent: Record<string, unknown>[] = [];
  const closes: [number, string][] = [];
  const refused: WireError[] = [];
  const connect = () =>
    new ServerConnection({
      host,
      token,
      configuration: () => ({ serverConcurrencyLimit: 6, mandatoryOnly: false, objects: [] }),
      send: (text) => sent.push(JSON.parse(text)),
      close: (code, reason) => closes.push([code, reason]),
      onRefused: (e) => refused.push(e),
    });
  return { clock, coordinator, host, sent, closes, refused, connect };
}

const hello = (token: string | null, resume: string | null = null) =>
  JSON.stringify({ t: "hello", v: [1], token, client: "test", resume });

Deno.test("hello with the right token gets welcome; ops then get batched decisions", async () => {
  const { coordinator, host, sent, connect } = setup();
  const c = connect();
  c.receive(hello("s3cret"));
  assert.equal(sent[0]!.t, "welcome");
  assert.equal(sent[0]!.v, 1);
  assert.deepEqual(sent[0]!.config, {
    serverConcurrencyLimit: 6,
    mandatoryOnly: false,
    objects: [],
  });
  c.receive(
    JSON.stringify({
      t: "ops",
      ops: [["acquire", 1, { priorityLevel: "queued", flowSchema: "q" }], ["acquire", 2, {
        priorityLevel: "queued",
        flowSchema: "q",
      }]],
    }),
  );
  await settle();
  assert.deepEqual(sent[1], { t: "decisions", d: [[1, "admitted", 0], [2, "admitted", 0]] });
  c.closed();
  host.close();
  coordinator.close();
});

Deno.test("a wrong or missing token is refused before any session exists, and no secret is echoed", () => {
  const { coordinator, host, sent, closes, refused, connect } = setup();
  for (const token of ["wrong", null, "s3cret-and-more"]) {
    const c = connect();
    c.receive(hello(token));
    assert.equal(c.session, null);
  }
  assert.equal(host.stats.sessions, 0);
  assert.deepEqual(sent.map((m) => m.code), [
    "unauthenticated",
    "unauthenticated",
    "unauthenticated",
  ]);
  assert.ok(sent.every((m) => !JSON.stringify(m).includes("s3cret")));
  assert.deepEqual(closes.map((c) => c[0]), [
    CLOSE_UNAUTHENTICATED,
    CLOSE_UNAUTHENTICATED,
    CLOSE_UNAUTHENTICATED,
  ]);
  assert.equal(refused.length, 3);
  coordinator.close();
});

Deno.test("the first message must be hello, in a version both speak", () => {
  const { coordinator, sent, closes, connect } = setup(null);
  connect().receive(JSON.stringify({ t: "ops", ops: [["cancel", 1]] }));
  connect().receive(JSON.stringify({ t: "hello", v: [7], token: null, client: "x", resume: null }));
  connect().receive("{not json");
  assert.deepEqual(sent.map((m) => m.code), ["hello-expected", "unsupported-version", "malformed"]);
  assert.equal(closes.length, 3);
  coordinator.close();
});

Deno.test("after hello, bad frames are answered and counted, the connection goes on, nothing changes", async () => {
  const { coordinator, host, sent, closes, refused, connect } = setup(null);
  const c = connect();
  c.receive(hello(null));
  c.receive("x".repeat(2 ** 20 + 1));
  c.receive(JSON.stringify({ t: "ops", ops: [["acquire", 1, { nope: true }]] }));
  c.receive(JSON.stringify({ t: "shutdown" }));
  c.receive(hello(null));
  c.receive(new Uint8Array(4));
  assert.deepEqual(sent.slice(1).map((m) => m.code), [
    "too-large",
    "malformed",
    "unknown-type",
    "malformed",
    "malformed",
  ]);
  assert.equal(closes.length, 0);
  assert.equal(refused.length, 5);
  assert.deepEqual(c.session!.held, []);
  c.receive(
    JSON.stringify({
      t: "ops",
      ops: [["acquire", 1, { priorityLevel: "queued", flowSchema: "q" }]],
    }),
  );
  await settle();
  assert.deepEqual(sent.at(-1), { t: "decisions", d: [[1, "admitted", 0]] });
  c.closed();
  host.close();
  coordinator.close();
});

Deno.test("a reconnecting client resumes its session and reclaims its seats", async () => {
  const { coordinator, host, sent, connect } = setup(null);
  const first = connect();
  first.receive(hello(null));
  const session = sent[0]!.session as string;
  first.receive(
    JSON.stringify({
      t: "ops",
      ops: [["acquire", 5, { priorityLevel: "queued", flowSchema: "q" }]],
    }),
  );
  await settle();
  first.closed();
  const second = connect();
  second.receive(hello(null, session));
  const welcome = sent.at(-1)!;
  assert.equal(welcome.session, session);
  assert.deepEqual(welcome.reclaimed, [5]);
  second.closed();
  host.close();
  coordinator.close();
});

Deno.test("constantTimeEqual compares whole strings", () => {
  assert.equal(constantTimeEqual("abc", "abc"), true);
  assert.equal(constantTimeEqual("abc", "abd"), false);
  assert.equal(constantTimeEqual("abc", "abcd"), false);
  assert.equal(constantTimeEqual("", ""), true);
  assert.equal(constantTimeEqual("é", "e"), false);
});
