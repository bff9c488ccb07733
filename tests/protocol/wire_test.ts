import assert from "node:assert/strict";
import { Coalescer } from "../../src/protocol/coalescer.ts";
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeMessage,
  MAX_BATCH,
  MAX_FRAME_LENGTH,
  negotiateVersion,
} from "../../src/protocol/wire.ts";

const request = {
  priorityLevel: "global-default",
  flowSchema: "global-default",
  flowHash: { hi: 4108205012, lo: 751695543 },
  distinguisher: "alice",
  work: { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 },
  waitLimitMs: 15000,
};

Deno.test("client messages round-trip through encode and decode", () => {
  const messages = [
    { t: "hello", v: [1], token: "s3cret", client: "gateway-a", resume: null },
    { t: "hello", v: [1, 2], token: null, client: "x", resume: "s-1" },
    {
      t: "ops",
      ops: [
        ["acquire", 41, request],
        ["acquire", 42, { priorityLevel: "exempt", flowSchema: "exempt", flowHash: null }],
        ["release", 38, 12.5],
        ["release", 37, null],
        // Version 2: how the seat's work ended (absent: "ok").
        ["release", 35, null, "rejected"],
        ["release", 34, 8, "timeout"],
        ["cancel", 40],
        ["initialized", 39],
        ["renew", 36],
      ],
    },
  ] as const;
  for (const m of messages) {
    const decoded = decodeClientMessage(encodeMessage(m as never));
    assert.deepEqual(decoded, { ok: true, message: m });
  }
});

Deno.test("server messages round-trip through encode and decode", () => {
  const messages = [
    {
      t: "welcome",
      v: 1,
      session: "s-1",
      leaseMs: 30000,
      graceMs: 5000,
      config: {
        serverConcurrencyLimit: 600,
        mandatoryOnly: false,
        objects: [{ kind: "FlowSchema" }],
      },
      reclaimed: [17, 18],
    },
    {
      t: "decisions",
      d: [[41, "admitted", 0], [42, "rejected", "queue-full", 2], [30, "expired"]],
    },
    { t: "config", config: { serverConcurrencyLimit: 10, mandatoryOnly: true, objects: [] } },
    { t: "error", code: "invalid-request", message: "no flow hash", id: 9 },
  ] as const;
  for (const m of messages) {
    assert.deepEqual(decodeServerMessage(encodeMessage(m as never)), { ok: true, message: m });
  }
});

function refused(data: unknown, code: string, message: RegExp) {
  const d = decodeClientMessage(data);
  assert.equal(d.ok, false, String(data).slice(0, 80));
  if (!d.ok) {
    assert.equal(d.error.code, code);
    assert.match(d.error.message, message);
  }
}

Deno.test("bad client frames decode to an error naming the problem, never a throw", () => {
  refused(new Uint8Array([1]), "malformed", /binary frame/);
  refused("{", "malformed", /invalid JSON/);
  refused("[1]", "malformed", /must be a JSON object/);
  refused("null", "malformed", /must be a JSON object/);
  refused(
    '{"t":"launch"}',
    "unknown-type",
    /unknown message type "launch" \(expected hello, ops\)/,
  );
  refused('{"x":1}', "unknown-type", /unknown message type undefined/);
  refused('{"t":"ops","ops":[]}', "malformed", /^ops message at ops:/);
  refused('{"t":"ops","ops":[["acquire",-1,{}]]}', "malformed", /^ops message at ops/);
  refused('{"t":"ops","ops":[["release",1]]}', "malformed", /^ops message at ops/);
  // An outcome that is none, or a field more, refuses the whole message (nothing released).
  refused(
    '{"t":"ops","ops":[["release",1,null,"overload"]]}',
    "malformed",
    /^ops message at ops\.0: /,
  );
  refused('{"t":"ops","ops":[["release",1,null,null]]}', "malformed", /^ops message at ops/);
  refused('{"t":"ops","ops":[["release",1,null,"ok",1]]}', "malformed", /^ops message at ops/);
  refused(
    JSON.stringify({
      t: "ops",
      ops: [["acquire", 1, { ...request, flowHash: { hi: 2 ** 32, lo: 0 } }]],
    }),
    "malformed",
    /^ops message at ops/,
  );
  refused(
    JSON.stringify({ t: "ops", ops: [["acquire", 1, { ...request, surprise: true }]] }),
    "malformed",
    /^ops message at ops/,
  );
  refused(
    '{"t":"hello","v":[],"token":null,"client":"x","resume":null}',
    "malformed",
    /hello message at v/,
  );
  refused("x".repeat(MAX_FRAME_LENGTH + 1), "too-large", new RegExp(`exceeds ${MAX_FRAME_LENGTH}`));
  const tooMany = JSON.stringify({
    t: "ops",
    ops: Array.from({ length: MAX_BATCH + 1 }, (_, i) => ["cancel", i]),
  });
  refused(tooMany, "malformed", /^ops message at ops:/);
});

Deno.test("bad server frames are refused too", () => {
  const d = decodeServerMessage('{"t":"decisions","d":[[1,"admitted"]]}');
  assert.equal(d.ok, false);
  const e = decodeServerMessage('{"t":"error","code":"boom","message":"x","id":null}');
  assert.equal(!e.ok && e.error.code, "malformed");
  const h = decodeServerMessage('{"t":"hello","v":[1],"token":null,"client":"x","resume":null}');
  assert.equal(!h.ok && h.error.code, "unknown-type");
});

Deno.test("version negotiation picks the newest common version", () => {
  assert.equal(negotiateVersion([1]), 1);
  assert.equal(negotiateVersion([1, 2]), 2);
  assert.equal(negotiateVersion([3, 1, 2]), 2);
  assert.equal(negotiateVersion([3, 1]), 1);
  assert.equal(negotiateVersion([3, 4]), null);
});

Deno.test("the coalescer sends a tick's items as one batch, and splits at the batch limit", async () => {
  const batches: number[][] = [];
  const c = new Coalescer<number>((b) => batches.push(b), 3);
  c.push(1);
  c.push(2);
  assert.deepEqual(batches, []);
  assert.equal(c.pending, 2);
  await Promise.resolve();
  assert.deepEqual(batches, [[1, 2]]);
  for (let i = 0; i < 7; i++) c.push(10 + i);
  assert.deepEqual(batches, [[1, 2], [10, 11, 12], [13, 14, 15]]);
  await Promise.resolve();
  assert.deepEqual(batches.at(-1), [16]);
  c.push(99);
  assert.deepEqual(c.clear(), [99]);
  await Promise.resolve();
  assert.equal(batches.length, 4, "cleared items are not sent");
  assert.throws(() => new Coalescer(() => {}, 0), /maxBatch must be an integer >= 1, got 0/);
});
