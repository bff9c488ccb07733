/**
 * One connection of the HTTP/1.1 upstream client: TCP (Nagle's algorithm
 * off: a request head and its body go out as written), then TLS for an
 * `https:` origin, with one response parser of its own. While it idles in
 * the pool, a read is kept pending on it ({@linkcode
 * Http1Connection.watch}), so that an upstream that closes it (or speaks
 * out of turn) is seen at once and the connection dropped before a request
 * is sent on it; that read, when the connection is taken, becomes the
 * first read of the response.
 *
 * @module
 */

import { ResponseParser } from "./_http1_parser.ts";
import { type Socket, socketOf } from "./_socket.ts";
import { writeAll } from "./_write_all.ts";

/** Where a pool connects. */
export interface Origin {
  /** `http:` or `https:` and the authority, as the pool is keyed: `http://127.0.0.1:8000`. */
  readonly key: string;
  /** What `Host` says: the URL's host (with its port unless the default). */
  readonly host: string;
  /** Host name or IP address to connect to (an IPv6 address without brackets). */
  readonly hostname: string;
  readonly port: number;
  readonly tls: boolean;
  /** Root certificates trusted for TLS besides the default ones (PEM). */
  readonly caCerts?: readonly string[] | undefined;
}

/** The read buffer of a connection waiting for a response head. */
const HEAD_BUFFER = 16 * 1024;
/** Where a request head is encoded; a longer one gets a buffer of its own. */
const OUT_BUFFER = 4 * 1024;

const encoder = new TextEncoder();
/** The read buffer while a body streams (what Deno's own `fetch` reads at once). */
const BODY_BUFFER = 64 * 1024;

/**
 * Connects to `origin`. `signal` aborts the dial (TCP, and the TLS
 * handshake), not the connection once made.
 */
export async function dial(origin: Origin, signal?: AbortSignal): Promise<Http1Connection> {
  const tcp = await Deno.connect({
    hostname: origin.hostname,
    port: origin.port,
    ...(signal !== undefined && { signal }),
  });
  tcp.setNoDelay(true);
  if (!origin.tls) return new Http1Connection(tcp);
  // `Deno.connectTls` returns a TlsConn, which has no `setNoDelay`: TLS goes over our TCP.
  const tls = await Deno.startTls(tcp, {
    hostname: origin.hostname,
    alpnProtocols: ["http/1.1"],
    ...(origin.caCerts !== undefined && { caCerts: [...origin.caCerts] }),
  });
  const abort = () => tls.close();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    await tls.handshake();
  } catch (e) {
    try {
      tls.close();
    } catch {
      // closed by the abort
    }
    throw e;
  } finally {
    signal?.removeEventListener("abort", abort);
  }
  return new Http1Connection(tls);
}

/** A connection and its parser; one exchange at a time. */
export class Http1Connection {
  /** The parser of its responses, reused from one to the next. */
  readonly parser: ResponseParser = new ResponseParser();
  /** When it may no longer be taken from the pool (the pool's clock). */
  expiresAt = 0;
  /** Where it is in its pool's list of connections in use, `-1` while in none (the pool's). */
  slot = -1;
  #conn: Deno.Conn;
  /** Its reads and writes. */
  #socket: Socket;
  #head = new Uint8Array(HEAD_BUFFER);
  /** Where request heads are encoded (one exchange at a time, each awaiting its write). */
  #out = new Uint8Array(OUT_BUFFER);
  #buf: Uint8Array = this.#head;
  /** The read started while idle, for the next exchange. */
  #ahead: Promise<number> | null = null;
  /** The last read started: settles once the socket is done with {@linkcode #buf}. */
  #last: Promise<unknown> = Promise.resolve();
  /** Called if the read ahead ends while still idle. */
  #gone: (() => void) | null = null;
  #closed = false;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
    this.#socket = socketOf(conn);
  }

  /** Whether it was closed (by us, or found closed by the upstream). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Reads the next bytes: resolves with how many were received (then
   * {@linkcode received} is a view of them, valid until the next read), 0
   * at the end of the stream. Not itself async: the caller awaits the read
   * itself.
   */
  read(): Promise<number> {
    const ahead = this.#ahead;
    if (ahead !== null) {
      this.#ahead = null;
      return ahead;
    }
    return this.#last = this.#socket.read(this.#buf);
  }

  /** The `n` bytes the last read received. */
  received(n: number): Uint8Array {
    return this.#buf.subarray(0, n);
  }

  /** Reads into a larger buffer from now on, until the connection idles again. */
  streaming(): void {
    if (this.#buf === this.#head && this.#ahead === null) this.#buf = new Uint8Array(BODY_BUFFER);
  }

  /** Writes a request head (a byte string) whole. */
  writeHead(text: string): Promise<void> {
    return writeAll(this.#socket, latin1Bytes(text, this.#out));
  }

  /** Writes `bytes` whole. */
  write(bytes: Uint8Array): Promise<void> {
    return writeAll(this.#socket, bytes);
  }

  /** The connection goes idle: back to the small buffer. */
  park(): void {
    this.#buf = this.#head;
  }

  /**
   * Watches the idle connection: a read is started, and `gone` is called if
   * it ends (closed, reset, or bytes nobody asked for) before
   * {@linkcode busy}. Every request parks its connection, so nothing here
   * is made per call: `gone` is the pool's one function for this
   * connection, and the read's reaction is bound once.
   */
  watch(gone: () => void): void {
    this.#gone = gone;
    const ahead = this.#socket.read(this.#buf);
    this.#ahead = ahead;
    this.#last = ahead;
    ahead.then(this.#aheadEnded, this.#aheadEnded);
  }

  /** The read ahead ended: while still idle, the connection is gone. */
  #aheadEnded = (): void => {
    const gone = this.#gone;
    if (gone !== null && this.#ahead !== null) {
      this.#gone = null;
      gone();
    }
  };

  /** Taken for an exchange: the read ahead is now the response's. */
  busy(): void {
    this.#gone = null;
  }

  /** Where the pool drops this connection should it end while idle (the pool's, set once). */
  onGone: () => void = noop;

  /**
   * Closes it (idempotent); settles once its pending read, if any, has
   * ended, so that nothing of it outlives the call.
   */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#gone = null;
      try {
        this.#conn.close();
      } catch {
        // Already closed.
      }
    }
    return this.#last.then(noop, noop);
  }
}

/**
 * A byte string as bytes (Latin-1: field values are byte strings, not
 * UTF-8), in `into` when it fits.
 */
function latin1Bytes(text: string, into: Uint8Array): Uint8Array {
  // `encodeInto` is the cheap way for ASCII (no allocation); UTF-8 and Latin-1 agree there.
  const { read, written } = encoder.encodeInto(text, into);
  if (read === text.length && written === text.length) return into.subarray(0, written);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff) throw new TypeError(`Cannot send the request: a character beyond Latin-1`);
    out[i] = c;
  }
  return out;
}

function noop(): void {}
