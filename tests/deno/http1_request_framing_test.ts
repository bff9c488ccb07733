/**
 * The server's decisions about a request head
 * (`src/deno/_http1_request_framing.ts`): unit vectors for each rule, and
 * `requestBodyFraming` fuzzed against a plain reference model of RFC 9112
 * §6.1 and §6.3 written below, which shares no code with it.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  elementsOf,
  type RequestBodyFraming,
  requestBodyFraming,
  requestHead,
  RequestRefused,
  requestTarget,
} from "../../src/deno/_http1_request_framing.ts";

/** What the framing of a request comes to: a framing, or the status it is refused with. */
type Decision = RequestBodyFraming | { refused: number };

function decide(minor: 0 | 1, fields: string[]): Decision {
  try {
    return requestBodyFraming(minor, fields);
  } catch (e) {
    if (e instanceof RequestRefused) return { refused: e.status };
    throw e;
  }
}

/**
 * The reference model, written plainly from RFC 9112 §6.1 (Transfer-Encoding),
 * §6.3 items 3 to 7 (message body length, for requests) and RFC 9110 §5.6.1
 * (lists), §8.6 (Content-Length).
 */
function referenceFraming(minor: 0 | 1, fields: [string, string][]): Decision {
  const valuesOf = (name: string) =>
    fields.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  // List elements, trimmed of OWS (SP and HTAB only), empty ones dropped.
  const elementsOfValues = (values: string[]) =>
    values.flatMap((v) => v.split(",")).map((e) => e.replace(/^[ \t]+|[ \t]+$/g, ""))
      .filter((e) => e !== "");
  const codingFields = valuesOf("transfer-encoding");
  const lengthFields = valuesOf("content-length");
  if (codingFields.length > 0) {
    if (minor === 0) return { refused: 400 };
    if (lengthFields.length > 0) return { refused: 400 };
    const codings = elementsOfValues(codingFields).map((c) => c.toLowerCase());
    if (codings.at(-1) !== "chunked") return { refused: 400 };
    if (codings.slice(0, -1).includes("chunked")) return { refused: 400 };
    if (codings.length > 1) return { refused: 501 };
    return { kind: "chunked" };
  }
  if (lengthFields.length === 0) return { kind: "none" };
  const lengths = elementsOfValues(lengthFields);
  if (lengths.length === 0) return { refused: 400 };
  for (const l of lengths) {
    for (const c of l) if (c < "0" || c > "9") return { refused: 400 };
  }
  const values = new Set(lengths.map((l) => BigInt(l)));
  if (values.size !== 1) return { refused: 400 };
  const [value] = values;
  if (value! > BigInt(Number.MAX_SAFE_INTEGER)) return { refused: 400 };
  return { kind: "length", length: Number(value) };
}

const flat = (fields: [string, string][]) => fields.flat();

Deno.test("requestBodyFraming: Transfer-Encoding", () => {
  const cases: [0 | 1, [string, string][], Decision][] = [
    [1, [["Transfer-Encoding", "chunked"]], { kind: "chunked" }],
    [1, [["transfer-encoding", "Chunked"]], { kind: "chunked" }],
    [1, [["Transfer-Encoding", " ,chunked, "]], { kind: "chunked" }],
    // RFC 9112 §6.1: faulty framing in HTTP/1.0.
    [0, [["Transfer-Encoding", "chunked"]], { refused: 400 }],
    // RFC 9112 §6.3 item 3: both is the shape of request smuggling.
    [1, [["Transfer-Encoding", "chunked"], ["Content-Length", "5"]], { refused: 400 }],
    [1, [["Content-Length", "0"], ["Transfer-Encoding", "chunked"]], { refused: 400 }],
    // RFC 9112 §6.3 item 4: chunked not final, in a request: MUST 400.
    [1, [["Transfer-Encoding", "gzip"]], { refused: 400 }],
    [1, [["Transfer-Encoding", "chunked, gzip"]], { refused: 400 }],
    [1, [["Transfer-Encoding", ""]], { refused: 400 }],
    [1, [["Transfer-Encoding", "chunked\xa0"]], { refused: 400 }],
    [1, [["Transfer-Encoding", "chunked;q=1"]], { refused: 400 }],
    // RFC 9112 §6.1: chunked applied twice.
    [1, [["Transfer-Encoding", "chunked, chunked"]], { refused: 400 }],
    [1, [["Transfer-Encoding", "chunked"], ["Transfer-Encoding", "chunked"]], { refused: 400 }],
    // RFC 9112 §6.1: a coding we do not implement, before chunked: 501.
    [1, [["Transfer-Encoding", "gzip, chunked"]], { refused: 501 }],
    [1, [["Transfer-Encoding", "gzip"], ["Transfer-Encoding", "chunked"]], { refused: 501 }],
    [1, [["Transfer-Encoding", "identity, chunked"]], { refused: 501 }],
  ];
  for (const [minor, fields, decision] of cases) {
    assert.deepEqual(decide(minor, flat(fields)), decision, JSON.stringify(fields));
  }
});

Deno.test("requestBodyFraming: Content-Length, or neither", () => {
  const cases: [[string, string][], Decision][] = [
    [[], { kind: "none" }],
    [[["Host", "a"], ["X-Content-Length", "5"]], { kind: "none" }],
    [[["Content-Length", "5"]], { kind: "length", length: 5 }],
    [[["content-length", "0"]], { kind: "length", length: 0 }],
    [[["Content-Length", "007"]], { kind: "length", length: 7 }],
    [[["Content-Length", "5, 5"]], { kind: "length", length: 5 }],
    [[["Content-Length", "5"], ["Content-Length", "5,,05"]], { kind: "length", length: 5 }],
    [[["Content-Length", "9007199254740991"]], { kind: "length", length: 9007199254740991 }],
    [[["Content-Length", "9007199254740992"]], { refused: 400 }],
    [[["Content-Length", "99999999999999999999999"]], { refused: 400 }],
    [[["Content-Length", "5, 6"]], { refused: 400 }],
    [[["Content-Length", "5"], ["Content-Length", "6"]], { refused: 400 }],
    [[["Content-Length", ""]], { refused: 400 }],
    [[["Content-Length", " , "]], { refused: 400 }],
    [[["Content-Length", "+5"]], { refused: 400 }],
    [[["Content-Length", "-1"]], { refused: 400 }],
    [[["Content-Length", "0x5"]], { refused: 400 }],
    [[["Content-Length", "5.0"]], { refused: 400 }],
    [[["Content-Length", "1e3"]], { refused: 400 }],
    [[["Content-Length", "5\xa0"]], { refused: 400 }],
    [[["Content-Length", "5 5"]], { refused: 400 }],
  ];
  for (const [fields, decision] of cases) {
    for (const minor of [0, 1] as const) {
      assert.deepEqual(decide(minor, flat(fields)), decision, JSON.stringify(fields));
    }
  }
  assert.throws(
    () => requestBodyFraming(1, ["Content-Length", "5", "Content-Length", "6"]),
    (e) => e instanceof RequestRefused && e.status === 400 && /"5, 6"/.test(e.message),
  );
});

Deno.test("elementsOf splits on commas and trims OWS only", () => {
  assert.deepEqual(elementsOf("a, b ,\tc,,  ,d"), ["a", "b", "c", "d"]);
  assert.deepEqual(elementsOf(""), []);
  assert.deepEqual(elementsOf(" , "), []);
  assert.deepEqual(elementsOf("\xa0a\xa0"), ["\xa0a\xa0"]);
  assert.deepEqual(elementsOf("one"), ["one"]);
});

Deno.test("requestTarget: origin-form, absolute-form; nothing else (asterisk-form refused, as nginx does)", () => {
  assert.deepEqual(requestTarget("/a?b"), { path: "/a?b", authority: null });
  assert.deepEqual(requestTarget("http://h:1/a?b"), { path: "/a?b", authority: "h:1" });
  assert.deepEqual(requestTarget("https://h"), { path: "/", authority: "h" });
  assert.deepEqual(requestTarget("http://h?x"), { path: "/?x", authority: "h" });
  for (
    const target of [
      "",
      "*",
      "h:443",
      "a/b",
      "http://",
      "http://u@h/",
      "mailto://h/",
      "/a#b",
      "/\xe9",
      "/ ",
    ]
  ) {
    assert.throws(() => requestTarget(target), { status: 400 }, target);
  }
});

Deno.test("requestHead: Host, persistence, expectation", () => {
  const head = requestHead("POST", "/", 1, [
    "Host",
    "a",
    "Content-Length",
    "2",
    "Expect",
    "100-continue",
  ]);
  assert.deepEqual(head, {
    method: "POST",
    target: "/",
    versionMinor: 1,
    fields: ["Host", "a", "Content-Length", "2", "Expect", "100-continue"],
    framing: { kind: "length", length: 2 },
    keepAlive: true,
    expectContinue: true,
    host: "a",
  });
  assert.throws(() => requestHead("GET", "/", 1, []), { status: 400, message: /no Host/ });
  assert.throws(() => requestHead("GET", "/", 0, ["Host", "a", "host", "a"]), {
    status: 400,
    message: /more than one Host/,
  });
  // RFC 9112 §3.2.2: the absolute-form's authority stands for Host, which must still be there.
  assert.equal(requestHead("GET", "http://b/", 1, ["Host", "a"]).host, "b");
  assert.throws(() => requestHead("GET", "http://b/", 1, []), { status: 400 });
  assert.equal(requestHead("GET", "/", 0, []).host, null);
  // Expectations other than 100-continue are ignored; so is any on HTTP/1.0.
  const expect = (minor: 0 | 1, value: string) =>
    requestHead("PUT", "/", minor, ["Host", "a", "Content-Length", "1", "Expect", value])
      .expectContinue;
  assert.equal(expect(1, "100-CONTINUE"), true);
  assert.equal(expect(1, "x, 100-continue"), true);
  assert.equal(expect(1, "200-ok"), false);
  assert.equal(expect(0, "100-continue"), false);
  // The framing is decided there too.
  assert.throws(
    () => requestHead("PUT", "/", 1, ["Host", "a", "Transfer-Encoding", "gzip, chunked"]),
    {
      status: 501,
    },
  );
});

const lengthName = fc.constantFrom("Content-Length", "content-length", "CONTENT-LENGTH");
const codingName = fc.constantFrom("Transfer-Encoding", "transfer-encoding", "TRANSFER-ENCODING");
/** A list value of `atoms` (RFC 9110 §5.6.1), with the separators and padding a client may send. */
const listOf = (atoms: fc.Arbitrary<string>) =>
  fc.tuple(
    fc.array(atoms, { minLength: 1, maxLength: 3 }),
    fc.constantFrom(",", ", ", " , ", ",\t", ",,"),
    fc.constantFrom("", "", " ", "\t", "\xa0"),
  ).map(([elements, separator, pad]) => pad + elements.join(separator) + pad);
const lengthValue = listOf(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("5", "5", "05", "6", "0") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "9007199254740991",
        "9007199254740992",
        "99999999999999999999",
        "+1",
        "-1",
        "0x5",
        "1.0",
        "5 5",
        "",
      ),
    },
  ),
);
const codingValue = listOf(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("chunked", "chunked", "Chunked", "gzip") },
    { weight: 1, arbitrary: fc.constantFrom("identity", "chunked;q=1", "5", "") },
  ),
);
/** Either list, or pieces of anything joined at random. */
const anyValue = fc.array(
  fc.constantFrom("5", "0", "chunked", "gzip", ",", " ", "\t", "\xa0", "-", "x"),
  { maxLength: 5 },
).map((pieces) => pieces.join(""));
const field: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(lengthName, lengthValue) },
  { weight: 3, arbitrary: fc.tuple(codingName, codingValue) },
  { weight: 1, arbitrary: fc.tuple(fc.oneof(lengthName, codingName), anyValue) },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constantFrom("Host", "X-Other", "Content-Lengths", "Transfer-Encodings"),
      fc.oneof(lengthValue, codingValue),
    ),
  },
);
const fieldsArb = fc.array(field, { maxLength: 3 });

Deno.test("requestBodyFraming agrees with the reference model of RFC 9112 §6.3", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(0, 1, 1) as fc.Arbitrary<0 | 1>,
      fieldsArb,
      (minor, fields) => {
        assert.deepEqual(decide(minor, flat(fields)), referenceFraming(minor, fields));
      },
    ),
    { numRuns: 20_000, seed: 20261201 },
  );
});
