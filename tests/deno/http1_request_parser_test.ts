/**
 * The gateway's HTTP/1.1 request parser: `http-parser-js` in `REQUEST`
 * mode with the steps we replace (`src/deno/_http1_request_parser.ts`).
 * Unit vectors for each rule on the wire (the request line, header lines,
 * limits, bodies, the end of the connection), pipelining, and a property:
 * a request cut anywhere parses as it does whole. The framing decisions
 * themselves are fuzzed in `http1_request_framing_test.ts`.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { HTTPParser } from "http-parser-js";
import {
  HEAD_LIMIT,
  REQUEST_LINE_LIMIT,
  type RequestHeadInfo,
  RequestParser,
  RequestRefused,
} from "../../src/deno/_http1_request_parser.ts";

const bytesOf = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const textOf = (bytes: Uint8Array) => {
  let out = "";
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
};

/** What parsing one request came to. */
interface Parsed {
  head: RequestHeadInfo | null;
  body: string;
  complete: boolean;
  /** Bytes consumed, in all. */
  used: number;
}

/** Parses one request from `pieces` fed in turn (scribbled over once fed), as far as it goes. */
function parsePieces(parser: RequestParser, pieces: Uint8Array[]): Parsed {
  let head: RequestHeadInfo | null = null;
  let body = "";
  parser.start({
    onHead: (h) => head = h,
    onBody: (chunk) => body += textOf(chunk),
    onEnd: () => {},
  });
  let used = 0;
  for (const piece of pieces) {
    if (parser.complete) break;
    const n = parser.feed(piece);
    piece.fill(0xee, 0, n); // the parser must keep nothing of what it consumed
    used += n;
  }
  return { head, body, complete: parser.complete, used };
}

/** Parses `text` in one piece, or byte by byte. */
function parse(text: string, byteByByte = false): Parsed {
  const bytes = bytesOf(text);
  const pieces = byteByByte ? Array.from(bytes, (_, i) => bytes.slice(i, i + 1)) : [bytes.slice()];
  return parsePieces(new RequestParser(), pieces);
}

/** The status `text` is refused with, in one piece and byte by byte (the same), or null. */
function refusal(text: string): number | null {
  const statuses = [false, true].map((byteByByte) => {
    try {
      parse(text, byteByByte);
      return null;
    } catch (e) {
      if (e instanceof RequestRefused) return e.status;
      throw e;
    }
  });
  assert.equal(statuses[0], statuses[1], `in one piece and byte by byte: ${JSON.stringify(text)}`);
  return statuses[0]!;
}

const get = (target: string, fields = "Host: a\r\n") => `GET ${target} HTTP/1.1\r\n${fields}\r\n`;

Deno.test("the parser's steps we call are still http-parser-js's own", () => {
  const proto = HTTPParser.prototype as unknown as Record<string, unknown>;
  for (
    const name of [
      "REQUEST_LINE",
      "HEADER",
      "BODY_SIZED",
      "BODY_CHUNK",
      "BODY_CHUNKEMPTYLINE",
      "nextRequest",
      "reinitialize",
      "userCall",
      "execute",
    ]
  ) {
    assert.equal(typeof proto[name], "function", name);
  }
  // Where the parser goes after our HEADER, and what ends a request there.
  assert.match(String(proto.BODY_SIZED), /nextRequest/);
  assert.match(String(proto.BODY_CHUNK), /'BODY_CHUNKEMPTYLINE'/);
  assert.match(String(proto.BODY_CHUNKEMPTYLINE), /'BODY_CHUNKHEAD'/);
  assert.match(String(proto.initialize), /type \+ '_LINE'/);
});

Deno.test("a GET: method, target, version, fields as received, no body", () => {
  const text = "GET /a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n" +
    "X-Spaced:   padded value \t\r\nX-Empty:\r\n\r\n";
  for (const byteByByte of [false, true]) {
    const { head, body, complete, used } = parse(text, byteByByte);
    assert.deepEqual(head, {
      method: "GET",
      target: "/a/b?c=d",
      versionMinor: 1,
      fields: [
        "Host",
        "example.com:8080",
        "Accept",
        "*/*",
        "X-Spaced",
        "padded value",
        "X-Empty",
        "",
      ],
      framing: { kind: "none" },
      keepAlive: true,
      expectContinue: false,
      host: "example.com:8080",
    });
    assert.equal(body, "");
    assert.equal(complete, true);
    assert.equal(used, text.length);
  }
});

Deno.test("a method is any token, its case kept; the request line is strict", () => {
  for (const method of ["get", "M-SEARCH", "PROPFIND", "FOO_BAR", "x!#$%&'*+.^_`|~9"]) {
    assert.equal(parse(get("/").replace("GET", method)).head?.method, method);
  }
  for (
    const line of [
      "G(T / HTTP/1.1",
      "GÉT / HTTP/1.1",
      " GET / HTTP/1.1",
      "GET  / HTTP/1.1",
      "GET / HTTP/1.1 ",
      "GET\t/ HTTP/1.1",
      "GET /\tHTTP/1.1",
      "GET / http/1.1",
      "GET / HTTP/1.10",
      "GET / HTTP/11",
      "GET / HTTP/1",
      "GET / HTTP/a.1",
      "GET /",
      "GET",
      "/ HTTP/1.1",
      "GET / HTTP/1.1\rx",
    ]
  ) {
    assert.equal(refusal(`${line}\r\nHost: a\r\n\r\n`), 400, line);
  }
  for (const version of ["HTTP/2.0", "HTTP/0.9", "HTTP/3.0", "HTTP/9.9"]) {
    assert.equal(refusal(`GET / ${version}\r\nHost: a\r\n\r\n`), 505, version);
  }
  // RFC 9110 §6.2: a higher minor version is read as HTTP/1.1.
  assert.equal(parse("GET / HTTP/1.2\r\nHost: a\r\n\r\n").head?.versionMinor, 1);
  assert.equal(parse("GET / HTTP/1.0\r\n\r\n").head?.versionMinor, 0);
});

Deno.test("targets: origin-form as received, absolute-form to origin-form, * for OPTIONS only", () => {
  const cases: [string, string, string, string | null][] = [
    ["GET", "/a/b?c=d&e=%20", "/a/b?c=d&e=%20", "a"],
    ["GET", "/", "/", "a"],
    ["GET", "//double//slashes", "//double//slashes", "a"],
    ["GET", "http://example.com/p?q=1", "/p?q=1", "example.com"],
    ["GET", "HTTPS://Example.com:8443/p", "/p", "Example.com:8443"],
    ["GET", "http://example.com", "/", "example.com"],
    ["GET", "http://example.com?q", "/?q", "example.com"],
    ["GET", "http://[::1]:80/x", "/x", "[::1]:80"],
  ];
  for (const [method, target, path, host] of cases) {
    const { head } = parse(`${method} ${target} HTTP/1.1\r\nHost: a\r\n\r\n`);
    assert.equal(head?.target, path, target);
    assert.equal(head?.host, host, target);
  }
  for (
    const [method, target] of [
      ["GET", "*"],
      ["OPTIONS", "*"],
      ["options", "*"],
      ["CONNECT", "example.com:443"],
      ["CONNECT", "/"],
      ["GET", "example.com/p"],
      ["GET", "ftp://example.com/p"],
      ["GET", "http:///p"],
      ["GET", "http://user:pw@example.com/p"],
      ["GET", "/a#fragment"],
      ["GET", "/caf\xe9"],
      ["GET", "/a\x7f"],
      ["GET", "/a\x00"],
    ]
  ) {
    assert.equal(refusal(`${method} ${target} HTTP/1.1\r\nHost: a\r\n\r\n`), 400, target);
  }
});

Deno.test("Host: exactly one on HTTP/1.1, at most one on HTTP/1.0, a valid value", () => {
  assert.equal(refusal("GET / HTTP/1.1\r\n\r\n"), 400);
  assert.equal(refusal("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n"), 400);
  assert.equal(refusal("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
  assert.equal(refusal(get("/", "Host: a b\r\n")), 400);
  assert.equal(refusal(get("/", "Host: evil.com/x\r\n")), 400);
  assert.equal(refusal(get("/", "Host: user@a\r\n")), 400);
  assert.equal(parse("GET / HTTP/1.0\r\n\r\n").head?.host, null);
  assert.equal(parse(get("/", "HOST: 10.0.0.1:81\r\n")).head?.host, "10.0.0.1:81");
  assert.equal(parse(get("/", "Host:\r\n")).head?.host, "");
});

Deno.test("persistence (RFC 9112 §9.3) and the 100-continue expectation", () => {
  const keepAlive = (text: string) => parse(text).head?.keepAlive;
  assert.equal(keepAlive(get("/")), true);
  assert.equal(keepAlive(get("/", "Host: a\r\nConnection: close\r\n")), false);
  assert.equal(keepAlive(get("/", "Host: a\r\nConnection: Keep-Alive, CLOSE\r\n")), false);
  assert.equal(keepAlive(get("/", "Host: a\r\nConnection: upgrade\r\n")), true);
  assert.equal(keepAlive("GET / HTTP/1.0\r\n\r\n"), false);
  assert.equal(keepAlive("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), true);
  assert.equal(keepAlive("GET / HTTP/1.0\r\nConnection: x, Keep-Alive\r\n\r\n"), true);
  assert.equal(keepAlive("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"), false);

  const expects = (text: string) => parse(text).head?.expectContinue;
  const post = (version: string, fields: string) =>
    `POST / HTTP/${version}\r\nHost: a\r\n${fields}\r\n`;
  assert.equal(expects(post("1.1", "Content-Length: 0\r\nExpect: 100-continue\r\n")), false);
  assert.equal(parse(post("1.1", "Content-Length: 1\r\nExpect: 100-Continue\r\n")).complete, false);
  assert.equal(expects(post("1.1", "Content-Length: 1\r\nExpect: 100-Continue\r\n")), true);
  assert.equal(
    expects(post("1.1", "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n")),
    true,
  );
  assert.equal(expects(post("1.0", "Content-Length: 1\r\nExpect: 100-continue\r\n")), false);
  // Other expectations are ignored, not refused.
  assert.equal(expects(post("1.1", "Content-Length: 1\r\nExpect: x-other\r\n")), false);
  assert.equal(expects(get("/", "Host: a\r\nExpect: 100-continue\r\n")), false);
});

Deno.test("header lines that are no field, folded, or hold a control character (but a tab) are refused", () => {
  for (
    const fields of [
      "no colon here\r\n",
      "Content-Length : 5\r\n",
      "X-A: 1\r\n folded\r\n",
      "X-A: 1\r\n\tfolded\r\n",
      " X-First: folded\r\n",
      ": no name\r\n",
      "Na(me: v\r\n",
      "Näme: v\r\n",
      "X-A: a\rb\r\n",
      "X-A: a\r\r\n",
      "X-A: a\x00b\r\n",
      "X-A: 1\x012\r\n",
      "X-A: 1\x7f2\r\n",
      "X-A: 1\x1b[0m\r\n",
    ]
  ) {
    assert.equal(refusal(get("/", `Host: a\r\n${fields}`)), 400, JSON.stringify(fields));
  }
});

Deno.test("field values keep their Latin-1 bytes (obs-text) and their tabs", () => {
  const { head } = parse(get("/", "Host: a\r\nX-Name: caf\xe9 \x80\xff\tz\r\n"));
  assert.deepEqual(head?.fields, ["Host", "a", "X-Name", "caf\xe9 \x80\xff\tz"]);
  assert.doesNotThrow(() => new Headers([[head!.fields[2]!, head!.fields[3]!]]));
});

Deno.test("bare LF ends a line; empty lines before the request line are ignored", () => {
  for (
    const text of [
      "GET / HTTP/1.1\nHost: a\nX: 1\n\n",
      "GET / HTTP/1.1\r\nHost: a\nX: 1\r\n\n",
      "\r\nGET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n",
      "\n\r\n\nGET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n",
    ]
  ) {
    for (const byteByByte of [false, true]) {
      const { head, complete, used } = parse(text, byteByByte);
      assert.deepEqual(head?.fields, ["Host", "a", "X", "1"], JSON.stringify(text));
      assert.equal(complete, true);
      assert.equal(used, text.length);
    }
  }
});

Deno.test("limits: 64 KiB of head (431), 8 KiB of request line (414), 4 KiB of chunk-size line, 64 KiB of trailers", () => {
  const fill = (n: number) => "x".repeat(n);
  // Up to the limit passes: the head is exactly HEAD_LIMIT bytes.
  const head = (size: number) => {
    const start = "GET / HTTP/1.1\r\nHost: a\r\nX-Big: ";
    return `${start}${fill(size - start.length - 4)}\r\n\r\n`;
  };
  assert.equal(head(HEAD_LIMIT).length, HEAD_LIMIT);
  assert.equal(parse(head(HEAD_LIMIT)).complete, true);
  assert.equal(parse(head(HEAD_LIMIT), true).complete, true);
  assert.equal(refusal(head(HEAD_LIMIT + 1)), 431);
  // A line that never ends is cut off as well.
  assert.throws(() => parse(`GET / HTTP/1.1\r\nX: ${fill(HEAD_LIMIT)}`), { status: 431 });
  // Empty lines before the request line count.
  assert.equal(refusal(`${"\r\n".repeat(HEAD_LIMIT / 2)}${get("/")}`), 431);

  const line = (size: number) => `GET /${fill(size - "GET / HTTP/1.1".length)} HTTP/1.1`;
  assert.equal(line(REQUEST_LINE_LIMIT).length, REQUEST_LINE_LIMIT);
  assert.equal(parse(`${line(REQUEST_LINE_LIMIT)}\r\nHost: a\r\n\r\n`).complete, true);
  assert.equal(parse(`${line(REQUEST_LINE_LIMIT)}\nHost: a\n\n`, true).complete, true);
  assert.equal(refusal(`${line(REQUEST_LINE_LIMIT + 1)}\r\nHost: a\r\n\r\n`), 414);
  assert.equal(refusal(`${line(REQUEST_LINE_LIMIT + 1)}\nHost: a\n\n`), 414);
  // Known too long before its end.
  assert.throws(() => parse(`GET /${fill(REQUEST_LINE_LIMIT * 2)}`), { status: 414 });
  assert.throws(() => parse(`GET /${fill(HEAD_LIMIT * 2)}`), { status: 414 });
  // A request line that fits, in a head that does not.
  assert.equal(
    refusal(`GET /${fill(8000)} HTTP/1.1\r\nX: ${fill(HEAD_LIMIT - 8000)}\r\n\r\n`),
    431,
  );

  const chunked = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  assert.equal(refusal(`${chunked}5;${"e".repeat(5000)}\r\nhello\r\n0\r\n\r\n`), 400);
  assert.equal(parse(`${chunked}5;${"e".repeat(4000)}\r\nhello\r\n0\r\n\r\n`).body, "hello");
  assert.equal(refusal(`${chunked}0\r\nX-T: ${fill(HEAD_LIMIT)}\r\n\r\n`), 431);
  const trailers = parse(`${chunked}0\r\nX-T: ${fill(HEAD_LIMIT - 100)}\r\nY: 1\r\n\r\n`);
  assert.equal(trailers.complete, true);
  assert.deepEqual(trailers.head?.fields, ["Host", "a", "Transfer-Encoding", "chunked"]);
});

Deno.test("bodies: by Content-Length, chunked (extensions ignored, trailers dropped)", () => {
  const sized = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world";
  const chunked = "POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "5;ext=1\r\nhello\r\n6\n world\n0\r\nX-Trailer: dropped\r\n\r\n";
  for (const text of [sized, chunked]) {
    for (const byteByByte of [false, true]) {
      const { head, body, complete, used } = parse(text, byteByByte);
      assert.equal(body, "hello world");
      assert.equal(complete, true);
      assert.equal(used, text.length);
      assert.equal(head?.fields.length, 4);
    }
  }
  assert.deepEqual(parse(sized).head?.framing, { kind: "length", length: 11 });
  assert.deepEqual(parse(chunked).head?.framing, { kind: "chunked" });
  assert.deepEqual(
    parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n").head?.framing,
    { kind: "length", length: 0 },
  );
  // A body larger than one feed's part, in one feed.
  const big = "b".repeat(200_000);
  const large = parse(`PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: ${big.length}\r\n\r\n${big}`);
  assert.equal(large.body, big);
  assert.equal(large.complete, true);
});

Deno.test("framings refused on the wire, and the Content-Length lists the parser would refuse", () => {
  const post = (fields: string, body = "") => `POST / HTTP/1.1\r\nHost: a\r\n${fields}\r\n${body}`;
  const cases: [string, number][] = [
    [post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"), 400],
    ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400],
    [post("Transfer-Encoding: gzip\r\n"), 400],
    [post("Transfer-Encoding: chunked, gzip\r\n"), 400],
    [post("Transfer-Encoding: gzip, chunked\r\n"), 501],
    [post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"), 501],
    [post("Content-Length: 5\r\nContent-Length: 6\r\n"), 400],
    [post("Content-Length: 5, 6\r\n"), 400],
    [post("Content-Length: -1\r\n"), 400],
    [post("Content-Length: 0x5\r\n"), 400],
    [post("Content-Length: 9007199254740992\r\n"), 400],
    [post("Content-Length:\r\n"), 400],
    [post("Transfer-Encoding: chunked\r\n", "0x5\r\nhello\r\n0\r\n\r\n"), 400],
    [post("Transfer-Encoding: chunked\r\n", "-5\r\nhello\r\n0\r\n\r\n"), 400],
    [post("Transfer-Encoding: chunked\r\n", "zz\r\n"), 400],
    [post("Transfer-Encoding: chunked\r\n", "1\r\nab\r\n"), 400],
  ];
  for (const [text, status] of cases) assert.equal(refusal(text), status, text);
  // RFC 9112 §6.3 item 5: a list of one value, repeated, is that value (http-parser-js throws).
  const listed = parse(post("Content-Length: 5\r\nContent-Length: 5, 05\r\n", "hello"));
  assert.deepEqual(listed.head?.framing, { kind: "length", length: 5 });
  assert.equal(listed.body, "hello");
});

Deno.test("pipelining: a feed consumes exactly the current request", () => {
  const first = "POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";
  const second =
    "POST /2 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ndef\r\n0\r\n\r\n";
  const third = "GET /3 HTTP/1.1\r\nHost: a\r\n\r\n";
  const fourth = "GET /4 HTTP/1.1\r\nHost: a\r\n\r\n";
  const wire = bytesOf(first + second + third + fourth);
  const parser = new RequestParser();
  const seen: string[] = [];
  let at = 0;
  for (const text of [first, second, third, fourth]) {
    parser.start({
      onHead: (h) => seen.push(h.target),
      onBody: (c) => seen.push(textOf(c)),
      onEnd: () => seen.push("end"),
    });
    const used = parser.feed(wire.subarray(at));
    assert.equal(used, text.length);
    assert.equal(parser.complete, true);
    // Fed again, a complete request takes nothing more.
    assert.equal(parser.feed(wire.subarray(at + used)), 0);
    at += used;
  }
  assert.equal(at, wire.length);
  assert.deepEqual(seen, ["/1", "abc", "end", "/2", "def", "end", "/3", "end", "/4", "end"]);
});

Deno.test("end(): a no-op between requests, a 400 within one; inHead", () => {
  const parser = new RequestParser();
  const events = { onHead() {}, onBody() {}, onEnd() {} };
  // Before the first start(), no request is under way.
  assert.equal(parser.complete, true);
  assert.equal(parser.feed(bytesOf(get("/"))), 0);
  parser.end();
  parser.start(events);
  assert.equal(parser.inHead, false);
  parser.end();
  parser.feed(bytesOf("\r\n\r"));
  assert.equal(parser.inHead, false);
  parser.end();
  parser.feed(bytesOf("\nGE"));
  assert.equal(parser.inHead, true);
  assert.throws(() => parser.end(), { status: 400, message: /in a request head/ });

  parser.start(events);
  parser.feed(bytesOf("GET / HTTP/1.1\r\nHost: a\r\n"));
  assert.equal(parser.inHead, true);
  assert.throws(() => parser.end(), { status: 400 });
  parser.feed(bytesOf("\r\n"));
  assert.equal(parser.inHead, false);
  assert.equal(parser.complete, true);
  parser.end();

  for (
    const text of [
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
    ]
  ) {
    parser.start(events);
    parser.feed(bytesOf(text));
    assert.equal(parser.inHead, false);
    assert.equal(parser.complete, false);
    assert.throws(() => parser.end(), { status: 400, message: /before the request body ended/ });
  }
});

Deno.test("a receiver's error passes as it is; the parser is fit for the next request", () => {
  const parser = new RequestParser();
  class Mine extends Error {}
  for (const where of ["onHead", "onBody", "onEnd"]) {
    parser.start({
      onHead() {
        if (where === "onHead") throw new Mine();
      },
      onBody() {
        if (where === "onBody") throw new Mine();
      },
      onEnd() {
        if (where === "onEnd") throw new Mine();
      },
    });
    assert.throws(
      () => parser.feed(bytesOf("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx")),
      Mine,
      where,
    );
    const { head, complete } = parsePieces(parser, [bytesOf(get("/next"))]);
    assert.equal(head?.target, "/next");
    assert.equal(complete, true);
  }
  // start() from within an event would parse the next request past what feed() returns.
  parser.start({
    onHead() {},
    onBody() {},
    onEnd: () => parser.start({ onHead() {}, onBody() {}, onEnd() {} }),
  });
  assert.throws(() => parser.feed(bytesOf(get("/") + get("/next"))), /from within/);
  // And after a refusal.
  assert.throws(() => parsePieces(parser, [bytesOf("BAD\r\n")]), RequestRefused);
  assert.equal(parsePieces(parser, [bytesOf(get("/again"))]).head?.target, "/again");
});

Deno.test("one buffer fed again with new bytes; requests with large bodies one after another", () => {
  const parser = new RequestParser();
  const buffer = new Uint8Array(8);
  const text = get("/reused");
  let head: RequestHeadInfo | null = null;
  parser.start({ onHead: (h) => head = h, onBody() {}, onEnd() {} });
  for (let at = 0; at < text.length; at += buffer.length) {
    const part = bytesOf(text.slice(at, at + buffer.length));
    buffer.set(part);
    assert.equal(
      parser.feed(part.length === buffer.length ? buffer : buffer.subarray(0, part.length)),
      part.length,
    );
  }
  assert.equal((head as RequestHeadInfo | null)?.target, "/reused");
  // The parser's own count of head bytes starts again with each request.
  const body = "z".repeat(60 * 1024);
  for (let i = 0; i < 4; i++) {
    const sized = `PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    assert.equal(parsePieces(parser, [bytesOf(sized)]).complete, true);
  }
  const bigHead = get("/", `Host: a\r\nX: ${"h".repeat(HEAD_LIMIT - 100)}\r\n`);
  const half = bigHead.length >> 1;
  const pieces = [bytesOf(bigHead.slice(0, half)), bytesOf(bigHead.slice(half))];
  assert.equal(parsePieces(parser, pieces).complete, true);
});

/** A request on the wire, mostly valid, else with one flaw, as the property below draws it. */
const request = fc.record({
  empties: fc.constantFrom("", "", "\r\n", "\n\r\n"),
  method: fc.constantFrom("GET", "POST", "put", "OPTIONS"),
  target: fc.constantFrom("/", "/a/b?c=d", "http://h.example/p?q", "/caf%C3%A9"),
  version: fc.constantFrom("HTTP/1.1", "HTTP/1.1", "HTTP/1.0"),
  eol: fc.constantFrom("\r\n", "\n"),
  fields: fc.array(
    fc.tuple(
      fc.constantFrom("X-A", "accept", "Connection", "Expect"),
      fc.constantFrom("1", "close", "keep-alive", "100-continue", "caf\xe9", "", "  spaced  "),
    ),
    { maxLength: 4 },
  ),
  body: fc.string({ maxLength: 40 }),
  framing: fc.constantFrom("none", "length", "chunked", "chunked"),
  sizes: fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 4 }),
  extension: fc.constantFrom("", ";a=b"),
  trailer: fc.constantFrom("", "T: 1\r\n"),
  next: fc.constantFrom("", "GET / HTTP/1.1\r\n", "junk"),
  flaw: fc.oneof(
    { weight: 3, arbitrary: fc.constant("") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "target",
        "version",
        "name",
        "fold",
        "nul",
        "no host",
        "two hosts",
        "length",
        "chunk-size",
      ),
    },
  ),
});

function wireOf(r: typeof request extends fc.Arbitrary<infer T> ? T : never): string {
  const { eol, flaw } = r;
  const target = flaw === "target" ? "/x y" : r.target;
  const version = flaw === "version" ? "HTTP/2.0" : r.version;
  let text = `${r.empties}${r.method} ${target} ${version}${eol}`;
  if (flaw !== "no host") text += `Host: h${eol}`;
  for (const [n, v] of r.fields) text += `${n}: ${v}${eol}`;
  if (flaw === "two hosts") text += `host: h${eol}`;
  if (flaw === "name") text += `Bad Name: v${eol}`;
  if (flaw === "fold") text += `X-F: a${eol} b${eol}`;
  if (flaw === "nul") text += `X-N: a\0b${eol}`;
  if (flaw === "length") text += `Content-Length: 3${eol}`;
  let body = "";
  if (r.framing === "length") {
    text += `Content-Length: ${r.body.length}${eol}`;
    body = r.body;
  } else if (r.framing === "chunked") {
    text += `Transfer-Encoding: chunked${eol}`;
    let at = 0;
    for (const size of [...r.sizes, r.body.length]) {
      const part = r.body.slice(at, at + size);
      if (part === "") continue;
      at += part.length;
      const hex = flaw === "chunk-size" ? "zz" : part.length.toString(16);
      body += `${hex}${r.extension}${eol}${part}${eol}`;
    }
    body += `0${r.extension}${eol}${r.trailer}${eol}`;
  }
  return `${text}${eol}${body}${r.next}`;
}

/** What a parse came to, refusals included, for comparison. */
function outcome(pieces: Uint8Array[]): unknown {
  try {
    return parsePieces(new RequestParser(), pieces);
  } catch (e) {
    if (e instanceof RequestRefused) return { refused: e.status };
    throw e;
  }
}

Deno.test("a request cut at any byte boundary parses as it does whole", () => {
  fc.assert(
    fc.property(request, (r) => {
      const wire = bytesOf(wireOf(r));
      const whole = outcome([wire.slice()]);
      for (let cut = 0; cut <= wire.length; cut++) {
        assert.deepEqual(outcome([wire.slice(0, cut), wire.slice(cut)]), whole, `cut at ${cut}`);
      }
      assert.deepEqual(outcome(Array.from(wire, (_, i) => wire.slice(i, i + 1))), whole);
    }),
    { numRuns: 300, seed: 20261201 },
  );
});
