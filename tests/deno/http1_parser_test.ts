/**
 * The HTTP/1.1 client's response parser: `http-parser-js` with the steps
 * we replace (`src/deno/_http1_parser.ts`). What the framing fuzz does not
 * reach: the parser's internals we rely on, size limits, header lines it
 * would skip, Latin-1 values, interim responses and what follows a response.
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import { HTTPParser } from "http-parser-js";
import {
  HEAD_LIMIT,
  InvalidResponse,
  type ParsedHead,
  ResponseParser,
} from "../../src/deno/_http1_parser.ts";

const bytesOf = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** Parses `text` (in one piece, or byte by byte); the head, body and whether it ended. */
function parse(text: string, options: { method?: string; byteByByte?: boolean } = {}) {
  const parser = new ResponseParser();
  let head: ParsedHead | null = null;
  let body = "";
  parser.start(options.method ?? "GET", {
    onHead: (h) => head = h,
    onBody: (chunk) => body += String.fromCharCode(...chunk),
    onEnd: () => {},
  });
  const bytes = bytesOf(text);
  if (options.byteByByte) {
    for (let i = 0; i < bytes.length && !parser.complete; i++) {
      parser.feed(bytes.subarray(i, i + 1));
    }
  } else {
    parser.feed(bytes);
  }
  return {
    head: head as ParsedHead | null,
    body,
    complete: parser.complete,
    leftover: parser.leftover,
  };
}

Deno.test("the parser's steps we replace or call are still http-parser-js's own", () => {
  const proto = HTTPParser.prototype as unknown as Record<string, unknown>;
  for (
    const name of [
      "consumeLine",
      "parseHeader",
      "RESPONSE_LINE",
      "HEADER",
      "BODY_CHUNKHEAD",
      "BODY_CHUNKTRAILERS",
      "BODY_CHUNKEMPTYLINE",
      "BODY_SIZED",
      "BODY_CHUNK",
      "nextRequest",
      "reinitialize",
      "execute",
      "finish",
    ]
  ) {
    assert.equal(typeof proto[name], "function", name);
  }
  // The state names our replacements set and test.
  const source = String(proto.HEADER) + String(proto.BODY_CHUNK) + String(proto.BODY_SIZED) +
    String(proto.nextRequest);
  // What our `BODY_SIZED`, `BODY_CHUNK` and `nextRequest` do in their place, without a closure.
  for (const part of ["kOnBody", "kOnMessageComplete", "this.reinitialize(this.type)"]) {
    assert.ok(source.includes(part), part);
  }
  for (const state of ["BODY_CHUNKHEAD", "BODY_CHUNKEMPTYLINE", "BODY_SIZED", "BODY_RAW"]) {
    assert.ok(source.includes(`'${state}'`), state);
  }
});

Deno.test("a response parses the same in one piece and byte by byte", () => {
  const text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: dropped\r\n\r\n";
  for (const byteByByte of [false, true]) {
    const { head, body, complete, leftover } = parse(text, { byteByByte });
    assert.equal(head?.status, 200);
    assert.equal(head?.statusText, "OK");
    assert.deepEqual(head?.headers, ["Content-Type", "text/plain", "Transfer-Encoding", "chunked"]);
    assert.equal(body, "hello world");
    assert.equal(complete, true);
    assert.equal(leftover, 0);
  }
});

Deno.test("interim responses are skipped; bytes after the response are counted, not parsed", () => {
  const { head, body, leftover } = parse(
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 500 Nope\r\n\r\n",
  );
  assert.equal(head?.status, 200);
  assert.equal(body, "ok");
  assert.equal(leftover, "HTTP/1.1 500 Nope\r\n\r\n".length);
});

Deno.test("field values keep their Latin-1 bytes; folded lines become one value", () => {
  const { head } = parse(
    "HTTP/1.1 200 OK\r\nX-Name: caf\xe9 \x80\xff\r\nX-Folded: one\r\n  two\r\nContent-Length: 0\r\n\r\n",
  );
  assert.deepEqual(head?.headers, [
    "X-Name",
    "caf\xe9 \x80\xff",
    "X-Folded",
    "one two",
    "Content-Length",
    "0",
  ]);
  assert.doesNotThrow(() => new Headers([[head!.headers[0]!, head!.headers[1]!]]));
});

Deno.test("header lines the parser would skip are refused", () => {
  for (
    const text of [
      "HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello",
      "HTTP/1.1 200 OK\r\n folded first\r\n\r\n",
      "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
    ]
  ) {
    assert.throws(() => parse(text), InvalidResponse, JSON.stringify(text));
  }
});

Deno.test("a head over 64 KiB, a chunk-size line over 4 KiB, a trailer section over 64 KiB are refused", () => {
  const big = "x".repeat(HEAD_LIMIT);
  for (const byteByByte of [false, true]) {
    assert.throws(
      () => parse(`HTTP/1.1 200 OK\r\nX-Big: ${big}\r\n\r\n`, { byteByByte }),
      /header or trailer section longer than 65536 bytes/,
    );
  }
  // A line that never ends is cut off as well: the parser does not gather it forever.
  assert.throws(() => parse(`HTTP/1.1 200 OK\r\nX-Big: ${big}${big}`), /longer than 65536/);
  assert.throws(
    () => parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;${"e".repeat(5000)}\r\n`),
    /chunk-size line longer than 4096 bytes/,
  );
  assert.throws(
    () =>
      parse(
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: ${big}\r\n\r\n`,
      ),
    /header or trailer section longer than 65536 bytes/,
  );
  // Just under the limit passes.
  const fits = `HTTP/1.1 200 OK\r\nX: ${"y".repeat(HEAD_LIMIT - 100)}\r\nContent-Length: 0\r\n\r\n`;
  assert.equal(parse(fits).complete, true);
});

Deno.test("refused framings say why", () => {
  const cases: [string, RegExp][] = [
    ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", /101 Switching Protocols/],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      /Transfer-Encoding "gzip, chunked"/,
    ],
    ["HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", /both/],
    ["HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", /HTTP\/1\.0/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\n", /Content-Length "1, 1"/],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n",
      /invalid chunk-size line "0x5"/,
    ],
    ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", /invalid chunk-size line "-1"/],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
      /invalid upstream response: unparsable: Expected empty line/,
    ],
  ];
  for (const [text, reason] of cases) assert.throws(() => parse(text), reason, text);
});

Deno.test("the end of the connection ends a close-delimited body, and only that", () => {
  const parser = new ResponseParser();
  let body = "";
  parser.start("GET", {
    onHead() {},
    onBody: (c) => body += String.fromCharCode(...c),
    onEnd() {},
  });
  parser.feed(bytesOf("HTTP/1.0 200 OK\r\n\r\nall of "));
  parser.feed(bytesOf("it"));
  assert.equal(parser.complete, false);
  parser.end();
  assert.equal(parser.complete, true);
  assert.equal(body, "all of it");

  parser.start("GET", { onHead() {}, onBody() {}, onEnd() {} });
  parser.feed(bytesOf("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"));
  assert.throws(() => parser.end(), /the connection closed before the response ended/);
  parser.start("GET", { onHead() {}, onBody() {}, onEnd() {} });
  assert.throws(() => parser.end(), /the connection closed before the response ended/);
});

interface TheirHead {
  versionMajor: number;
  versionMinor: number;
  statusCode: number;
  statusMessage: string;
  headers: string[];
}

/** What the parser itself (none of our steps) makes of a response head, or `null` if it fails. */
function parserHead(text: string): TheirHead | null {
  const p = new HTTPParser(HTTPParser.RESPONSE) as unknown as {
    execute(chunk: Buffer): number | Error;
    [key: number]: unknown;
  };
  const seen: TheirHead[] = [];
  p[HTTPParser.kOnHeadersComplete] = (info: TheirHead) => {
    seen.push(info);
  };
  const result = p.execute(Buffer.from(text, "latin1"));
  return result instanceof Error ? null : seen[0] ?? null;
}

Deno.test("status and header lines: ours read what the parser's own steps read, or refuse what they would skip", () => {
  const statusLine = fc.oneof(
    fc.constantFrom("HTTP/1.1 200 OK", "HTTP/1.0 404 Not Found", "HTTP/1.1 204", "HTTP/1.1 200 "),
    fc.stringMatching(/^HTTP\/[0-9x]\.[0-9] ?[0-9x]{2,4}( [ -~\t]{0,6})?$/),
  );
  const field = fc.oneof(
    fc.stringMatching(/^[A-Za-z-]{1,6}:[ \t]{0,2}[ -~]{0,6}[ \t]{0,2}$/),
    fc.stringMatching(/^[ \t]{1,2}[ -~]{0,6}$/), // an obs-fold line
    fc.stringMatching(/^[A-Za-z :\t-]{1,8}$/), // perhaps no field
    fc.stringMatching(/^[A-Za-z]{1,3}:[a-z\r]{0,3}$/), // a CR in the value
  );
  fc.assert(
    fc.property(statusLine, fc.array(field, { maxLength: 4 }), (status, fields) => {
      const text = `${status}\r\n${
        fields.map((f) => `${f}\r\n`).join("")
      }Content-Length: 0\r\n\r\n`;
      const theirs = parserHead(text);
      let ours: ParsedHead | null = null;
      try {
        ours = parse(text).head;
      } catch (e) {
        if (!(e instanceof InvalidResponse)) throw e;
      }
      if (ours !== null) {
        // What we accept, the parser reads alike.
        assert.ok(theirs !== null, text);
        assert.equal(ours.status, theirs.statusCode);
        assert.equal(ours.statusText, theirs.statusMessage);
        assert.deepEqual(ours.headers, theirs.headers, JSON.stringify(text));
        return;
      }
      // What we refuse, the parser refuses, or reads only by skipping a line or misreading a
      // status code: a field line that is none (or holds a CR), a fold before any field, a
      // fourth digit, a version other than 1 (the framing's refusal).
      const skipped = theirs === null ||
        theirs.headers.length / 2 !== fields.filter((f) => !/^[ \t]/.test(f)).length + 1 ||
        /^[ \t]/.test(fields[0] ?? "x") || fields.some((f) => f.includes("\r")) ||
        (status.length > 12 && status[12] !== " ") || theirs.versionMajor !== 1;
      assert.ok(skipped, JSON.stringify(text));
    }),
    { numRuns: 3000, seed: 20261128 },
  );
});

Deno.test("body chunks kept from earlier responses on one connection stay as they were, read from one reused buffer", () => {
  const parser = new ResponseParser();
  const input = new Uint8Array(64 * 1024); // the connection's read buffer, read into again
  const kept: { expected: string; chunks: Uint8Array[] }[] = [];
  for (let i = 0; i < 400; i++) {
    // Sized and chunked bodies, small and large (a slab holds 16 KiB: it fills up and is renewed).
    const body = String.fromCharCode(0x61 + (i % 26)).repeat(1 + ((i * 397) % 3000));
    const text = i % 3 === 0
      ? `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${
        body.length.toString(16)
      }\r\n${body}\r\n0\r\n\r\n`
      : `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const bytes = bytesOf(text);
    input.fill(0x7a);
    input.set(bytes);
    const chunks: Uint8Array[] = [];
    parser.start("GET", { onHead: () => {}, onBody: (c) => chunks.push(c), onEnd: () => {} });
    parser.feed(input.subarray(0, bytes.length));
    assert.ok(parser.complete, `response ${i}`);
    kept.push({ expected: body, chunks });
  }
  input.fill(0);
  for (const [i, { expected, chunks }] of kept.entries()) {
    const got = chunks.map((c) => String.fromCharCode(...c)).join("");
    assert.equal(got, expected, `response ${i}'s body`);
  }
});
