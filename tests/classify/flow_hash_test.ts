import assert from "node:assert/strict";
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
  for (
    const bad of [
      "18446744073709551616",
      "-1",
      "01",
      "1.5",
      "",
      { hi: -1, lo: 0 },
      { hi: 1 },
      2 ** 53,
      -3,
      null,
      -1n,
    ]
  ) {
    assert.throws(() => parseFlowHash(bad), /^RangeError: Cannot read a flow hash: expected/);
  }
  assert.throws(() => parseFlowHash("x"), /got "x"$/);
  assert.throws(() => parseFlowHash(-1n), /got -1n$/);
});
