/**
 * Responses read with `http-parser-js` (its `HTTPParser` in `RESPONSE`
 * mode), one parser per connection, reinitialized for each response. The
 * parser splits lines and header fields; the framing it then follows is
 * ours (`_http1_framing.ts`): once the header section is complete we set
 * its length state to our decision. Where the parser is lenient, a few of
 * its steps are replaced on the instance:
 *
 * - lines are decoded as Latin-1 (field values keep their obs-text bytes:
 *   the parser's `ascii` would clear their high bits), a window of bytes
 *   at a time, and counted: the status line and header section, and the
 *   trailer section, get {@linkcode HEAD_LIMIT} bytes each, a chunk-size
 *   line 4 KiB;
 * - a header line that is no field (no colon, space before the colon, a
 *   fold before any field) is an error, not skipped (RFC 9112 §5); so is
 *   a status code of more than three digits (RFC 9112 §4);
 * - a chunk-size line must be hexadecimal digits (RFC 9112 §7.1), where
 *   the parser's `parseInt` would take `-5`, `0x10` or `zz` (as the end);
 * - trailer fields are dropped (RFC 9112 §7.1.2 allows a recipient that
 *   removes the chunked coding to discard them);
 * - at the end of a final response the parser stops: what follows on the
 *   connection is no response of ours, and is counted as left over.
 *
 * Those steps are in `_http1_parser_steps.ts`. A plain head received whole
 * (the usual one) is read by the status line's step in one pass over its
 * bytes (`_head_scan.ts`), and its fields are then known to be a token name
 * and a value of visible ASCII ({@linkcode ParsedHead.plain}); anything
 * else goes through the line steps, which decide every refusal. A response
 * that came whole in its first read (that head, and all of a body framed by
 * its length, or none) is read without the parser's state machine at all,
 * by the same steps (`bench/RESULTS.md`, "requests and responses read
 * whole").
 *
 * @module
 */

import { HTTPParser } from "http-parser-js";
import {
  type Persistence,
  persistence,
  type ResponseFraming,
  responseFraming,
  type ResponseHead,
} from "./_http1_framing.ts";
import {
  afterScannedHead,
  type BodyFraming,
  copyBody,
  HEAD_LIMIT,
  InvalidResponse,
  type ParserState,
  statusLine,
  strictParser,
} from "./_http1_parser_steps.ts";
import { scanHead } from "./_head_scan.ts";

export { HEAD_LIMIT, InvalidResponse };

/** A final response's head, as the exchange needs it. */
export interface ParsedHead {
  readonly status: number;
  readonly statusText: string;
  /** Names and values, alternating, as received. */
  readonly headers: string[];
  /** Never `interim` nor `invalid`. */
  readonly framing: ResponseFraming;
  readonly persistence: Persistence;
  /**
   * Whether every field is a token name and a value of visible ASCII,
   * spaces and tabs (the head was read whole by `_head_scan.ts`): fields
   * a writer need not check again.
   */
  readonly plain: boolean;
}

/** Told what one response holds, in order: its head, body chunks, its end. */
export interface ResponseEvents {
  onHead(head: ParsedHead): void;
  /** A chunk of the body (the coding removed), a copy the receiver keeps. */
  onBody(chunk: Uint8Array): void;
  onEnd(): void;
}

const NO_BODY: BodyFraming = { kind: "none" };

/**
 * Most bytes one {@linkcode ResponseParser.feed} parses at once: the parser
 * counts what it consumed after the end of a response against its own
 * header limit (80 KiB), which a larger input could pass.
 */
const FEED_LIMIT = 64 * 1024;

/** One response at a time on one connection. */
export class ResponseParser {
  #p: ParserState;
  #events: ResponseEvents | null = null;
  #method = "GET";
  #interim = false;
  #complete = false;
  #leftover = 0;
  /** Nothing of the current response was fed yet. */
  #fresh = false;
  /** The head the fast path read and framed, for the parser to go on with. */
  #scanned: { message: ResponseMessage; framing: ResponseFraming } | null = null;

  constructor() {
    const p = strictParser();
    p.headDone = () => this.#head();
    p[HTTPParser.kOnBody] = (chunk: Uint8Array) => this.#events!.onBody(chunk);
    p[HTTPParser.kOnMessageComplete] = () => this.#end();
    this.#p = p;
  }

  /** Gets ready for the response to a `method` request, told to `events`. */
  start(method: string, events: ResponseEvents): void {
    const p = this.#p;
    // At the end of a response the parser reinitialized itself; else it is done here.
    if (!this.#complete || p.state !== "RESPONSE_LINE" || p.isUserCall) {
      p.reinitialize(HTTPParser.RESPONSE);
    }
    p.budget = HEAD_LIMIT;
    p.stopped = false;
    p.textChunk = null;
    this.#method = method;
    this.#events = events;
    this.#interim = false;
    this.#complete = false;
    this.#leftover = 0;
    this.#fresh = true;
  }

  /** Whether the response has ended. */
  get complete(): boolean {
    return this.#complete;
  }

  /** Bytes received after the end of the response (none on a sound connection). */
  get leftover(): number {
    return this.#leftover;
  }

  /**
   * Parses `bytes` (not kept: the body chunks told are copies).
   *
   * @throws {InvalidResponse} when the response cannot be forwarded.
   */
  feed(bytes: Uint8Array): void {
    let at = 0;
    if (this.#fresh) {
      this.#fresh = false;
      at = this.#whole(bytes);
    }
    for (; at < bytes.length && !this.#complete; at += FEED_LIMIT) {
      const part = at === 0 && bytes.length <= FEED_LIMIT
        ? bytes
        : bytes.subarray(at, at + FEED_LIMIT);
      const result = this.#p.execute(part);
      if (result instanceof Error) throw invalidOf(result);
    }
  }

  /**
   * The connection ended: that ends a body delimited by the close.
   *
   * @throws {InvalidResponse} when the response had not ended otherwise.
   */
  end(): void {
    if (this.#complete) return;
    const result = this.#p.finish();
    if (result instanceof Error || !this.#complete) {
      throw new InvalidResponse("the connection closed before the response ended");
    }
  }

  /**
   * The fast path of a final response received whole: a plain head
   * (`_head_scan.ts`) and all of a body framed by its length (or none), at
   * the start of `bytes`, read without the parser's state machine. The same
   * steps decide: the status line's, `responseFraming`, `persistence`, the
   * body's copy; what they refuse they throw as they would there. Returns
   * the bytes it consumed: the whole response; its head, for an interim
   * response or a body chunked, delimited by the close or not all there (the
   * parser reads on from the end of the head, as its own steps would have
   * left it); or 0, with nothing told, for a head that is not plain or not
   * all there (the parser reads it all).
   */
  #whole(bytes: Uint8Array): number {
    if (bytes.length > FEED_LIMIT) return 0;
    const p = this.#p;
    const headers = p.info.headers;
    const scanned = scanHead(bytes, 0, bytes.length, HEAD_LIMIT, HEAD_LIMIT, headers);
    if (scanned === null) return 0;
    statusLine(p, scanned.first);
    const message = this.#message(headers);
    const framing = responseFraming(message);
    if (framing.kind === "invalid") throw new InvalidResponse(framing.reason);
    const length = framing.kind === "none" ? 0 : framing.kind === "length" ? framing.length : -1;
    if (length < 0 || scanned.next + length > bytes.length) {
      this.#scanned = { message, framing };
      afterScannedHead(p, 0, scanned.next);
      return scanned.next;
    }
    // The parser's fields go with the response: the next one gets a list of its own.
    p.info.headers = [];
    const events = this.#events!;
    events.onHead(parsedHead(message, p.info.statusMessage, framing, true));
    if (length > 0) events.onBody(copyBody(bytes, scanned.next, length));
    this.#complete = true;
    this.#leftover = bytes.length - scanned.next - length;
    events.onEnd();
    return bytes.length;
  }

  /** What the framing is decided from: the status line read into the parser's `info`, `headers`. */
  #message(headers: string[]): ResponseMessage {
    const info = this.#p.info;
    return {
      method: this.#method,
      status: info.statusCode,
      versionMajor: info.versionMajor,
      versionMinor: info.versionMinor,
      headers,
    };
  }

  #head(): BodyFraming {
    const p = this.#p;
    // Read and framed already by the fast path, which handed the body to the parser.
    const scanned = this.#scanned;
    this.#scanned = null;
    const message = scanned?.message ?? this.#message(p.info.headers);
    const framing = scanned?.framing ?? responseFraming(message);
    if (framing.kind === "interim") {
      this.#interim = true;
      return NO_BODY; // the final response follows on the same connection
    }
    if (framing.kind === "invalid") throw new InvalidResponse(framing.reason);
    // As the parser's `userCall` would: an error the owner throws passes as it is.
    p.isUserCall = true;
    this.#events!.onHead(parsedHead(message, p.info.statusMessage, framing, p.plain));
    p.isUserCall = false;
    return framing;
  }

  #end(): void {
    if (this.#interim) {
      // The parser reinitializes itself for the final response: a new head, a new budget.
      this.#interim = false;
      this.#p.budget = HEAD_LIMIT;
      return;
    }
    this.#complete = true;
    const p = this.#p;
    // What follows is no response of ours: the parser stops at its next status line.
    p.stopped = true;
    this.#leftover = p.end - p.offset;
    this.#events!.onEnd();
  }
}

/** A response's head as the framing is decided from it, its fields the owner's to keep. */
interface ResponseMessage extends ResponseHead {
  readonly headers: string[];
}

/** A final response's head, as told to the owner. */
function parsedHead(
  message: ResponseMessage,
  statusText: string,
  framing: ResponseFraming,
  plain: boolean,
): ParsedHead {
  return {
    status: message.status,
    statusText,
    headers: message.headers,
    framing,
    persistence: persistence(message, framing),
    plain,
  };
}

function invalidOf(error: Error): InvalidResponse {
  if (error instanceof InvalidResponse) return error;
  const code = (error as { code?: unknown }).code;
  return new InvalidResponse(
    `unparsable: ${error.message}${typeof code === "string" ? ` (${code})` : ""}`,
  );
}
