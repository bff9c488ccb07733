/**
 * Requests read by the gateway's HTTP/1.1 server with `http-parser-js` (its
 * `HTTPParser` in `REQUEST` mode), one parser per connection, reinitialized
 * for each request. The parser runs the state machine (its `execute`,
 * stepping from state to state) and reads bodies (by length; the chunks
 * of a chunked one); the decisions are ours (`_http1_request_framing.ts`):
 * once the header section is complete, the parser is set to the framing
 * we chose. A request we cannot read safely
 * is a {@linkcode RequestRefused}: the server answers its status and
 * closes the connection.
 *
 * With the response parser (`_http1_parser.ts`) we share the steps that
 * read lines in Latin-1 within a budget, chunk-size lines (RFC 9112 §7.1)
 * and trailer sections (dropped, RFC 9112 §7.1.2), in
 * `_http1_parser_steps.ts`. The request's own steps are here, in place of
 * the parser's:
 *
 * - the request line: the parser's takes only upper-case methods of its
 *   own list and hands on their index; ours takes any token, case kept
 *   (RFC 9110 §9.1), one space apart (RFC 9112 §3: no lenient splitting
 *   on whitespace, which can smuggle requests past a proxy), with
 *   `HTTP/1.x` (else 505, RFC 9110 §15.6.6) and at most
 *   {@linkcode REQUEST_LINE_LIMIT} bytes (else 414); empty lines before it
 *   are ignored (RFC 9112 §2.2);
 * - a header line: the parser skips a line that is no field and folds an
 *   obs-fold line into the previous value; we refuse both (RFC 9112 §5.1,
 *   §5.2: a server MUST reject or replace obs-fold), a name that is no
 *   token (RFC 9110 §5.1) and a control character but a tab in a value
 *   (RFC 9110 §5.5; Go's server, Kubernetes' own, refuses them too), and
 *   split the line at its colon without the parser's regular expression;
 * - the end of the header section: the parser's own reading of
 *   Content-Length throws on `5` followed by `5, 5`, which RFC 9112 §6.3
 *   item 5 reads as 5, lets chunked win over a Content-Length (the shape of
 *   request smuggling), and lower-cases every name; ours hands the whole
 *   head to `requestHead` and follows its framing.
 *
 * A plain head received whole (the usual one) is read by the request
 * line's step in one pass over its bytes (`_head_scan.ts`); anything else
 * goes through the line steps, which decide every refusal. A request that
 * came whole in its first read (that head, and all of a body framed by its
 * length, or none) is read without the parser's state machine at all, by
 * the same steps.
 *
 * The request line and header section get {@linkcode HEAD_LIMIT} bytes in
 * all (else 431), a chunk-size line 4 KiB (else 400), a trailer section
 * {@linkcode HEAD_LIMIT} bytes (else 431). At the end of a request the
 * parser stops: bytes of a pipelined request that follows are left to the
 * caller, to feed after the next {@linkcode RequestParser.start}.
 *
 * @module
 */

import { HTTPParser } from "http-parser-js";
import {
  afterScannedHead,
  CHUNK_LINE_LIMIT,
  copyBody,
  type Fault,
  HEAD_LIMIT,
  type ParserState,
  readWhole,
  strictParser,
  trimmed,
} from "./_http1_parser_steps.ts";
import {
  type RequestBodyFraming,
  requestHead,
  type RequestHeadInfo,
  RequestRefused,
} from "./_http1_request_framing.ts";
import { isToken } from "./_field_syntax.ts";
import { scanHead } from "./_head_scan.ts";

export { HEAD_LIMIT, RequestRefused };
export type { RequestBodyFraming, RequestHeadInfo };

/** Most bytes of a request line (its CRLF apart): beyond, 414 (URI Too Long). */
export const REQUEST_LINE_LIMIT = 8 * 1024;

/** Told what one request holds, in order: its head, body chunks, its end. */
export interface RequestEvents {
  onHead(head: RequestHeadInfo): void;
  /** A chunk of the body (the coding removed), a copy the receiver keeps. */
  onBody(chunk: Uint8Array): void;
  /** The request (head and body) is complete. */
  onEnd(): void;
}

/**
 * Most bytes one {@linkcode RequestParser.feed} parses at once: the parser
 * counts what it consumed after the end of a request against its own
 * header limit (80 KiB), which a larger input could pass.
 */
const FEED_LIMIT = 64 * 1024;

/** The parts of a `REQUEST` parser we use or replace, beyond those of the response's. */
interface RequestState extends ParserState {
  headerSize: number;
  REQUEST_LINE(): boolean | void;
  /** Ours: the parts of the request line. */
  reqMethod: string;
  reqTarget: string;
  reqMinor: 0 | 1;
  /** Ours: whether the line being read is held to the request line's limit, not the head's. */
  lineCapped: boolean;
  /** Ours: the header section is complete; the framing to follow. */
  headDone(): RequestBodyFraming;
}

/**
 * One request at a time on one connection: {@linkcode start}, then
 * {@linkcode feed} until {@linkcode complete}; again for the next.
 */
export class RequestParser {
  #p: RequestState;
  #events: RequestEvents | null = null;
  /** No request is under way until the first start(). */
  #complete = true;
  #feeding = false;
  /** Nothing of the current request was fed yet. */
  #fresh = false;
  /** The head the fast path read, for the parser to go on with. */
  #scanned: RequestHeadInfo | null = null;

  constructor() {
    const p = strictParser(HTTPParser.REQUEST) as RequestState;
    p.REQUEST_LINE = requestLine;
    p.parseHeader = parseHeader;
    p.fault = requestFault;
    p.reqMethod = "";
    p.reqTarget = "";
    p.reqMinor = 1;
    p.lineCapped = false;
    p.headDone = () => this.#head();
    p[HTTPParser.kOnBody] = (chunk: Uint8Array) => this.#events!.onBody(chunk);
    p[HTTPParser.kOnMessageComplete] = () => this.#end();
    this.#p = p;
  }

  /**
   * Gets ready for the next request on the connection, told to `events`.
   *
   * @throws {Error} when called from within an event: the parser would go
   *   on with the next request in the bytes being fed, past what its caller
   *   is told it consumed.
   */
  start(events: RequestEvents): void {
    if (this.#feeding) throw new Error("RequestParser.start() from within a request's event");
    const p = this.#p;
    // At the end of a request the parser reinitialized itself; else (the first request, or
    // after a refusal or a receiver's error) it is done here.
    if (!this.#complete || p.state !== "REQUEST_LINE" || p.isUserCall) {
      p.reinitialize(HTTPParser.REQUEST);
    }
    p.headerSize = 0;
    p.budget = HEAD_LIMIT;
    p.stopped = false;
    p.textChunk = null;
    this.#events = events;
    this.#complete = false;
    this.#fresh = true;
  }

  /** Whether the current request has ended. */
  get complete(): boolean {
    return this.#complete;
  }

  /** Whether bytes of a request head were received but the head is not complete. */
  get inHead(): boolean {
    const p = this.#p;
    return !this.#complete &&
      (p.state === "HEADER" || (p.state === "REQUEST_LINE" && p.line !== "" && p.line !== "\r"));
  }

  /**
   * Parses `bytes` (not kept: the body chunks told are copies). It stops
   * right after the end of the current request: the bytes of the next one
   * are not consumed, and are to be fed after the next {@linkcode start}.
   *
   * @returns how many bytes it consumed (0 once the request is complete).
   * @throws {RequestRefused} for a request the server refuses; an error
   *   thrown by one of the events passes as it is.
   */
  feed(bytes: Uint8Array): number {
    const p = this.#p;
    // The decoded text of a chunk is cached by the chunk: the caller may reuse its buffer.
    p.textChunk = null;
    this.#feeding = true;
    try {
      let used = 0;
      if (this.#fresh) {
        this.#fresh = false;
        used = this.#whole(bytes);
      }
      while (used < bytes.length && !this.#complete) {
        const part = used === 0 && bytes.length <= FEED_LIMIT
          ? bytes
          : bytes.subarray(used, used + FEED_LIMIT);
        const result = p.execute(part);
        if (result instanceof Error) throw refusedOf(result);
        used += result;
        if (result < part.length) break;
      }
      return used;
    } finally {
      this.#feeding = false;
    }
  }

  /**
   * The client closed its side of the connection.
   *
   * @throws {RequestRefused} (400) when a request was partly received, head or body.
   */
  end(): void {
    if (this.#complete) return;
    const p = this.#p;
    if (p.state === "REQUEST_LINE" && (p.line === "" || p.line === "\r")) return;
    throw new RequestRefused(
      400,
      this.inHead
        ? "the connection closed in a request head"
        : "the connection closed before the request body ended",
    );
  }

  /**
   * The fast path of a request received whole: a plain head
   * (`_head_scan.ts`) and all of a body framed by its length, at the start
   * of `bytes`, read without the parser's state machine. The same steps
   * decide: the request line's (`requestLineOf`), `requestHead`, the body's
   * copy; what they refuse they throw as they would there. Returns the bytes
   * it consumed: the whole request; its head, when the body is chunked or
   * not all there (the parser reads on from the end of the head, as its own
   * steps would have left it); or 0, with nothing told, for a head that is
   * not plain or not all there (the parser reads it all).
   */
  #whole(bytes: Uint8Array): number {
    if (bytes.length > FEED_LIMIT) return 0;
    const p = this.#p;
    const fields = p.info.headers;
    const scanned = scanHead(bytes, 0, bytes.length, HEAD_LIMIT, REQUEST_LINE_LIMIT, fields);
    if (scanned === null) return 0;
    requestLineOf(p, scanned.first);
    const head = requestHead(p.reqMethod, p.reqTarget, p.reqMinor, fields);
    const { framing } = head;
    const length = framing.kind === "none" ? 0 : framing.kind === "length" ? framing.length : -1;
    if (length < 0 || scanned.next + length > bytes.length) {
      this.#scanned = head;
      afterScannedHead(p, 0, scanned.next);
      return scanned.next;
    }
    // The parser's fields go with the request: the next one gets a list of its own.
    p.info.headers = [];
    const events = this.#events!;
    events.onHead(head);
    if (length > 0) events.onBody(copyBody(bytes, scanned.next, length));
    this.#complete = true;
    // As at the end of a request through the parser: it stops at the next request line.
    p.stopped = true;
    events.onEnd();
    return scanned.next + length;
  }

  #head(): RequestBodyFraming {
    const p = this.#p;
    // Read already by the fast path, which handed the body to the parser.
    const head = this.#scanned ?? requestHead(p.reqMethod, p.reqTarget, p.reqMinor, p.info.headers);
    this.#scanned = null;
    p.userCall()(this.#events!.onHead(head));
    return head.framing;
  }

  #end(): void {
    this.#complete = true;
    // What follows is the next request: the parser stops at its request line.
    this.#p.stopped = true;
    this.#events!.onEnd();
  }
}

/**
 * The parser's `REQUEST_LINE`, ours (see the module documentation), unless
 * the request has ended: then it stops the parser.
 */
function requestLine(this: RequestState): boolean | void {
  if (this.stopped) return true;
  if (readWhole(this, REQUEST_LINE_LIMIT, requestLineOf)) return;
  // The request line gets REQUEST_LINE_LIMIT bytes and its CRLF, within what the head has left.
  const headLeft = this.budget;
  const lineLeft = REQUEST_LINE_LIMIT + 2 - this.line.length;
  const capped = this.lineCapped = lineLeft < headLeft;
  if (capped) this.budget = lineLeft;
  const line = this.consumeLine();
  if (capped) this.budget = headLeft - (lineLeft - this.budget);
  // RFC 9112 §2.2: empty lines before the request line are ignored.
  if (line === undefined || line === "") return;
  if (line.length > REQUEST_LINE_LIMIT) {
    throw new RequestRefused(414, `a request line longer than ${REQUEST_LINE_LIMIT} bytes`);
  }
  requestLineOf(this, line);
  this.state = "HEADER";
}

/** Reads `line` as the request line (RFC 9112 §3) into the parser's state. */
function requestLineOf(p: RequestState, line: string): void {
  // RFC 9112 §3: method SP request-target SP HTTP-version, one space each.
  const sp1 = line.indexOf(" ");
  const sp2 = sp1 < 0 ? -1 : line.indexOf(" ", sp1 + 1);
  if (sp2 < 0 || line.indexOf(" ", sp2 + 1) >= 0 || line.length !== sp2 + 9) {
    throw invalidLine(line);
  }
  // RFC 9112 §2.3: "HTTP/" DIGIT "." DIGIT.
  const major = line.charCodeAt(sp2 + 6) - 0x30;
  const minor = line.charCodeAt(sp2 + 8) - 0x30;
  if (
    !line.startsWith("HTTP/", sp2 + 1) || line.charCodeAt(sp2 + 7) !== 0x2e ||
    !(major >= 0 && major <= 9 && minor >= 0 && minor <= 9)
  ) {
    throw invalidLine(line);
  }
  if (major !== 1) throw new RequestRefused(505, `HTTP/${major}.${minor} request`);
  const method = line.slice(0, sp1);
  if (!isToken(method)) throw invalidLine(line);
  p.reqMethod = method;
  p.reqTarget = line.slice(sp1 + 1, sp2);
  // RFC 9110 §6.2: a higher minor version of HTTP/1 is read as the highest we implement.
  p.reqMinor = minor === 0 ? 0 : 1;
}

const invalidLine = (line: string) =>
  new RequestRefused(400, `invalid request line ${JSON.stringify(line.slice(0, 80))}`);

/**
 * The parser's `parseHeader`, ours: the parser's splits a line with a
 * regular expression and then skips a line that is no field or folds an
 * obs-fold line into the previous value; ours refuses those (RFC 9112
 * §5.1, §5.2), a name that is no token (RFC 9110 §5.1) and a control
 * character but a tab in a value (RFC 9110 §5.5), and splits with `indexOf`: about a fifth
 * faster per request (`bench/http1_request_parser_bench.ts`). The value
 * is trimmed of spaces and tabs as the parser's is.
 */
function parseHeader(line: string, headers: string[]): void {
  const colon = line.indexOf(":");
  const name = colon < 0 ? line : line.slice(0, colon);
  if (colon <= 0 || !isToken(name)) throw notAField(line);
  const value = trimmed(line, colon + 1);
  if (hasControl(value)) {
    throw new RequestRefused(400, `a control character in the value of ${name}`);
  }
  headers.push(name, value);
}

/** Whether `value` holds what no field value may: a control character but a tab (CR, NUL...). */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

function notAField(line: string): RequestRefused {
  const first = line.charCodeAt(0);
  if (first === 0x20 || first === 0x09) {
    return new RequestRefused(400, "a folded header line (obs-fold)");
  }
  return new RequestRefused(400, `not a header field: ${JSON.stringify(line.slice(0, 40))}`);
}

/** The request parser's errors for what the common steps find wrong. */
function requestFault(this: RequestState, fault: Fault, line: string): Error {
  switch (fault) {
    case "section-length":
      if (this.state === "BODY_CHUNKTRAILERS") {
        return new RequestRefused(431, `a trailer section longer than ${HEAD_LIMIT} bytes`);
      }
      if (this.state === "REQUEST_LINE" && this.lineCapped) {
        return new RequestRefused(414, `a request line longer than ${REQUEST_LINE_LIMIT} bytes`);
      }
      return new RequestRefused(
        431,
        `a request line and header section longer than ${HEAD_LIMIT} bytes`,
      );
    case "chunk-line-length":
      return new RequestRefused(400, `a chunk-size line longer than ${CHUNK_LINE_LIMIT} bytes`);
    case "chunk-line":
      return new RequestRefused(
        400,
        `invalid chunk-size line ${JSON.stringify(line.slice(0, 40))}`,
      );
  }
}

function refusedOf(error: Error): RequestRefused {
  if (error instanceof RequestRefused) return error;
  const code = (error as { code?: unknown }).code;
  return new RequestRefused(
    400,
    `malformed request: ${error.message}${typeof code === "string" ? ` (${code})` : ""}`,
  );
}
