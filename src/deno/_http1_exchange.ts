/**
 * One request and its response on one connection of the HTTP/1.1 upstream
 * client. The head goes out in one write; the request body, if any, is
 * written while the response is read, so that an upstream answering early
 * is heard. The response resolves once its head has arrived: its body is
 * the bytes themselves when they came with the head (nothing to wait for),
 * else a stream that reads the socket only when its reader asks (a pull per
 * read: the upstream is read no faster than the client takes the body).
 *
 * The connection goes back to its pool only when both bodies ended cleanly
 * and the response lets it persist (RFC 9112 §9.3); any failure closes it.
 * A body the upstream cuts short errors the stream: it never ends cleanly
 * short of its length.
 *
 * @module
 */

import type { CallCancel } from "./_call_cancel.ts";
import type { Http1Connection } from "./_http1_connection.ts";
import type { ParsedHead, ResponseEvents } from "./_http1_parser.ts";
import { BodySourceError, type RequestHead, writeBody } from "./_http1_request.ts";
import { endToEndFields, withOneLength } from "./_forwarded_headers.ts";

/**
 * The connection failed before any byte of the response arrived: it may
 * have been closed by the upstream while idle. `written` tells whether the
 * request head had been written.
 */
export class NoResponse extends Error {
  override name = "NoResponse";
  readonly written: boolean;
  constructor(written: boolean, cause: unknown) {
    super("the upstream closed the connection without a response", { cause });
    this.written = written;
  }
}

/** One request to send. */
export interface ExchangeRequest {
  method: string;
  head: RequestHead;
  body: ReadableStream<Uint8Array> | null;
  cancel: CallCancel | undefined;
}

/** Told once an exchange is over: whether its connection may carry another, and for how long. */
export type ExchangeDone = (
  conn: Http1Connection,
  reusable: boolean,
  keepAliveMs: number | null,
) => void;

/**
 * A response as the HTTP/1.1 client read it: its head, and its body, or
 * what will give it.
 */
export interface UpstreamReply {
  readonly status: number;
  readonly statusText: string;
  /**
   * Its end-to-end fields, names and values alternating, as received (the
   * hop-by-hop ones, and those `Connection` lists, left out: RFC 9110
   * §7.6.1).
   */
  readonly fields: string[];
  /**
   * Whether every one of `fields` is a token name and a value of visible
   * ASCII, spaces and tabs ({@linkcode ParsedHead.plain}).
   */
  readonly plain: boolean;
  /** The body's length when the upstream framed it by `Content-Length`, else `null`. */
  readonly length: number | null;
  /**
   * The whole body when it came with the head, a stream of it otherwise
   * (read from the connection as it is pulled), `null` when there is none.
   */
  readonly body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;
}

/** Sends `request` on `conn`; resolves with the reply once its head has arrived. */
export function exchange(
  conn: Http1Connection,
  request: ExchangeRequest,
  done: ExchangeDone,
): Promise<UpstreamReply> {
  return new Exchange(conn, request, done).run();
}

class Exchange implements ResponseEvents {
  #conn: Http1Connection;
  #req: ExchangeRequest;
  #done: ExchangeDone;
  #head: ParsedHead | null = null;
  #chunks: Uint8Array<ArrayBuffer>[] = [];
  #ended = false;
  #failed = false;
  #over = false;
  #received = 0;
  /** The request body being written, or `null`. */
  #writing: Promise<void> | null = null;
  /** Whether every byte of the request body is on the wire (true without one). */
  #sent = true;
  #onAbort = (): void => this.#fail();

  constructor(conn: Http1Connection, req: ExchangeRequest, done: ExchangeDone) {
    this.#conn = conn;
    this.#req = req;
    this.#done = done;
  }

  onHead(head: ParsedHead): void {
    this.#head = head;
  }

  onBody(chunk: Uint8Array<ArrayBuffer>): void {
    this.#chunks.push(chunk);
  }

  onEnd(): void {
    this.#ended = true;
  }

  async run(): Promise<UpstreamReply> {
    const conn = this.#conn;
    const { cancel } = this.#req;
    conn.parser.start(this.#req.method, this);
    try {
      if (cancel !== undefined) {
        if (cancel.aborted) throw cancel.reason;
        cancel.beforeSend?.();
        cancel.watch(this.#onAbort);
      }
      try {
        await conn.writeHead(this.#req.head.text);
      } catch (e) {
        throw new NoResponse(false, e);
      }
      if (this.#req.body !== null) this.#writeBody(this.#req.body);
      while (this.#head === null) {
        let n: number;
        try {
          n = await conn.read();
        } catch (e) {
          if (this.#received === 0) throw new NoResponse(true, e);
          throw e;
        }
        if (n === 0) {
          if (this.#received === 0) throw new NoResponse(true, null);
          conn.parser.end(); // throws: the head had not ended
        } else {
          this.#received += n;
          conn.parser.feed(conn.received(n));
        }
      }
      return this.#reply(this.#head);
    } catch (e) {
      this.#fail();
      throw cancel?.aborted ? cancel.reason : e;
    }
  }

  #writeBody(body: ReadableStream<Uint8Array>): void {
    this.#sent = false;
    this.#writing = writeBody(this.#conn, body, this.#req.head, () => this.#sent = true).catch(
      (e) => {
        this.#failed = true;
        // The upstream waits for bytes that will not come: end the exchange. A failed write is
        // left to the response's read: the upstream may have answered before it stopped reading.
        if (e instanceof BodySourceError) this.#fail();
      },
    );
  }

  #reply(head: ParsedHead): UpstreamReply {
    let body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null = null;
    if (head.framing.kind !== "none") {
      body = this.#ended ? concat(this.#chunks) : this.#stream();
    }
    // End-to-end fields only (RFC 9110 §7.6.1): the hop-by-hop ones described this connection.
    // A body framed by its length carries that length once, as the framing read it.
    const fields = head.framing.kind === "length"
      ? withOneLength(endToEndFields(head.headers), head.framing.length)
      : endToEndFields(head.headers);
    if (this.#ended) this.#settle();
    return {
      status: head.status,
      statusText: head.statusText,
      fields,
      plain: head.plain,
      length: head.framing.kind === "length" ? head.framing.length : null,
      body,
    };
  }

  #stream(): ReadableStream<Uint8Array> {
    this.#conn.streaming();
    return new ReadableStream<Uint8Array>({
      pull: (controller) => this.#pull(controller),
      cancel: () => this.#fail(),
    }, { highWaterMark: 0 });
  }

  async #pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    const conn = this.#conn;
    try {
      while (this.#chunks.length === 0 && !this.#ended) {
        const n = await conn.read();
        // The end of the connection ends a close-delimited body; any other, it leaves short.
        if (n === 0) conn.parser.end();
        else conn.parser.feed(conn.received(n));
      }
    } catch (e) {
      this.#fail();
      const { cancel } = this.#req;
      throw cancel?.aborted ? cancel.reason : e;
    }
    for (const chunk of this.#chunks) controller.enqueue(chunk);
    this.#chunks.length = 0;
    if (this.#ended) {
      controller.close();
      this.#settle();
    }
  }

  /** The response has ended: over once the request body is written too. */
  #settle(): void {
    const writing = this.#writing;
    if (writing === null) return this.#finish();
    if (this.#sent) return void writing.then(() => this.#finish());
    // The last write may just not have been told yet; past this turn's I/O, the upstream
    // answered before it took the whole body and will not read the rest (RFC 9112 §9.5): stop
    // sending it and close (the response itself is complete).
    void Promise.race([writing, afterIo()]).then(() => {
      if (this.#sent) void writing.then(() => this.#finish());
      else this.#fail();
    });
  }

  #fail(): void {
    this.#failed = true;
    void this.#conn.close();
    this.#finish();
  }

  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.#req.cancel?.unwatch();
    const head = this.#head;
    const reusable = !this.#failed && this.#ended && head !== null &&
      head.persistence.reusable && this.#conn.parser.leftover === 0 && !this.#conn.closed;
    this.#done(this.#conn, reusable, head?.persistence.keepAliveMs ?? null);
  }
}

/**
 * Resolves once the event loop has polled for I/O again (`setImmediate`): a
 * matter of order, not of time; no clock is read.
 */
function afterIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function concat(chunks: Uint8Array<ArrayBuffer>[]): Uint8Array<ArrayBuffer> {
  if (chunks.length === 1) return chunks[0]!;
  let size = 0;
  for (const chunk of chunks) size += chunk.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  chunks.length = 0;
  return out;
}
