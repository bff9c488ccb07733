/**
 * The gateway's own HTTP/1.1 server on one connection: a
 * {@linkcode ConnectionDriver} for `serveGuarded()`'s accept loop,
 * timeouts and connection cap, which reads requests with
 * `_http1_request_parser.ts` and writes responses itself, with no
 * `Request` or `Response` made per request. A proxy on `Deno.serve` spends
 * most of its time making and reading those (`bench/RESULTS.md`,
 * 2026-11-28: a raw socket relay does 1.1–1.4x nginx, the same relay
 * through `Deno.serve` 0.55–0.7x).
 *
 * One request at a time per connection (RFC 9112 §9.3.2: pipelined
 * requests are answered in order; their bytes wait in the socket). While a
 * request without a body is handled, the next read is already under way:
 * its end tells that the client went away (the request's `signal` aborts,
 * for a request still waiting for seats), its bytes are the next request.
 * A request refused by the parser gets its status and the connection is
 * closed. A request body streams to the upstream as it is read, with
 * `100 Continue` sent first when the client expects it; a response body
 * streams to the client, chunked for an HTTP/1.1 client when the upstream
 * did not give its length, delimited by the close for an HTTP/1.0 one.
 *
 * @module
 */

import type { ConnectionDriver, ConnectionHooks, ConnectionServer } from "./_deno_http.ts";
import {
  type RequestEvents,
  type RequestHeadInfo,
  RequestParser,
  RequestRefused,
} from "./_http1_request_parser.ts";
import { type BodyFraming, InvalidField, responseHead } from "./_response_head.ts";
import { BufferPool } from "./_buffer_pool.ts";
import { type Socket, socketOf } from "./_socket.ts";
import { writeAll } from "./_write_all.ts";

/** A request as the gateway's handler gets it. */
export interface GatewayRequest {
  readonly method: string;
  /** The request target as received (origin-form: path and query, still percent-encoded). */
  readonly target: string;
  /** Its fields, names and values alternating, as received. */
  readonly fields: string[];
  /** The body, streamed as it is read, or `null`. */
  readonly body: ReadableStream<Uint8Array> | null;
  readonly remoteAddr: Deno.NetAddr;
  /** Aborts when the client goes away before its response is out (made when first read). */
  readonly signal: AbortSignal;
  /** Whether the client went away. */
  readonly gone: boolean;
  /** The body's length when framed by `Content-Length`, else `null`. */
  readonly contentLength: number | null;
  /** Why the body was refused while it was read (invalid framing), else `null`. */
  readonly refused: RequestRefused | null;
}

/** A response as the gateway's handler gives it. */
export interface GatewayReply {
  readonly status: number;
  /** The reason phrase; the standard one when empty. */
  readonly statusText: string;
  /** Its end-to-end fields, names and values alternating. */
  readonly fields: string[];
  /**
   * How many entries of `fields`, from the first, are known to be a token
   * name and a value of visible ASCII, spaces and tabs, as the HTTP/1.1
   * client's fast path read them: written without checking them again
   * (default 0: every field is checked).
   */
  readonly checked?: number;
  /** The body: bytes, a stream, or `null` (none, or a HEAD's). */
  readonly body: Uint8Array | ReadableStream<Uint8Array> | null;
  /** Whether `fields` hold the body's `Content-Length` (then the body is exactly that long). */
  readonly lengthInFields: boolean;
}

/** The gateway's request handler: never rejects (a failure is a reply, a 5xx). */
export type GatewayHandler = (request: GatewayRequest) => Promise<GatewayReply>;

/**
 * What a connection reads a request into: most heads fit (a browser's are
 * a few hundred bytes to a few KiB). A read that fills it is followed by
 * reads into a buffer of {@linkcode READ_BUFFER} bytes, until the request
 * ends: a large head, or a body. An idle keep-alive connection holds only
 * this, its read pending.
 */
const IDLE_READ = 4 * 1024;
const READ_BUFFER = 16 * 1024;
/** A head and a body in hand up to this many bytes go out in one write. */
const ONE_WRITE = 16 * 1024;
/** The buffers responses are written from, lent per write: no connection holds one. */
const OUT = new BufferPool(ONE_WRITE, 64);
const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");
const encoder = new TextEncoder();

/** The driver serving each connection with `handler`. */
export function gatewayDriver(handler: GatewayHandler): ConnectionDriver {
  return (conn, _handler, _onError, hooks) => new GatewayConnection(conn, handler, hooks);
}

class GatewayConnection implements ConnectionServer, RequestEvents {
  readonly finished: Promise<void>;
  #conn: Deno.TcpConn;
  /** Its reads and writes. */
  #socket: Socket;
  #handler: GatewayHandler;
  #hooks: ConnectionHooks;
  #parser = new RequestParser();
  /** Where the connection is read: what is parsed is copied out of it (strings, body chunks). */
  #small = new Uint8Array(IDLE_READ);
  /** Where the rest of a request is read once a read filled {@linkcode #small}. */
  #large: Uint8Array | null = null;
  /** The buffer of the read in flight (one at a time): what it received is viewed there. */
  #reading: Uint8Array = this.#small;
  /** Bytes received and not parsed yet (the next request's). */
  #pending: Uint8Array | null = null;
  /** A read started while a request was handled: its bytes, or the end of the connection. */
  #ahead: Promise<Uint8Array | null> | null = null;
  #head: RequestHeadInfo | null = null;
  #chunks: Uint8Array[] = [];
  #ended = false;
  #gone = false;
  /** Why the current request's body was refused while it was read. */
  #refused: RequestRefused | null = null;
  #abort: AbortController | null = null;
  #busy = false;
  #closed = false;
  /** The pool's buffer a write in flight reads, given back when it settles. */
  #lent: Uint8Array | null = null;
  readonly #remoteAddr: Deno.NetAddr;

  constructor(conn: Deno.TcpConn, handler: GatewayHandler, hooks: ConnectionHooks) {
    this.#conn = conn;
    this.#socket = socketOf(conn);
    this.#remoteAddr = conn.remoteAddr;
    this.#handler = handler;
    this.#hooks = hooks;
    this.finished = this.#serve();
  }

  onHead(head: RequestHeadInfo): void {
    this.#head = head;
  }

  onBody(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
  }

  onEnd(): void {
    this.#ended = true;
  }

  close(): void {
    // Called between requests (the guard's timeouts, a shutdown): a pending read ends.
    if (this.#busy) return;
    this.#shut();
  }

  #shut(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Reset already.
    }
  }

  // The path of a request is written with as few async functions as it can: on Deno each one
  // awaited costs about 1,500 instructions (a frame, its promise, its resumption), a `.then` a
  // fraction of it (`bench/RESULTS.md`, "fewer async functions"). So the loop reads and handles
  // requests itself, and the steps it awaits return promises without being async.
  async #serve(): Promise<void> {
    try {
      while (!this.#closed) {
        this.#startRequest();
        let head: RequestHeadInfo | null = null;
        while ((head = this.#head) === null) {
          const read = this.#read();
          const bytes = read instanceof Promise ? await read : read;
          if (bytes === null) {
            this.#parser.end(); // throws for a head cut short
            break;
          }
          this.#feed(bytes);
        }
        if (head === null) break;
        this.#busy = true;
        this.#hooks.requestStarted();
        let keepAlive = false;
        try {
          const body = head.framing.kind === "none" ? null : this.#body(head.expectContinue);
          if (body === null) this.#watch();
          const reply = await this.#handler(
            new ConnectionRequest(this, head, body, this.#remoteAddr),
          );
          // A request body the handler did not read to its end leaves the connection unusable.
          const whole = body === null || this.#ended;
          if (!whole) body?.cancel().catch(() => {});
          keepAlive = await this.#respond(reply, head, head.keepAlive && whole && !this.#gone);
        } finally {
          this.#busy = false;
          this.#hooks.requestEnded();
        }
        if (!keepAlive) break;
      }
    } catch (e) {
      if (e instanceof RequestRefused && !this.#closed) await this.#refuse(e);
    } finally {
      this.#abort?.abort();
      this.#shut();
      // The read ahead, if any, ends with the connection.
      await this.#ahead?.catch(() => null);
    }
  }

  /** Gets ready to read the next request. */
  #startRequest(): void {
    this.#head = null;
    this.#chunks = [];
    this.#ended = false;
    this.#gone = false;
    this.#refused = null;
    this.#abort = null;
    // A read ahead in flight keeps its buffer (`#reading`) until it completes.
    this.#large = null;
    this.#parser.start(this);
  }

  /**
   * The next bytes: those pending (in hand), those of the read ahead, or a
   * new read; `null` at the end (a reset, or closed by us).
   */
  #read(): Uint8Array | null | Promise<Uint8Array | null> {
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      return pending;
    }
    const ahead = this.#ahead;
    if (ahead !== null) {
      this.#ahead = null;
      return ahead;
    }
    return this.#readInto().then(this.#received, this.#readFailed);
  }

  /** Starts a read: into the large buffer once a read of this request filled the small one. */
  #readInto(): Promise<number> {
    const buf = this.#large ?? this.#small;
    this.#reading = buf;
    return this.#socket.read(buf);
  }

  /** The `n` bytes the read in flight received. */
  #filled(n: number): Uint8Array {
    const buf = this.#reading;
    if (n === buf.length && buf === this.#small) this.#large = new Uint8Array(READ_BUFFER);
    return buf.subarray(0, n);
  }

  #received = (n: number): Uint8Array | null => n === 0 ? null : this.#filled(n);
  #readFailed = (): null => null;

  /** Parses `bytes`; what follows the end of the request waits for the next one (copied). */
  #feed(bytes: Uint8Array): void {
    const used = this.#parser.feed(bytes);
    if (used < bytes.length) this.#pending = bytes.slice(used);
  }

  /**
   * Starts reading ahead once the request has been read whole: the end of
   * the connection means the client went away. Bytes that come are the
   * next request's.
   */
  #watch(): void {
    if (this.#pending !== null || this.#ahead !== null || this.#closed) return;
    this.#ahead = this.#readInto().then(this.#readAhead, this.#readAheadFailed);
  }

  #readAhead = (n: number): Uint8Array | null => n === 0 ? this.#left() : this.#filled(n);
  #readAheadFailed = (): null => this.#left();

  #left(): null {
    this.#gone = true;
    this.#abort?.abort(new DOMException("the client went away", "AbortError"));
    return null;
  }

  /** The current request's `signal` (see {@linkcode GatewayRequest.signal}). */
  requestSignal(): AbortSignal {
    if (this.#abort === null) {
      this.#abort = new AbortController();
      if (this.#gone) this.#abort.abort(new DOMException("the client went away", "AbortError"));
    }
    return this.#abort.signal;
  }

  /** Whether the current request's client went away. */
  get requestGone(): boolean {
    return this.#gone;
  }

  /** Why the current request's body was refused, if it was. */
  get requestRefused(): RequestRefused | null {
    return this.#refused;
  }

  /** The request body as a stream, read from the connection as it is pulled. */
  #body(expectContinue: boolean): ReadableStream<Uint8Array> {
    let continued = !expectContinue;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (!continued) {
          continued = true;
          // RFC 9110 §10.1.1: the client waits for this before it sends the body.
          if (this.#chunks.length === 0 && !this.#ended) await this.#write(CONTINUE);
        }
        try {
          while (this.#chunks.length === 0 && !this.#ended) {
            const read = this.#read();
            const bytes = read instanceof Promise ? await read : read;
            if (bytes === null) {
              this.#left();
              this.#parser.end(); // throws: the body was cut short
            } else {
              this.#feed(bytes);
            }
          }
        } catch (e) {
          if (e instanceof RequestRefused) this.#refused = e;
          throw e;
        }
        for (const chunk of this.#chunks) controller.enqueue(chunk);
        this.#chunks.length = 0;
        if (this.#ended) {
          controller.close();
          this.#watch();
        }
      },
    }, { highWaterMark: 0 });
  }

  /**
   * Writes `reply`; resolves with whether the connection stays open after
   * it. Not itself async: a body in hand, or none, is one write.
   */
  #respond(reply: GatewayReply, head: RequestHeadInfo, keepAlive: boolean): Promise<boolean> {
    const { body } = reply;
    const noBody = body === null || head.method === "HEAD" || reply.status === 204 ||
      reply.status === 304;
    let framing: BodyFraming;
    if (noBody) framing = "none";
    else if (reply.lengthInFields) framing = "fields";
    else if (body instanceof Uint8Array) framing = "length";
    else framing = head.versionMinor === 1 ? "chunked" : "close";
    let text: string;
    try {
      text = responseHead(
        reply.status,
        reply.statusText,
        reply.fields,
        reply.checked ?? 0,
        framing,
        body instanceof Uint8Array ? body.byteLength : 0,
        keepAlive,
        head.versionMinor,
      );
    } catch (e) {
      if (!(e instanceof InvalidField)) throw e;
      if (body instanceof ReadableStream) body.cancel().catch(() => {});
      return this.#respond(badGateway(), head, false);
    }
    if (noBody || body === null) {
      if (body instanceof ReadableStream) body.cancel().catch(() => {});
      return keptIf(this.#writeHead(text, null), keepAlive);
    }
    if (body instanceof Uint8Array) return keptIf(this.#writeHead(text, body), keepAlive);
    return this.#stream(text, body, framing === "chunked", keepAlive && framing !== "close");
  }

  /** Writes a head, then streams `body` after it; resolves as {@linkcode #respond}. */
  async #stream(
    text: string,
    body: ReadableStream<Uint8Array>,
    chunked: boolean,
    keepAlive: boolean,
  ): Promise<boolean> {
    if (!(await this.#writeHead(text, null))) {
      body.cancel().catch(() => {});
      return false;
    }
    return await this.#pump(body, chunked) && keepAlive;
  }

  /**
   * Writes a head, and a body in hand after it (in one write when both fit);
   * false on failure. Not itself async: the usual case is one write.
   */
  #writeHead(text: string, body: Uint8Array | null): Promise<boolean> {
    const out = OUT.take();
    const { read, written } = encoder.encodeInto(text, out);
    if (read !== text.length || written !== text.length) {
      OUT.give(out);
      // Longer than the buffer, or beyond ASCII (a Latin-1 value): bytes of its own.
      return this.#writeBoth(latin1(text), body);
    }
    if (body === null) return this.#writeLent(out, out.subarray(0, written));
    if (written + body.byteLength <= out.byteLength) {
      out.set(body, written);
      return this.#writeLent(out, out.subarray(0, written + body.byteLength));
    }
    return this.#writeLent(out, out.subarray(0, written)).then((ok) => ok && this.#write(body));
  }

  /** Writes `bytes`, a view of `out` lent by the pool, which gets it back once the write settled. */
  #writeLent(out: Uint8Array, bytes: Uint8Array): Promise<boolean> {
    this.#lent = out;
    return writeAll(this.#socket, bytes).then(this.#wroteLent, this.#lentFailed);
  }

  #wroteLent = (): true => {
    this.#giveBack();
    return true;
  };

  #lentFailed = (): false => {
    this.#giveBack();
    this.#left();
    return false;
  };

  #giveBack(): void {
    const lent = this.#lent;
    this.#lent = null;
    if (lent !== null) OUT.give(lent);
  }

  async #writeBoth(head: Uint8Array, body: Uint8Array | null): Promise<boolean> {
    return await this.#write(head) && (body === null || await this.#write(body));
  }

  /** Streams `body` to the client; false when the client went away or the body failed. */
  async #pump(body: ReadableStream<Uint8Array>, chunked: boolean): Promise<boolean> {
    const reader = body.getReader();
    for (;;) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await reader.read();
      } catch {
        // The upstream failed mid-body: the client must not take what it got as whole.
        return false;
      }
      if (result.done) return !chunked || await this.#write(LAST_CHUNK);
      const chunk = result.value;
      if (chunk.byteLength === 0) continue;
      const ok = chunked
        ? await this.#write(encoder.encode(`${chunk.byteLength.toString(16)}\r\n`)) &&
          await this.#write(chunk) && await this.#write(CRLF)
        : await this.#write(chunk);
      if (!ok) {
        // The client is gone: the body is read to its end (the seat follows the upstream).
        reader.cancel().catch(() => {});
        return false;
      }
    }
  }

  /** Writes `bytes` whole; false when the connection failed. */
  #write(bytes: Uint8Array): Promise<boolean> {
    return writeAll(this.#socket, bytes).then(written, this.#writeFailed);
  }

  #writeFailed = (): false => {
    this.#left();
    return false;
  };

  /** Answers a request the parser refused, then the connection closes. */
  async #refuse(e: RequestRefused): Promise<void> {
    const message = `${e.message}\n`;
    const text = responseHead(
      e.status,
      "",
      ["content-type", "text/plain; charset=UTF-8"],
      0,
      "length",
      message.length,
      false,
      1,
    );
    await this.#write(latin1(text + message));
  }
}

/** A request on a connection: what changes as it is handled is the connection's. */
class ConnectionRequest implements GatewayRequest {
  readonly method: string;
  readonly target: string;
  readonly fields: string[];
  readonly body: ReadableStream<Uint8Array> | null;
  readonly remoteAddr: Deno.NetAddr;
  readonly contentLength: number | null;
  readonly #conn: GatewayConnection;

  constructor(
    conn: GatewayConnection,
    head: RequestHeadInfo,
    body: ReadableStream<Uint8Array> | null,
    remoteAddr: Deno.NetAddr,
  ) {
    this.#conn = conn;
    this.method = head.method;
    this.target = head.target;
    this.fields = head.fields;
    this.body = body;
    this.remoteAddr = remoteAddr;
    this.contentLength = head.framing.kind === "length" ? head.framing.length : null;
  }

  get signal(): AbortSignal {
    return this.#conn.requestSignal();
  }

  get gone(): boolean {
    return this.#conn.requestGone;
  }

  get refused(): RequestRefused | null {
    return this.#conn.requestRefused;
  }
}

const LAST_CHUNK = encoder.encode("0\r\n\r\n");

function written(): true {
  return true;
}

/** `written`, and then false when the connection does not stay open. */
function keptIf(written: Promise<boolean>, keepAlive: boolean): Promise<boolean> {
  return keepAlive ? written : written.then(() => false);
}
const CRLF = encoder.encode("\r\n");

/** The reply of an upstream response that cannot be passed on. */
export function badGateway(): GatewayReply {
  return textReply(502, "Bad Gateway\n");
}

/** A plain-text reply, as Hono's `c.text()` makes it. */
export function textReply(status: number, text: string, fields: string[] = []): GatewayReply {
  const body = encoder.encode(text);
  return {
    status,
    statusText: "",
    fields: [...fields, "content-type", "text/plain; charset=UTF-8"],
    body,
    lengthInFields: false,
  };
}

/** A byte string (Latin-1) as bytes. */
function latin1(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}
