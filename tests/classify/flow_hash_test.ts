import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2.js";
import fc from "fast-check";
import {
  flowHash,
  flowHashToBigInt,
  flowHashToString,
  parseFlowHash,
} from "../../src/classify/flow_hash.ts";

Deno.test("flow hashes are 32-bit halves of Kubernetes' 64-bit hashFlowID value, with JSON forms", () => {
  const h = flowHash("global-default", "alice");
  assert.deepEqual(h, { hi: 0xf4de3bd4, lo: 0x2ccdf6b7 });
  assert.equal(flowHashToBigInt(h), 17644606172554983095n);
  assert.equal(flowHashToString(h), "17644606172554983095");
  assert.deepEqual(parseFlowHash("17644606172554983095"), h);
  assert.deepEqual(parseFlowHash(JSON.parse(JSON.stringify(h))), h);
  assert.deepEqual(parseFlowHash(17644606172554983095n), h);
  assert.deepEqual(parseFlowHash(7), { hi: 0, lo: 7 });
  assert.deepEqual(parseFlowHash("18446744073709551615"), { hi: 0xffffffff, lo: 0xffffffff });
});

Deno.test("parseFlowHash refuses what is not an unsigned 64-bit value, naming it", () => {
  // A number out of range is a RangeError; anything that is not a number in a form read, a TypeError.
  for (
    const bad of ["18446744073709551616", { hi: -1, lo: 0 }, { hi: 0, lo: 0.5 }, 2 ** 53, -3, -1n]
  ) {
    assert.throws(() => parseFlowHash(bad), /^RangeError: Cannot read a flow hash: expected/);
  }
  for (const bad of ["-1", "01", "1.5", "", { hi: 1 }, { hi: "1", lo: 0 }, null, true]) {
    assert.throws(() => parseFlowHash(bad), /^TypeError: Cannot read a flow hash: expected/);
  }
  assert.throws(() => parseFlowHash("x"), /got "x"$/);
  assert.throws(() => parseFlowHash(-1n), /got -1n$/);
});

Deno.test("flowHash is SHA-256 of name ‖ 0x00 ‖ distinguisher, for any UTF-16 text and length", () => {
  const encoder = new TextEncoder();
  const reference = (a: string, b: string) => {
    const x = encoder.encode(a), y = encoder.encode(b);
    const input = new Uint8Array(x.length + 1 + y.length);
    input.set(x, 0);
    input.set(y, x.length + 1);
    const view = new DataView(sha256(input).buffer);
    return { lo: view.getUint32(0, true), hi: view.getUint32(4, true) };
  };
  // Code units of every kind: ASCII, 2- and 3-byte UTF-8, surrogate pairs and lone surrogates.
  const unit = fc.oneof(
    fc.integer({ min: 0, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0x7ff }),
    fc.integer({ min: 0x800, max: 0xffff }),
    fc.constantFrom(0xd83d, 0xde00, 0xdbff, 0xdc00),
  );
  const text = fc.oneof(
    fc.array(unit, { maxLength: 40 }).map((u) => String.fromCharCode(...u)),
    fc.string({ unit: "binary", maxLength: 300 }),
  );
  fc.assert(
    fc.property(text, text, (a, b) => {
      assert.deepEqual(flowHash(a, b), reference(a, b));
    }),
    { numRuns: 2000 },
  );
  // Lengths around the block and padding boundaries (55/56 bytes), and past the 512-byte scratch.
  for (let n = 0; n < 140; n++) {
    assert.deepEqual(flowHash("fs", "x".repeat(n)), reference("fs", "x".repeat(n)));
  }
  for (const n of [509, 510, 511, 512, 600, 5000]) {
    assert.deepEqual(flowHash("€", "é".repeat(n)), reference("€", "é".repeat(n)));
  }
});
