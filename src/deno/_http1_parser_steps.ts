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
import { ascii, scanHead } from "./_head_scan.ts";

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
  /**
   * Ours: whether the last status line and header section were read whole
   * by the fast path (`_head_scan.ts`): every field a token name and a
   * value of visible ASCII, spaces and tabs.
   */
  plain: boolean;
  /** Ours: `text` decodes `textChunk` from byte `textAt` on. */
  text: string;
  textChunk: Uint8Array | null;
  textAt: number;
  /** Ours: the error our steps throw for `fault`, found in `line` (or `""`). */
  fault(fault: Fault, line: string): Error;
  execute(chunk: Uint8Array): number | Error;
  finish(): void | Error;
  reinitialize(type: string): void;
  /** `REQUEST` or `RESPONSE`. */
  type: string;
  nextRequest(): void;
  consumeLine(): string | undefined;
  parseHeader(line: string, headers: string[]): void;
  RESPONSE_LINE(): boolean | void;
  HEADER(): void;
  isUserCall: boolean;
  /** Calls out of the parser go through this: an error they throw passes as it is. */
  userCall(): (ret?: unknown) => unknown;
  info: {
    headers: string[];
    versionMajor: number;
    versionMinor: number;
    statusCode: number;
    statusMessage: string;
  };
  /** Ours: the header section is complete; the owner tells how the body is framed. */
  headDone(): BodyFraming;
  BODY_CHUNKHEAD(): void;
  BODY_CHUNKTRAILERS(): void;
  BODY_SIZED(): void;
  BODY_CHUNK(): void;
  [key: number]: unknown;
}

/** How a body is framed, as the parser is to read it. */
export type BodyFraming =
  | { readonly kind: "none" | "chunked" | "close" }
  | { readonly kind: "length"; readonly length: number };

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
  p.HEADER = header;
  p.BODY_CHUNKHEAD = chunkHead;
  p.BODY_CHUNKTRAILERS = trailers;
  p.BODY_SIZED = bodySized;
  p.BODY_CHUNK = bodyChunk;
  p.nextRequest = nextMessage;
  p.budget = HEAD_LIMIT;
  p.stopped = false;
  p.lastLine = "";
  p.plain = false;
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
  // RFC 9112 §2.2: a bare LF may end a line; a CR before it is dropped.
  let line: string;
  if (this.line === "") {
    line = this.text.slice(from, lf > from && this.text.charCodeAt(lf - 1) === 0x0d ? lf - 1 : lf);
  } else {
    line = this.line + this.text.slice(from, lf);
    if (line.charCodeAt(line.length - 1) === 0x0d) line = line.slice(0, -1);
    this.line = "";
  }
  this.offset = stop + 1;
  this.lastLine = line;
  return line;
}

/**
 * Bytes `start` to `end` of `bytes` as Latin-1: one character per byte.
 * The bytes are looked at first (a loop over a head's bytes costs less
 * than a regular expression over its text): all ASCII, the native decoder.
 */
function latin1(bytes: Uint8Array, start: number, end: number): string {
  let high = false;
  for (let i = start; i < end; i++) {
    if (bytes[i]! > 0x7f) {
      high = true;
      break;
    }
  }
  if (!high) return ascii.decode(bytes.subarray(start, end));
  let out = "";
  for (let at = start; at < end; at += 8192) {
    const part = bytes.subarray(at, Math.min(end, at + 8192));
    out += String.fromCharCode.apply(null, part as unknown as number[]);
  }
  return out;
}

/**
 * The parser's `RESPONSE_LINE`, ours, unless the response has ended: then
 * it stops the parser. What the parser's regular expression takes, read
 * with `charCodeAt` (RFC 9112 §4: `HTTP/` DIGIT `.` DIGIT SP 3DIGIT, then
 * a space and the reason, or nothing), but `HTTP/1.1 2000`, which the
 * parser takes as 200 with a reason of `0`. Empty lines before it are
 * skipped, as the parser does.
 */
function responseLine(this: ParserState): boolean | void {
  if (this.stopped) return true;
  if (readWhole(this, HEAD_LIMIT, statusLine)) return;
  const line = this.consumeLine();
  if (!line) return;
  statusLine(this, line);
  this.plain = false;
  this.state = "HEADER";
  // The header section usually came with it: read on without a turn of the parser's loop.
  if (this.offset < this.end) this.HEADER();
}

/** Reads `line` as the status line into the parser's `info`. */
export function statusLine(p: ParserState, line: string): void {
  const major = line.charCodeAt(5) - 0x30;
  const minor = line.charCodeAt(7) - 0x30;
  const status = (line.charCodeAt(9) - 0x30) * 100 + (line.charCodeAt(10) - 0x30) * 10 +
    line.charCodeAt(11) - 0x30;
  if (
    !line.startsWith("HTTP/") || !(major >= 0 && major <= 9) || line.charCodeAt(6) !== 0x2e ||
    !(minor >= 0 && minor <= 9) || line.charCodeAt(8) !== 0x20 || !isDigit(line, 9) ||
    !isDigit(line, 10) || !isDigit(line, 11) ||
    (line.length > 12 && line.charCodeAt(12) !== 0x20) || line.indexOf("\r") >= 0
  ) {
    throw new InvalidResponse(`invalid status line ${JSON.stringify(line.slice(0, 40))}`);
  }
  const info = p.info;
  info.versionMajor = major;
  info.versionMinor = minor;
  info.statusCode = status;
  info.statusMessage = line.length > 13 ? line.slice(13) : "";
}

/**
 * The fast path of a status or request line's step, at the start of a
 * head: a plain head received whole is read by {@linkcode scanHead}, its
 * first line by `readFirst` (which throws what that line's own step
 * would), counted against the section's budget as the line steps count
 * it, then ended as {@linkcode header} ends a section. `false`, with
 * nothing consumed, for anything else: the line steps read it.
 */
export function readWhole<P extends ParserState>(
  p: P,
  firstLimit: number,
  readFirst: (p: P, line: string) => void,
): boolean {
  if (p.line !== "") return false;
  const head = scanHead(p.chunk, p.offset, p.end, p.budget, firstLimit, p.info.headers);
  if (head === null) return false;
  readFirst(p, head.first);
  afterScannedHead(p, p.offset, head.next);
  return true;
}

/**
 * Leaves the parser where its line steps would have at the end of a plain
 * head read whole from `start` to `next` (its first line read, its fields
 * in `p.info.headers`): the section's budget counted, the owner told, the
 * body's framing followed. The caller of a whole message's fast path that
 * cannot finish the message hands the rest to the parser from here.
 */
export function afterScannedHead(p: ParserState, start: number, next: number): void {
  p.plain = true;
  p.budget -= next - start;
  p.offset = next;
  p.lastLine = "";
  p.state = "HEADER";
  sectionEnd(p);
}

function isDigit(line: string, at: number): boolean {
  const c = line.charCodeAt(at);
  return c >= 0x30 && c <= 0x39;
}

/**
 * The parser's `parseHeader`, ours: what its regular expression takes (a
 * name without a colon, space or tab, then a colon, the value trimmed of
 * spaces and tabs), read with `indexOf`, and an obs-fold line appended to
 * the previous value as it does (RFC 9112 §5.2: a proxy replaces it with a
 * space). What it skips in silence is an error (RFC 9112 §5.1, §5.2): a
 * line that is no field, a fold before any field; so is a CR in a value
 * (RFC 9110 §5.5).
 */
function parseHeader(this: ParserState, line: string, headers: string[]): void {
  if (line.indexOf("\r") >= 0) throw new InvalidResponse("a CR in a header line");
  const first = line.charCodeAt(0);
  if (first === 0x20 || first === 0x09) {
    if (headers.length === 0) throw new InvalidResponse("a folded line before any header field");
    const folded = trimmed(line, 0);
    if (folded !== "") {
      const last = headers.length - 1;
      headers[last] = headers[last] === "" ? folded : `${headers[last]} ${folded}`;
    }
    return;
  }
  const colon = line.indexOf(":");
  if (colon <= 0 || line.lastIndexOf(" ", colon) >= 0 || line.lastIndexOf("\t", colon) >= 0) {
    throw new InvalidResponse(`not a header field: ${JSON.stringify(line.slice(0, 40))}`);
  }
  headers.push(line.slice(0, colon), trimmed(line, colon + 1));
}

/** `line` from `from` on, without the spaces and tabs around it (a field value, RFC 9112 §5.1). */
export function trimmed(line: string, from: number): string {
  let to = line.length;
  let c = line.charCodeAt(from);
  while (c === 0x20 || c === 0x09) c = line.charCodeAt(++from);
  c = line.charCodeAt(to - 1);
  while (to > from && (c === 0x20 || c === 0x09)) c = line.charCodeAt(--to - 1);
  return line.slice(from, to);
}

/**
 * The parser's `HEADER`, ours for both sides: at the end of the header
 * section, the owner's {@linkcode ParserState.headDone} decides how the
 * body is framed, and the parser follows (the parser's own step reads the
 * framing fields itself, lower-casing every name, before it asks).
 */
function header(this: ParserState): void {
  // Every line at hand, in one step: a turn of the parser's loop per line costs more than the line.
  let line = this.consumeLine();
  while (line !== undefined && line !== "") {
    this.parseHeader(line, this.info.headers);
    line = this.offset < this.end ? this.consumeLine() : undefined;
  }
  if (line !== undefined) sectionEnd(this);
}

/** The end of the header section: the owner decides how the body is framed, the parser follows. */
function sectionEnd(p: ParserState): void {
  const framing = p.headDone();
  if (framing.kind === "chunked") {
    p.isChunked = true;
    p.state = "BODY_CHUNKHEAD";
  } else if (framing.kind === "length" && framing.length > 0) {
    p.body_bytes = framing.length;
    p.state = "BODY_SIZED";
  } else if (framing.kind === "close") {
    p.body_bytes = null;
    p.state = "BODY_RAW";
  } else {
    p.nextRequest();
  }
}

/**
 * The parser's `BODY_SIZED`, without a closure per call: a body chunk (a
 * copy, {@linkcode bodyCopy}) goes to the owner as the parser's `userCall`
 * would send it (an error it throws passes as it is).
 */
function bodySized(this: ParserState): void {
  if (!passBody(this)) this.nextRequest();
}

/** The parser's `BODY_CHUNK`, as {@linkcode bodySized} reads a sized body. */
function bodyChunk(this: ParserState): void {
  if (!passBody(this)) this.state = "BODY_CHUNKEMPTYLINE";
}

/** Passes the body bytes at hand, up to those left; returns how many are left after them. */
function passBody(p: ParserState): number {
  const length = Math.min(p.end - p.offset, p.body_bytes!);
  p.isUserCall = true;
  (p[HTTPParser.kOnBody] as OnBody)(bodyCopy(p, length), 0, length);
  p.isUserCall = false;
  p.offset += length;
  return p.body_bytes! -= length;
}

type OnBody = (chunk: Uint8Array<ArrayBuffer>, start: number, length: number) => void;

/** Bytes of a body chunk up to this many are copied into the slab. */
const SLAB_CHUNK = 2 * 1024;
/** The slab small body chunks are copied into, a view each. */
const SLAB = 16 * 1024;

/**
 * The slab in use, one for every parser: a parser's own would be 16 KiB
 * more for every connection that ever received a small body, kept while it
 * idles. A view stays valid when the slab is replaced: a full slab is left
 * to the views still holding it, never written again.
 */
const slab: { bytes: Uint8Array<ArrayBuffer> | null; at: number } = { bytes: null, at: 0 };

/**
 * The next `length` bytes of the input as a copy the owner keeps (the
 * input's buffer is the connection's, read into again). A small one is a
 * view of the slab, shared with the chunks copied before it: on
 * Deno, a typed array of its own costs a buffer allocation of about a
 * microsecond, a view of a slab a tenth of it. Chunks go to default
 * streams and writes, which never transfer (detach) their buffer.
 */
function bodyCopy(p: ParserState, length: number): Uint8Array<ArrayBuffer> {
  return copyBody(p.chunk, p.offset, length);
}

/** `length` bytes of `chunk` from `from`, copied as {@linkcode bodyCopy} copies them. */
export function copyBody(
  chunk: Uint8Array,
  from: number,
  length: number,
): Uint8Array<ArrayBuffer> {
  if (length > SLAB_CHUNK) return chunk.slice(from, from + length) as Uint8Array<ArrayBuffer>;
  let bytes = slab.bytes;
  if (bytes === null || slab.at + length > bytes.length) {
    bytes = slab.bytes = new Uint8Array(SLAB);
    slab.at = 0;
  }
  const at = slab.at;
  for (let i = 0; i < length; i++) bytes[at + i] = chunk[from + i]!;
  slab.at = at + length;
  return bytes.subarray(at, at + length);
}

/** The parser's `nextRequest`, without a closure: the message is complete, the next one starts. */
function nextMessage(this: ParserState): void {
  this.isUserCall = true;
  (this[HTTPParser.kOnMessageComplete] as () => void)();
  this.isUserCall = false;
  this.reinitialize(this.type);
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
