/**
 * A raw HTTP/1.1 client for the wire tests of the gateway's own server
 * (`gateway_wire_test.ts`): it writes bytes as given and reads responses
 * off the socket as they are, checking their framing strictly (chunk-size
 * lines, the last chunk, no trailers), so that what a test asserts is what
 * was on the wire. Every read has a deadline: a server that does not answer
 * fails the test instead of hanging it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { systemClock } from "../../mod.ts";

/** How long a read waits by default, in ms. */
const READ_DEADLINE_MS = 5_000;

/** Latin-1 bytes of `text`: one byte per character. */
export function latin1Bytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}

/** `bytes` as Latin-1 text: one character per byte. */
export function latin1Text(bytes: Uint8Array): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 8192) {
    text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  }
  return text;
}

/** A response head as received. */
export interface WireHead {
  /** The head's bytes, its blank line included. */
  raw: string;
  /** `HTTP/1.1`. */
  version: string;
  status: number;
  reason: string;
  /** The field lines, names as written, in order. */
  fields: [string, string][];
}

/** A response as received. */
export interface WireResponse {
  head: WireHead;
  /** How its body was delimited. */
  framing: "none" | "length" | "chunked" | "close";
  /** The body, its transfer coding removed. */
  body: string;
  /** The body's bytes as received (chunk-size lines included). */
  rawBody: string;
  /** The sizes of the chunks, the last (0) included, for a chunked body. */
  chunkSizes: number[];
}

/** Options of {@linkcode WireClient.readResponse}. */
export interface ReadOptions {
  /** The request's method (a response to HEAD has no body). */
  method?: string;
  /** How long each read may wait, in ms. */
  deadlineMs?: number;
  /** Told each chunk's data of a chunked body, as it is read. */
  onChunk?: (data: string) => void;
}

/** The values of field `name` (case-insensitive) in `head`, in order. */
export function fieldValues(head: WireHead, name: string): string[] {
  const lower = name.toLowerCase();
  return head.fields.filter(([n]) => n.toLowerCase() === lower).map(([, v]) => v);
}

/** The value of field `name` in `head`: `null` when absent; fails when it is there twice. */
export function fieldOf(head: WireHead, name: string): string | null {
  const values = fieldValues(head, name);
  assert.ok(values.length <= 1, `${name} is there ${values.length} times in ${head.raw}`);
  return values[0] ?? null;
}

/** Told when a read reaches its deadline. */
export class ReadDeadline extends Error {
  override name = "ReadDeadline";
}

/**
 * A TCP connection to the gateway on 127.0.0.1, read as Latin-1 text;
 * disposable (closes the socket, idempotent).
 */
export class WireClient implements Disposable {
  readonly conn: Deno.TcpConn;
  /** Received and not consumed yet. */
  #text = "";
  #eof = false;
  #closed = false;
  #buf = new Uint8Array(64 * 1024);

  private constructor(conn: Deno.TcpConn) {
    this.conn = conn;
  }

  /** Connects to 127.0.0.1:`port`. */
  static async open(port: number): Promise<WireClient> {
    return new WireClient(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Whether the server's end of the stream (or a reset) was read. */
  get eof(): boolean {
    return this.#eof;
  }

  /** What was received and not consumed yet. */
  get pending(): string {
    return this.#text;
  }

  /** Writes `data` whole (text as Latin-1). */
  async send(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? latin1Bytes(data) : data;
    for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
  }

  /** {@linkcode send}, telling false when the server has closed or reset the connection. */
  async trySend(data: string | Uint8Array): Promise<boolean> {
    try {
      await this.send(data);
      return true;
    } catch (e) {
      if (
        e instanceof Deno.errors.BrokenPipe || e instanceof Deno.errors.ConnectionReset ||
        e instanceof Deno.errors.ConnectionAborted
      ) return false;
      throw e;
    }
  }

  /** Closes the connection (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // Closed already.
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Reads more bytes into the pending text; false at the end of the stream
   * (or a reset). Fails after `deadlineMs` (closing the connection).
   */
  async #more(deadlineMs: number, what: string): Promise<boolean> {
    if (this.#eof) return false;
    let timedOut = false;
    const timer = systemClock.setTimer(deadlineMs, () => {
      timedOut = true;
      this.close();
    });
    try {
      const n = await this.conn.read(this.#buf);
      if (n === null) {
        this.#eof = true;
        return false;
      }
      this.#text += latin1Text(this.#buf.subarray(0, n));
      return true;
    } catch (e) {
      if (timedOut) {
        throw new ReadDeadline(
          `no ${what} within ${deadlineMs} ms; received so far: ${
            JSON.stringify(this.#text.slice(0, 400))
          }`,
        );
      }
      if (e instanceof Deno.errors.ConnectionReset || e instanceof Deno.errors.ConnectionAborted) {
        this.#eof = true;
        return false;
      }
      throw e;
    } finally {
      timer.cancel();
    }
  }

  /** Consumes text up to and including `delimiter`; fails at the end of the stream. */
  async #until(delimiter: string, what: string, deadlineMs: number): Promise<string> {
    for (;;) {
      const at = this.#text.indexOf(delimiter);
      if (at >= 0) {
        const out = this.#text.slice(0, at + delimiter.length);
        this.#text = this.#text.slice(at + delimiter.length);
        return out;
      }
      if (!(await this.#more(deadlineMs, what))) {
        assert.fail(
          `the connection closed before ${what}; received: ${
            JSON.stringify(this.#text.slice(0, 400))
          }`,
        );
      }
    }
  }

  /** Consumes exactly `n` bytes. */
  async readExactly(
    n: number,
    what = `${n} bytes`,
    deadlineMs = READ_DEADLINE_MS,
  ): Promise<string> {
    while (this.#text.length < n) {
      if (!(await this.#more(deadlineMs, what))) {
        assert.fail(
          `the connection closed before ${what} (${this.#text.length} of ${n}): ${
            JSON.stringify(this.#text.slice(0, 400))
          }`,
        );
      }
    }
    const out = this.#text.slice(0, n);
    this.#text = this.#text.slice(n);
    return out;
  }

  /** Consumes a response head (status line to blank line) and parses it. */
  async readHead(deadlineMs = READ_DEADLINE_MS): Promise<WireHead> {
    const raw = await this.#until("\r\n\r\n", "a response head", deadlineMs);
    const lines = raw.slice(0, -4).split("\r\n");
    const statusLine = /^(HTTP\/\d\.\d) (\d{3}) (.*)$/.exec(lines[0]!);
    assert.ok(statusLine !== null, `not a status line: ${JSON.stringify(lines[0])}`);
    const fields: [string, string][] = [];
    for (const line of lines.slice(1)) {
      const field = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
      assert.ok(field !== null, `not a field line: ${JSON.stringify(line)} in ${raw}`);
      fields.push([field[1]!, field[2]!]);
    }
    return {
      raw,
      version: statusLine[1]!,
      status: Number(statusLine[2]),
      reason: statusLine[3]!,
      fields,
    };
  }

  /**
   * Consumes one response, interim (1xx) ones included, its body framed as
   * RFC 9112 §6.3 says for a response to `method` (default `GET`); a
   * chunked body must be framed exactly (hex sizes, CRLFs, the last chunk,
   * no trailer), each chunk's data told to `onChunk` as it is read.
   */
  async readResponse(options: ReadOptions = {}): Promise<WireResponse> {
    const method = options.method ?? "GET";
    const deadlineMs = options.deadlineMs ?? READ_DEADLINE_MS;
    const head = await this.readHead(deadlineMs);
    const empty = { head, body: "", rawBody: "", chunkSizes: [] };
    if (
      method === "HEAD" || (head.status >= 100 && head.status < 200) || head.status === 204 ||
      head.status === 304
    ) return { ...empty, framing: "none" };
    const te = fieldValues(head, "transfer-encoding");
    if (te.length > 0) {
      assert.deepEqual(te.map((v) => v.toLowerCase()), ["chunked"], "the transfer coding");
      assert.equal(fieldOf(head, "content-length"), null, "Content-Length with chunked");
      let body = "", rawBody = "";
      const chunkSizes: number[] = [];
      for (;;) {
        const line = await this.#until("\r\n", "a chunk-size line", deadlineMs);
        rawBody += line;
        assert.match(line, /^[0-9a-fA-F]+\r\n$/, "a chunk-size line (no extension)");
        const size = parseInt(line, 16);
        chunkSizes.push(size);
        if (size === 0) {
          const end = await this.readExactly(2, "the end of the chunked body", deadlineMs);
          rawBody += end;
          assert.equal(end, "\r\n", "no trailer section after the last chunk");
          return { head, framing: "chunked", body, rawBody, chunkSizes };
        }
        const data = await this.readExactly(size, `a chunk of ${size} bytes`, deadlineMs);
        const crlf = await this.readExactly(2, "the CRLF after a chunk", deadlineMs);
        assert.equal(crlf, "\r\n", "the CRLF after a chunk's data");
        body += data;
        rawBody += data + crlf;
        options.onChunk?.(data);
      }
    }
    const length = fieldOf(head, "content-length");
    if (length !== null) {
      assert.match(length, /^\d+$/);
      const body = await this.readExactly(Number(length), "the response body", deadlineMs);
      return { head, framing: "length", body, rawBody: body, chunkSizes: [] };
    }
    const body = await this.readToEnd(deadlineMs);
    return { head, framing: "close", body, rawBody: body, chunkSizes: [] };
  }

  /** Consumes everything until the server closes; fails when it is still open after `deadlineMs`. */
  async readToEnd(deadlineMs = READ_DEADLINE_MS): Promise<string> {
    while (await this.#more(deadlineMs, "end of the stream")) {
      // Keep reading.
    }
    const out = this.#text;
    this.#text = "";
    return out;
  }

  /**
   * Asserts that the server closes the connection within `deadlineMs`
   * without sending anything more; resolves with how long that took.
   */
  async expectClosed(deadlineMs = READ_DEADLINE_MS): Promise<number> {
    const start = performance.now();
    let rest: string;
    try {
      rest = await this.readToEnd(deadlineMs);
    } catch (e) {
      if (e instanceof ReadDeadline) {
        assert.fail(`the server kept the connection open for ${deadlineMs} ms`);
      }
      throw e;
    }
    assert.equal(rest, "", "nothing more before the close");
    return performance.now() - start;
  }
}
