/**
 * The gateway's HTTP/1.1 request parser (`src/deno/_http1_request_parser.ts`)
 * per request, on one parser reused as on a kept-alive connection: a
 * typical GET with 8 header fields, and a POST of 1 KiB by Content-Length,
 * each fed in one piece as one read would bring it; and, for scale on the
 * machine at hand, the client's response parser on a response with the
 * same fields. Each head is also fed with its first byte apart, which
 * takes the line steps instead of the fast path for a head received whole
 * (`src/deno/_head_scan.ts`): the two side by side. Run with
 * `deno bench --import-map=dev/import_map.json --lock=dev/deno.lock bench/http1_request_parser_bench.ts`.
 */

import { type RequestEvents, RequestParser } from "../src/deno/_http1_request_parser.ts";
import { ResponseParser } from "../src/deno/_http1_parser.ts";

const encoder = new TextEncoder();

/** 8 header fields, as a kubectl request brings them. */
const fields = "Host: api.example.com\r\n" +
  "User-Agent: kubectl/v1.31.0 (linux/amd64) kubernetes/abcdef0\r\n" +
  "Accept: application/json, */*\r\n" +
  "Accept-Encoding: gzip, deflate, br\r\n" +
  "Authorization: Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl\r\n" +
  "X-Request-Id: 6f1c2b9e-3d4a-4f5b-8c7d-9e0f1a2b3c4d\r\n" +
  "Connection: keep-alive\r\n" +
  "Cookie: session=0123456789abcdef; theme=dark\r\n";

const get = encoder.encode(
  `GET /api/v1/namespaces/default/pods?limit=500 HTTP/1.1\r\n${fields}\r\n`,
);

const body = "x".repeat(1024);
const post = encoder.encode(
  "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n" +
    "Host: api.example.com\r\n" +
    "User-Agent: kubectl/v1.31.0 (linux/amd64) kubernetes/abcdef0\r\n" +
    "Accept: application/json\r\n" +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${body.length}\r\n` +
    "Authorization: Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl\r\n" +
    "X-Request-Id: 6f1c2b9e-3d4a-4f5b-8c7d-9e0f1a2b3c4d\r\n" +
    "\r\n" + body,
);

const parser = new RequestParser();
// Keeps results observable so the work cannot be optimised away.
let sink = 0;
const events: RequestEvents = {
  onHead: (head) => sink += head.fields.length,
  onBody: (chunk) => sink += chunk.length,
  onEnd: () => sink++,
};

function once(bytes: Uint8Array): void {
  parser.start(events);
  if (parser.feed(bytes) !== bytes.length || !parser.complete) throw new Error("not parsed");
}

Deno.bench("GET, 8 header fields", { group: "request", baseline: true }, () => once(get));
Deno.bench("GET, 8 header fields, by the line steps (first byte apart)", {
  group: "request",
}, () => {
  parser.start(events);
  if (parser.feed(get.subarray(0, 1)) + parser.feed(get.subarray(1)) !== get.length) {
    throw new Error("not parsed");
  }
});
Deno.bench("POST, 1 KiB by Content-Length", { group: "request" }, () => once(post));

const response = encoder.encode(`HTTP/1.1 200 OK\r\n${fields}Content-Length: 0\r\n\r\n`);
const responseParser = new ResponseParser();
const responseEvents = {
  onHead: (head: { headers: string[] }) => sink += head.headers.length,
  onBody: (chunk: Uint8Array) => sink += chunk.length,
  onEnd: () => sink++,
};

Deno.bench("for scale: ResponseParser, the same 8 fields", { group: "request" }, () => {
  responseParser.start("GET", responseEvents);
  responseParser.feed(response);
  if (!responseParser.complete) throw new Error("not parsed");
});

Deno.bench("for scale: ResponseParser, by the line steps (first byte apart)", {
  group: "request",
}, () => {
  responseParser.start("GET", responseEvents);
  responseParser.feed(response.subarray(0, 1));
  responseParser.feed(response.subarray(1));
  if (!responseParser.complete) throw new Error("not parsed");
});

addEventListener("unload", () => {
  if (sink === 0) throw new Error("nothing parsed");
});
