/**
 * Our framing code, fuzzed: responses of every framing (by length,
 * chunked, to the close, none) with fields that agree, conflict or are
 * invalid, bodies cut short, followed by junk or corrupted, fed to the
 * HTTP/1.1 client's parser (http-parser-js under our framing decisions) in
 * random pieces, must come to what the plain reference model of RFC 9112
 * §6.3 (`_http1_reference.ts`) says, body byte for byte.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { InvalidResponse, type ParsedHead, ResponseParser } from "../../src/deno/_http1_parser.ts";
import {
  chunkSize,
  keepAliveTimeoutMs,
  mayRetry,
  requestFraming,
} from "../../src/deno/_http1_framing.ts";
import { type Outcome, referenceOutcome, type ResponseDescription } from "./_http1_reference.ts";

const bytesOf = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** What the client's parser makes of `wire`, fed in pieces cut at `cuts`. */
function clientOutcome(
  method: string,
  wire: Uint8Array,
  cuts: number[],
  closes: boolean,
): Outcome {
  const parser = new ResponseParser();
  let head: ParsedHead | null = null;
  const body: Uint8Array[] = [];
  parser.start(method, {
    onHead: (h) => head = h,
    onBody: (chunk) => body.push(chunk),
    onEnd: () => {},
  });
  const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
  let after = 0;
  try {
    let from = 0;
    for (const to of [...points, wire.length]) {
      // A copy, scribbled over once fed: the parser must keep nothing of it.
      const piece = wire.slice(from, to);
      from = to;
      if (parser.complete) after += piece.length;
      else {
        parser.feed(piece);
        piece.fill(0xee);
      }
    }
    if (!parser.complete && closes) parser.end();
  } catch (e) {
    if (e instanceof InvalidResponse) return { kind: "error" };
    throw e;
  }
  if (!parser.complete) return { kind: "incomplete" };
  const h = head as ParsedHead | null;
  assert.ok(h !== null);
  let text = "";
  for (const b of concat(body)) text += String.fromCharCode(b);
  return {
    kind: "complete",
    status: h.status,
    body: text,
    reusable: h.persistence.reusable && parser.leftover + after === 0,
  };
}

/** A chunked coding of `body`, cut where `sizes` say, with the odds and ends RFC 9112 §7.1 allows. */
function chunked(body: Uint8Array, sizes: number[], style: ChunkStyle): Uint8Array {
  const parts: Uint8Array[] = [];
  const eol = style.bareLf ? "\n" : "\r\n";
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const part = body.subarray(at, at + Math.max(1, size));
    at += part.length;
    let hex = part.length.toString(16);
    if (style.upper) hex = hex.toUpperCase();
    parts.push(bytesOf(`${style.zeros}${hex}${style.ext}${eol}`), part, bytesOf(eol));
  }
  if (at < body.length) {
    const part = body.subarray(at);
    parts.push(bytesOf(`${part.length.toString(16)}${eol}`), part, bytesOf(eol));
  }
  parts.push(bytesOf(`0${style.ext}${eol}${style.trailers}${eol}`));
  return concat(parts);
}

interface ChunkStyle {
  upper: boolean;
  zeros: string;
  ext: string;
  bareLf: boolean;
  trailers: string;
}

const chunkStyle: fc.Arbitrary<ChunkStyle> = fc.record({
  upper: fc.boolean(),
  zeros: fc.constantFrom("", "", "0", "00"),
  ext: fc.constantFrom("", "", ";a=b", ' ; name="v;x"', ";x"),
  bareLf: fc.boolean(),
  trailers: fc.constantFrom("", "", "X-Sum: 12\r\n", "A: 1\r\nB: 2\r\n"),
});

const contentLengthName = fc.constantFrom("Content-Length", "content-length", "CONTENT-LENGTH");
const codingName = fc.constantFrom("Transfer-Encoding", "transfer-encoding");

/** Fields that may agree with the framing, contradict it, or be invalid. */
const extraField: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(
    contentLengthName,
    fc.oneof(
      fc.nat({ max: 40 }).map(String),
      fc.constantFrom("5, 5", "abc", "", "0x10", "-1", "1e1", " 7 ", "99999999999999999999", "007"),
    ),
  ),
  fc.tuple(
    codingName,
    fc.constantFrom(
      "chunked",
      "Chunked",
      "gzip, chunked",
      "chunked, gzip",
      "identity",
      "",
      "chunked,",
      "chunked, chunked",
    ),
  ),
  fc.tuple(
    fc.constant("Connection"),
    fc.constantFrom("close", "keep-alive", "Close", "upgrade, close", "x-foo"),
  ),
  fc.tuple(fc.constantFrom("X-Other", "Keep-Alive"), fc.constantFrom("1", "timeout=5")),
);

type Framing = "length" | "chunked" | "close";

const description = fc.record({
  method: fc.constantFrom("GET", "GET", "HEAD", "POST") as fc.Arbitrary<"GET" | "HEAD" | "POST">,
  version: fc.constantFrom([1, 1], [1, 1], [1, 1], [1, 0], [2, 0]),
  status: fc.oneof(
    fc.constantFrom(200, 201, 204, 205, 304, 404, 500),
    fc.constantFrom(200, 600, 99, 101),
  ),
  interim: fc.constantFrom(
    "",
    "",
    "HTTP/1.1 100 Continue\r\n\r\n",
    "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n",
  ),
  framing: fc.constantFrom("length", "chunked", "close") as fc.Arbitrary<Framing>,
  body: fc.uint8Array({ maxLength: 300 }),
  sizes: fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 6 }),
  style: chunkStyle,
  extra: fc.oneof(fc.constant([]), fc.constant([]), fc.array(extraField, { maxLength: 2 })),
  mutation: fc.oneof(
    fc.constant({ kind: "none" as const }),
    fc.constant({ kind: "none" as const }),
    fc.record({ kind: fc.constant("cut" as const), at: fc.nat() }),
    fc.record({
      kind: fc.constant("junk" as const),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
    }),
    fc.record({
      kind: fc.constant("flip" as const),
      at: fc.nat(),
      byte: fc.integer({ min: 0, max: 255 }),
    }),
  ),
  closes: fc.boolean(),
  cuts: fc.array(fc.nat(), { maxLength: 5 }),
});

Deno.test("the client's framing agrees with the reference model of RFC 9112 §6.3", () => {
  fc.assert(
    fc.property(description, (d) => {
      const fields: [string, string][] = [];
      let after: Uint8Array;
      if (d.framing === "length") {
        fields.push(["Content-Length", String(d.body.length)]);
        after = d.body;
      } else if (d.framing === "chunked") {
        fields.push(["Transfer-Encoding", "chunked"]);
        after = chunked(d.body, d.sizes, d.style);
      } else {
        after = d.body;
      }
      fields.push(...d.extra);
      const m = d.mutation;
      if (m.kind === "cut") after = after.subarray(0, m.at % (after.length + 1));
      else if (m.kind === "junk") after = concat([after, m.bytes]);
      else if (m.kind === "flip" && after.length > 0) {
        after = after.slice();
        after[m.at % after.length] = m.byte;
      }
      const [major, minor] = d.version as [number, number];
      const status = String(d.status).padStart(3, "0");
      const head = `${d.interim}HTTP/${major}.${minor} ${status} Reason\r\n` +
        fields.map(([n, v]) => `${n}: ${v}\r\n`).join("") + "\r\n";
      const wire = concat([bytesOf(head), after]);
      const described: ResponseDescription = {
        method: d.method,
        major,
        minor,
        status: d.status,
        fields,
        after,
        closes: d.closes,
      };
      assert.deepEqual(
        clientOutcome(d.method, wire, d.cuts, d.closes),
        referenceOutcome(described),
      );
    }),
    { numRuns: 5000, seed: 20261128 },
  );
});

Deno.test("chunkSize reads hexadecimal digits and extensions, nothing looser", () => {
  const cases: [string, number][] = [
    ["5", 5],
    ["0", 0],
    ["1A", 26],
    ["00ff", 255],
    ["5;name=value", 5],
    ["5 ; ext", 5],
    ["5\t;ext", 5],
    ["-5", -1],
    ["+5", -1],
    ["0x10", -1],
    [" 5", -1],
    ["zz", -1],
    ["", -1],
    ["5 x", -1],
    ["5;a\rb", -1],
    ["fffffffffffffff", -1],
  ];
  for (const [line, size] of cases) assert.equal(chunkSize(line), size, JSON.stringify(line));
  fc.assert(
    fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.boolean(), (n, upper) => {
      const hex = upper ? n.toString(16).toUpperCase() : n.toString(16);
      assert.equal(chunkSize(hex), n);
    }),
  );
});

Deno.test("request framing, retries and the keep-alive hint follow their rules", () => {
  assert.equal(requestFraming("GET", false, null), "none");
  assert.equal(requestFraming("POST", false, null), "empty");
  assert.equal(requestFraming("PATCH", false, null), "empty");
  assert.equal(requestFraming("PUT", true, "10"), "length");
  assert.equal(requestFraming("POST", true, null), "chunked");
  // Not written: nothing reached the upstream, whatever the method.
  assert.equal(mayRetry("POST", false, true), true);
  assert.equal(mayRetry("GET", true, false), true);
  assert.equal(mayRetry("DELETE", true, false), true);
  assert.equal(mayRetry("PUT", true, true), false, "a streamed body cannot be sent again");
  assert.equal(mayRetry("POST", true, false), false);
  assert.equal(mayRetry("PATCH", true, false), false);
  assert.equal(keepAliveTimeoutMs("timeout=5, max=100"), 5000);
  assert.equal(keepAliveTimeoutMs("max=100,Timeout=2"), 2000);
  assert.equal(keepAliveTimeoutMs("timeout=x"), null);
  assert.equal(keepAliveTimeoutMs("max=3"), null);
});
