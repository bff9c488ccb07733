/**
 * The steps of `http-parser-js`'s `HTTPParser` (0.5.10, pinned in
 * deno.json) that the HTTP/1.1 client replaces on its parser instances,
 * where the parser is lenient or does not count (`_http1_parser.ts` says
 * why each): reading a line, a header line, the status line, a chunk-size
 * line, the trailer section. Each keeps the parser's own method name and
 * contract; `tests/deno/http1_parser_test.ts` fails if those change.
 *
 * The gateway's HTTP/1.1 server reads requests with the same line, chunk-size
 * line and trailer steps (`_http1_request_parser.ts`, which adds its own
 * request line and header steps): what they find wrong goes through the
 * instance's {@linkcode ParserState.fault}, so that each side throws its
 * own error.
 *
 * @module
 */

import { HTTPParser } from "http-parser-js";
import { chunkSize } from "./_http1_framing.ts";

/** Most bytes of a response's status line and header section; of its trailer section too. */
export const HEAD_LIMIT = 64 * 1024;

/** Most bytes of a chunk-size line, extensions included. */
export const CHUNK_LINE_LIMIT = 4 * 1024;

/** The upstream's response cannot be forwarded: the proxy answers 502. */
export class InvalidResponse extends Error {
  override name = "InvalidResponse";
  /** `reason` says what is wrong with the response. */
  constructor(reason: string) {
    super(`invalid upstream response: ${reason}`);
  }
}

/**
 * What our common steps find wrong: a header or trailer section past its
 * budget, a chunk-size line past its own, a chunk-size line that is no
 * size.
 */
export type Fault = "section-length" | "chunk-line-length" | "chunk-line";

/** The parts of an `HTTPParser` instance we use or replace. */
export interface ParserState {
  state: string;
  line: string;
  chunk: Uint8Array;
  offset: number;
  end: number;
  isChunked: boolean;
  body_bytes: number | null;
  /** Ours: bytes that lines may still take in the current section. */
  budget: number;
  /** Ours: set at the end of a final response; the parser then reads nothing more. */
  stopped: boolean;
  /** Ours: the last line consumed. */
  lastLine: string;
  /** Ours: `text` decodes `textChunk` from byte `textAt` on. */
  text: string;
  textChunk: Uint8Array | null;
  textAt: number;
  /** Ours: the error our steps throw for `fault`, found in `line` (or `""`). */
  fault(fault: Fault, line: string): Error;
  execute(chunk: Uint8Array): number | Error;
  finish(): void | Error;
  reinitialize(type: string): void;
  nextRequest(): void;
  consumeLine(): string | undefined;
  parseHeader(line: string, headers: string[]): void;
  RESPONSE_LINE(): boolean | void;
  BODY_CHUNKHEAD(): void;
  BODY_CHUNKTRAILERS(): void;
  [key: number]: unknown;
}

/**
 * A parser in `RESPONSE` mode (or `kind`) with our steps in place of its
 * own, throwing {@linkcode InvalidResponse} until its `fault` is replaced.
 */
export function strictParser(
  kind: "REQUEST" | "RESPONSE" = HTTPParser.RESPONSE,
): ParserState {
  const p = new HTTPParser(kind) as unknown as ParserState;
  p.consumeLine = consumeLine;
  p.parseHeader = parseHeader;
  p.RESPONSE_LINE = responseLine;
  p.BODY_CHUNKHEAD = chunkHead;
  p.BODY_CHUNKTRAILERS = trailers;
  p.budget = HEAD_LIMIT;
  p.stopped = false;
  p.lastLine = "";
  p.text = "";
  p.textChunk = null;
  p.textAt = 0;
  p.fault = responseFault;
  return p;
}

/** The response parser's errors. */
function responseFault(fault: Fault, line: string): Error {
  switch (fault) {
    case "section-length":
      return new InvalidResponse(`a header or trailer section longer than ${HEAD_LIMIT} bytes`);
    case "chunk-line-length":
      return new InvalidResponse(`a chunk-size line longer than ${CHUNK_LINE_LIMIT} bytes`);
    case "chunk-line":
      return new InvalidResponse(`invalid chunk-size line ${JSON.stringify(line)}`);
  }
}

/**
 * `consumeLine` of the parser, in Latin-1 and within the section's budget.
 * The bytes are decoded a window at a time (a head's lines in one call,
 * not one each), a small one for chunk-size lines, which sit among body
 * bytes.
 */
function consumeLine(this: ParserState): string | undefined {
  const { chunk, offset, end } = this;
  const inBody = this.state === "BODY_CHUNKHEAD" || this.state === "BODY_CHUNKEMPTYLINE";
  if (
    this.textChunk !== chunk || offset < this.textAt || offset >= this.textAt + this.text.length
  ) {
    this.text = latin1(chunk, offset, Math.min(end, offset + (inBody ? 32 : 2048)));
    this.textChunk = chunk;
    this.textAt = offset;
  }
  const from = offset - this.textAt;
  let lf = this.text.indexOf("\n", from);
  while (lf < 0 && this.textAt + this.text.length < end) {
    const more = this.textAt + this.text.length;
    const searched = this.text.length;
    this.text += latin1(chunk, more, Math.min(end, more + 4096));
    lf = this.text.indexOf("\n", searched);
  }
  const found = lf >= 0;
  const stop = found ? this.textAt + lf : end;
  this.budget -= stop - offset + (found ? 1 : 0);
  if (this.budget < 0) throw this.fault(inBody ? "chunk-line-length" : "section-length", "");
  if (!found) {
    this.line += this.text.slice(from);
    this.offset = end;
    return undefined;
  }
  let line = this.line + this.text.slice(from, lf);
  // RFC 9112 §2.2: a bare LF may end a line; a CR before it is dropped.
  if (line.charCodeAt(line.length - 1) === 0x0d) line = line.slice(0, -1);
  this.line = "";
  this.offset = stop + 1;
  this.lastLine = line;
  return line;
}

/** Decodes ASCII natively; keeps the BOM, so that any byte over 0x7f shows. */
const ascii = new TextDecoder("utf-8", { ignoreBOM: true });
const NON_ASCII = /[\u0080-\uffff]/;

/** Bytes `start` to `end` of `bytes` as Latin-1: one character per byte. */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  const text = ascii.decode(bytes.subarray(start, end));
  if (!NON_ASCII.test(text)) return text;
  let out = "";
  for (let at = start; at < end; at += 8192) {
    const part = bytes.subarray(at, Math.min(end, at + 8192));
    out += String.fromCharCode.apply(null, part as unknown as number[]);
  }
  return out;
}

const parserResponseLine = (HTTPParser.prototype as unknown as ParserState).RESPONSE_LINE;

/**
 * The parser's `RESPONSE_LINE`, unless the response has ended: then it
 * stops the parser. The parser takes `HTTP/1.1 2000` as 200 and a reason
 * of `0`: RFC 9112 §4 wants a space after the three digits, or nothing.
 */
function responseLine(this: ParserState): boolean | void {
  if (this.stopped) return true;
  parserResponseLine.call(this);
  const line = this.lastLine;
  if (this.state === "HEADER" && line.length > 12 && line.charCodeAt(12) !== 0x20) {
    throw new InvalidResponse(`invalid status line ${JSON.stringify(line.slice(0, 40))}`);
  }
}

const parserParseHeader = (HTTPParser.prototype as unknown as ParserState).parseHeader;

/** The parser's `parseHeader`, refusing what it would skip in silence (RFC 9112 §5.1, §5.2). */
function parseHeader(this: ParserState, line: string, headers: string[]): void {
  const before = headers.length;
  const first = line.charCodeAt(0);
  const fold = first === 0x20 || first === 0x09;
  if (fold && before === 0) throw new InvalidResponse("a folded line before any header field");
  parserParseHeader.call(this, line, headers);
  if (!fold && headers.length === before) {
    throw new InvalidResponse(`not a header field: ${JSON.stringify(line.slice(0, 40))}`);
  }
}

/** The parser's `BODY_CHUNKHEAD`, with our reading of the chunk-size line. */
function chunkHead(this: ParserState): void {
  if (this.line === "") this.budget = CHUNK_LINE_LIMIT;
  const line = this.consumeLine();
  if (line === undefined) return;
  const size = chunkSize(line);
  if (size < 0) throw this.fault("chunk-line", line);
  this.body_bytes = size;
  if (size === 0) {
    this.budget = HEAD_LIMIT;
    this.state = "BODY_CHUNKTRAILERS";
  } else {
    this.state = "BODY_CHUNK";
  }
}

/** The parser's `BODY_CHUNKTRAILERS`, dropping the fields. */
function trailers(this: ParserState): void {
  const line = this.consumeLine();
  if (line === "") this.nextRequest();
}
