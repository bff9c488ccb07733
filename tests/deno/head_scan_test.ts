/**
 * The parsers' fast path for a plain head received whole
 * (`src/deno/_head_scan.ts`): what it reads and what it leaves to the line
 * steps, and, for both parsers, a property: a head fed whole (the fast
 * path wherever it applies) reads as it does fed byte by byte (the line
 * steps only), or is refused alike.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { scanHead } from "../../src/deno/_head_scan.ts";
import { InvalidResponse, type ParsedHead, ResponseParser } from "../../src/deno/_http1_parser.ts";
import { RequestParser, RequestRefused } from "../../src/deno/_http1_request_parser.ts";

const bytesOf = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** scanHead over all of `text`; the fields it pushed with its result. */
function scan(text: string, budget = 1 << 16, firstLimit = 1 << 16) {
  const fields: string[] = [];
  const bytes = bytesOf(text);
  const head = scanHead(bytes, 0, bytes.length, budget, firstLimit, fields);
  return head === null ? (assert.deepEqual(fields, []), null) : { ...head, fields };
}

Deno.test("scanHead reads a plain head whole: the first line, fields trimmed, where it ended", () => {
  const text = "HTTP/1.1 200 OK\r\nServer: nginx\r\nX-A:  a b \t\r\nEmpty:\r\nLf: bare\n\r\nhello";
  assert.deepEqual(scan(text), {
    first: "HTTP/1.1 200 OK",
    next: text.indexOf("hello"),
    fields: ["Server", "nginx", "X-A", "a b", "Empty", "", "Lf", "bare"],
  });
  assert.deepEqual(scan("GET / HTTP/1.1\n\nrest"), {
    first: "GET / HTTP/1.1",
    next: 16,
    fields: [],
  });
});

Deno.test("scanHead leaves to the line steps what is not plain or not all there", () => {
  const plain = "HTTP/1.1 200 OK\r\nA: b\r\n\r\n";
  assert.ok(scan(plain) !== null);
  for (
    const text of [
      "HTTP/1.1 200 OK\r\nA: b\r\n", // not ended yet
      "HTTP/1.1 200 OK\r\nA: b\r\n\r", // the last LF not there yet
      "\r\nHTTP/1.1 200 OK\r\nA: b\r\n\r\n", // an empty line first
      "\nHTTP/1.1 200 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", // a bare CR
      "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", // obs-fold
      "HTTP/1.1 200 OK\r\nA b: c\r\n\r\n", // a space in the name
      "HTTP/1.1 200 OK\r\nA(b): c\r\n\r\n", // a name that is no token
      "HTTP/1.1 200 OK\r\n: c\r\n\r\n", // no name
      "HTTP/1.1 200 OK\r\nA\r\n\r\n", // no colon
      "HTTP/1.1 200 OK\r\nA: caf\xe9\r\n\r\n", // obs-text
      "HTTP/1.1 200 OK\r\nA: \x01\r\n\r\n", // a control
      "HTTP/1.1 200 OK\r\nA: \x00\r\n\r\n",
      "HTTP/1.1 200 OK\r\nA: \x7f\r\n\r\n", // DEL
      "HTTP/1.1 200 \xff\r\n\r\n",
    ]
  ) {
    assert.equal(scan(text), null, JSON.stringify(text));
  }
  // Over the budget (the empty line counts), or a first line over its own limit.
  assert.equal(scan(plain, plain.length - 1), null);
  assert.ok(scan(plain, plain.length) !== null);
  assert.equal(scan(plain, 1 << 16, 14), null);
  assert.ok(scan(plain, 1 << 16, 15) !== null);
  // More fields than the fast path holds.
  assert.equal(scan(`HTTP/1.1 200 OK\r\n${"A: b\r\n".repeat(257)}\r\n`), null);
  assert.equal(scan(`HTTP/1.1 200 OK\r\n${"A: b\r\n".repeat(256)}\r\n`)!.fields.length, 512);
});

/**
 * Header lines: mostly fields (a name, a colon, a value of bits), each
 * part now and then one the fast path leaves to the line steps (a space or
 * a non-token in the name, a control, obs-text, a bare CR in the value, an
 * obs-fold line, a line that is no field), ended by CRLF or a bare LF.
 */
const rare = (common: string[], odd: string[]) =>
  fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...common) }, {
    weight: 1,
    arbitrary: fc.constantFrom(...odd),
  });
const name = rare(["A", "x-y", "Content-Length", "Connection", "Set-Cookie"], ["b c", "A(", ""]);
const colon = rare([":", ": ", ":\t"], [" :", "\t:"]);
const valueBit = rare(["a", "b c", " ", "\t", ",", "5", "close", "x-y"], [
  "\xe9",
  "\x00",
  "\x01",
  "\r",
  "\x7f",
]);
const line = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(name, colon, fc.array(valueBit, { maxLength: 4 })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(" a", "\tb", "no field"), fc.constant(""), fc.constant([])),
  },
).map(([n, c, v]) => `${n}${c}${v.join("")}`);
const lineEnd = rare(["\r\n", "\r\n", "\n"], ["\r\n\r\n"]);
const fieldLines = fc.array(fc.tuple(line, lineEnd), { maxLength: 6 }).map((lines) =>
  lines.map(([l, e]) => l + e).join("")
);

/** Everything a parse came to, or the error it threw. */
function outcomeOf(run: () => unknown): unknown {
  try {
    return run();
  } catch (e) {
    if (e instanceof InvalidResponse || e instanceof RequestRefused) {
      return { error: e.message, status: (e as { status?: number }).status };
    }
    throw e;
  }
}

function pieces(bytes: Uint8Array, byteByByte: boolean): Uint8Array[] {
  return byteByByte ? Array.from(bytes, (_, i) => bytes.slice(i, i + 1)) : [bytes];
}

function responseOutcome(text: string, byteByByte: boolean, method = "GET"): unknown {
  return outcomeOf(() => {
    const parser = new ResponseParser();
    let head: unknown = null;
    let body = "";
    parser.start(method, {
      // Whether the fast path read it is compared apart (plainHeads).
      onHead: (h) => head = { ...h, plain: undefined },
      onBody: (chunk) => body += String.fromCharCode(...chunk),
      onEnd: () => {},
    });
    let leftover = 0;
    for (const p of pieces(bytesOf(text), byteByByte)) {
      // Byte by byte, what follows the end is never fed: counted here as the parser counts it.
      if (parser.complete) leftover += p.length;
      else parser.feed(p);
    }
    return { head, body, complete: parser.complete, leftover: leftover + parser.leftover };
  });
}

function requestOutcome(text: string, byteByByte: boolean): unknown {
  return outcomeOf(() => {
    const parser = new RequestParser();
    let head: unknown = null;
    let body = "";
    parser.start({
      onHead: (h) => head = h,
      onBody: (chunk) => body += String.fromCharCode(...chunk),
      onEnd: () => {},
    });
    let used = 0;
    for (const p of pieces(bytesOf(text), byteByByte)) {
      if (parser.complete) break;
      used += parser.feed(p);
    }
    return { head, body, complete: parser.complete, used };
  });
}

Deno.test("a response head reads the same whole (fast path) and byte by byte (line steps)", () => {
  const statusLine = fc.constantFrom(
    "HTTP/1.1 200 OK",
    "HTTP/1.0 404 Not Found",
    "HTTP/1.1 204",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK",
    "HTTP/1.1 2000 x",
    "HTTP/2.0 200 OK",
    "HTTP/1.1 200 caf\xe9",
  );
  const framing = fc.constantFrom("Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n", "");
  const after = fc.constantFrom(
    "\r\nhello",
    "\r\n5\r\nhello\r\n0\r\n\r\n",
    "\r\n",
    "\nhello",
    "\r\nhel",
    "\r\nhello, and more",
  );
  const method = fc.constantFrom("GET", "HEAD");
  fc.assert(
    fc.property(
      statusLine,
      fieldLines,
      framing,
      after,
      method,
      (status, fields, frame, rest, m) => {
        const text = `${status}\r\n${fields}${frame}${rest}`;
        assert.deepEqual(
          responseOutcome(text, false, m),
          responseOutcome(text, true, m),
          JSON.stringify([m, text]),
        );
      },
    ),
    { numRuns: 3000, seed: 20261129 },
  );
});

Deno.test("a request head reads the same whole (fast path) and byte by byte (line steps)", () => {
  const requestLine = fc.constantFrom(
    "GET / HTTP/1.1",
    "POST /a?b=c HTTP/1.0",
    "get http://h/p HTTP/1.1",
    "GET  / HTTP/1.1",
    "GET / HTTP/2.0",
    "G(T / HTTP/1.1",
    "GET /caf\xe9 HTTP/1.1",
  );
  const host = fc.constantFrom("Host: h\r\n", "");
  const framing = fc.constantFrom("Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n", "");
  const after = fc.constantFrom(
    "\r\nhello",
    "\r\n5\r\nhello\r\n0\r\n\r\n",
    "\r\n",
    "\nGET / HTTP/1.1\r\n",
  );
  fc.assert(
    fc.property(requestLine, host, fieldLines, framing, after, (line, h, fields, frame, rest) => {
      const text = `${line}\r\n${h}${fields}${frame}${rest}`;
      assert.deepEqual(
        requestOutcome(text, false),
        requestOutcome(text, true),
        JSON.stringify(text),
      );
    }),
    { numRuns: 3000, seed: 20261129 },
  );
});

Deno.test("a response head is plain only when the fast path read it: its fields a token and visible ASCII", () => {
  const headOf = (text: string, byteByByte = false) => {
    const parser = new ResponseParser();
    let head: ParsedHead | null = null;
    parser.start("GET", { onHead: (h) => head = h, onBody() {}, onEnd() {} });
    for (const p of pieces(bytesOf(text), byteByByte)) if (!parser.complete) parser.feed(p);
    return head as ParsedHead | null;
  };
  const plain = "HTTP/1.1 200 OK\r\nA: b\r\nContent-Length: 0\r\n\r\n";
  assert.equal(headOf(plain)!.plain, true);
  assert.equal(headOf(plain, true)!.plain, false);
  assert.equal(headOf("HTTP/1.1 200 OK\r\nA: caf\xe9\r\nContent-Length: 0\r\n\r\n")!.plain, false);
  assert.equal(headOf("HTTP/1.1 200 OK\r\nA: \x00\r\nContent-Length: 0\r\n\r\n")!.plain, false);
  // An interim response read whole, then a final one that is not plain.
  const interim =
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nA: \x01\r\nContent-Length: 0\r\n\r\n";
  assert.equal(headOf(interim)!.plain, false);
  const statusLine = fc.constantFrom(
    "HTTP/1.1 200 OK",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204",
  );
  fc.assert(
    fc.property(statusLine, fieldLines, (status, fields) => {
      let head: ParsedHead | null = null;
      try {
        head = headOf(`${status}\r\n${fields}Content-Length: 0\r\n\r\n`);
      } catch (e) {
        if (!(e instanceof InvalidResponse)) throw e;
      }
      if (head === null || !head.plain) return;
      for (let i = 0; i < head.headers.length; i += 2) {
        assert.match(head.headers[i]!, /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);
        assert.match(head.headers[i + 1]!, /^[\x20-\x7e\t]*$/);
      }
    }),
    { numRuns: 2000, seed: 20261130 },
  );
});
