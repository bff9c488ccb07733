import assert from "node:assert/strict";
import {
  encodeFrame,
  encodeTextFrame,
  MaskSource,
  OP_PING,
  OP_TEXT,
} from "../../src/deno/_websocket_frames.ts";

/** The header fields, key and unmasked payload of a client frame (RFC 6455 §5.2). */
function parse(frame: Uint8Array) {
  let n = frame[1]! & 127, at = 2;
  if (n === 126) [n, at] = [(frame[2]! << 8) | frame[3]!, 4];
  else if (n === 127) {
    [n, at] = [Number(new DataView(frame.buffer, frame.byteOffset).getBigUint64(2)), 10];
  }
  const key = frame.slice(at, at + 4);
  const payload = frame.slice(at + 4).map((b, i) => b ^ key[i & 3]!);
  assert.equal(payload.length, n, "the length in the header");
  return { fin: frame[0]! >> 7, opcode: frame[0]! & 15, masked: frame[1]! >> 7, key, payload };
}

Deno.test("frames: every length form, masked word-wise and byte-wise, unmasks to the payload", () => {
  const masks = new MaskSource();
  const keys = new Set<string>();
  for (const n of [0, 1, 3, 4, 5, 7, 125, 126, 127, 1021, 65_535, 65_536, 70_001]) {
    const text = Array.from({ length: n }, (_, i) => String.fromCharCode(32 + (i * 7) % 95)).join(
      "",
    );
    const bytes = new TextEncoder().encode(text);
    for (const frame of [encodeTextFrame(text, masks), encodeFrame(OP_TEXT, bytes, masks)]) {
      const f = parse(frame);
      assert.deepEqual([f.fin, f.opcode, f.masked], [1, OP_TEXT, 1]);
      assert.deepEqual(f.payload, bytes, `length ${n}`);
      keys.add(f.key.join());
    }
    const ping = parse(encodeFrame(OP_PING, bytes.subarray(0, 125), masks));
    assert.deepEqual([ping.opcode, ping.payload], [OP_PING, bytes.subarray(0, 125)]);
  }
  assert.ok(keys.size > 20, "a fresh key per frame");
});

Deno.test("frames: non-ASCII text is encoded as UTF-8", () => {
  const masks = new MaskSource();
  for (
    const text of [
      "é",
      "naïve ünïcode",
      "日本語のテキスト",
      "emoji 🎉 at the end 🎉",
      "x".repeat(200) + "€",
    ]
  ) {
    assert.deepEqual(parse(encodeTextFrame(text, masks)).payload, new TextEncoder().encode(text));
  }
});
