/**
 * A WebSocket client connection (RFC 6455) on Deno's TCP and TLS
 * connections, behind the {@linkcode CoordinatorSocket} interface: what
 * `noDelayWebSocket()` returns. Its reason to exist is `setNoDelay(true)`,
 * which Deno's `WebSocket` does not offer (see `no_delay_websocket.ts`).
 *
 * Life of a socket: dial (TCP, then TLS for `wss:`), opening handshake,
 * `open`; then frames both ways until the closing handshake, a protocol
 * error or a broken connection; then the TCP connection is closed, every
 * read and write has ended, and only then `close` fires, once. Frames queued
 * in one synchronous run leave in one write, and writes never overlap.
 *
 * @module
 */

import type { CoordinatorSocket } from "../remote/client_types.ts";
import type { Clock, Timer } from "../fairqueuing/clock.ts";
import {
  CLOSE_ABNORMAL,
  CLOSE_NO_STATUS,
  CLOSE_PROTOCOL_ERROR,
  closePayload,
  encodeFrame,
  encodeTextFrame,
  type Frame,
  FrameReader,
  isValidCloseCode,
  MaskSource,
  OP_CLOSE,
  OP_PING,
  OP_PONG,
  ProtocolError,
} from "./_websocket_frames.ts";
import {
  acceptFor,
  checkUpgradeResponse,
  HandshakeError,
  MAX_HEAD_BYTES,
  randomKey,
  upgradeRequest,
} from "./_websocket_handshake.ts";
import { decodeText, MessageAssembler } from "./_websocket_messages.ts";
import { FrameWriter } from "./_websocket_writer.ts";
import { writeAll } from "./_write_all.ts";

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** Opens the byte stream to `url`'s host; aborting `signal` cancels it. */
export type Dial = (url: URL, signal: AbortSignal) => Promise<Deno.Conn>;

/** How a {@linkcode WebSocketClient} runs, checked by `noDelayWebSocket()`. */
export interface WebSocketClientSettings {
  /** The dialer: {@linkcode dialNoDelay} (tests wrap it to watch the writes). */
  dial: Dial;
  /** Largest message accepted, in bytes. */
  maxMessageBytes: number;
  /** How long a closing handshake may take before the connection is cut, in ms. */
  closeTimeoutMs: number;
  /** For the close timeout. */
  clock: Clock;
}

/**
 * TCP with `TCP_NODELAY` set, then TLS over it for `wss:` (`Deno.connectTls`
 * returns a `TlsConn`, which has no `setNoDelay`: the option is set on the
 * TCP connection before `Deno.startTls` takes it over).
 */
export async function dialNoDelay(
  url: URL,
  signal: AbortSignal,
  caCerts?: string[],
): Promise<Deno.Conn> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const secure = url.protocol === "wss:";
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port);
  const tcp = await Deno.connect({ hostname, port, signal });
  tcp.setNoDelay(true);
  if (!secure) return tcp;
  return await Deno.startTls(tcp, { hostname, ...(caCerts !== undefined && { caCerts }) });
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One client connection; created by `noDelayWebSocket()`'s factory. */
export class WebSocketClient implements CoordinatorSocket {
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  #state = CONNECTING;
  #url: URL;
  #s: WebSocketClientSettings;
  #abort = new AbortController();
  #conn: Deno.Conn | null = null;
  #connClosed = false;
  #chunk = new Uint8Array(64 * 1024);
  #reader: FrameReader;
  #messages: MessageAssembler;
  #masks = new MaskSource();
  #writer: FrameWriter | null = null;
  #closeSent = false;
  #closeTimer: Timer | null = null;
  /** What `close` will report. */
  #code = CLOSE_ABNORMAL;
  #reason = "";
  #clean = false;

  constructor(url: URL, settings: WebSocketClientSettings) {
    this.#url = url;
    this.#s = settings;
    this.#reader = new FrameReader(settings.maxMessageBytes);
    this.#messages = new MessageAssembler(settings.maxMessageBytes);
    void this.#run();
  }

  get readyState(): number {
    return this.#state;
  }

  send(data: string): void {
    if (this.#state === CONNECTING) {
      throw new DOMException("Cannot send: the WebSocket is still connecting", "InvalidStateError");
    }
    // The WebSocket API drops what is sent once closing has begun.
    if (this.#state !== OPEN) return;
    this.#writer!.push(encodeTextFrame(String(data), this.#masks));
  }

  close(code?: number, reason = ""): void {
    if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) {
      throw new DOMException(
        `Cannot close a WebSocket with code ${code}: expected 1000 or 3000-4999`,
        "InvalidAccessError",
      );
    }
    if (encoder.encode(reason).length > 123) {
      throw new DOMException(
        `Cannot close a WebSocket: the reason must be 123 bytes or less, got ${reason.length} characters`,
        "SyntaxError",
      );
    }
    if (this.#state === CLOSING || this.#state === CLOSED) return;
    if (this.#state === CONNECTING) {
      // Cancel whatever stage the opening is at: the dial, TLS or the handshake.
      this.#state = CLOSING;
      this.#abort.abort();
      this.#closeConn();
      return;
    }
    this.#state = CLOSING;
    this.#sendClose(code === undefined ? new Uint8Array(0) : closePayload(code, reason));
    this.#armCloseTimer();
  }

  async #run(): Promise<void> {
    try {
      await this.#open();
    } catch {
      // Refused, failed handshake, or closed while connecting: 1006, no `open`.
      await this.#end();
      return;
    }
    this.#state = OPEN;
    this.#dispatch(this.onopen, new Event("open"));
    try {
      await this.#readFrames();
    } catch (e) {
      if (e instanceof ProtocolError) this.#fail(e.code, e.message);
      // Otherwise the read failed (reset, or the connection was cut by us): 1006.
    }
    await this.#end();
  }

  async #open(): Promise<void> {
    const conn = await this.#s.dial(this.#url, this.#abort.signal);
    if (this.#state !== CONNECTING) {
      conn.close();
      throw new Error("closed while connecting");
    }
    this.#conn = conn;
    // A failed write is a broken connection: reading ends too, with 1006.
    this.#writer = new FrameWriter(conn, () => this.#closeConn());
    const key = randomKey();
    const accept = acceptFor(key);
    await writeAll(conn, upgradeRequest(this.#url, key));
    let head: Uint8Array | null;
    while ((head = this.#reader.takeHead()) === null) {
      if (this.#reader.buffered > MAX_HEAD_BYTES) {
        throw new HandshakeError("response head too long");
      }
      const n = await conn.read(this.#chunk);
      if (n === null) throw new HandshakeError("connection closed during the handshake");
      this.#reader.push(this.#chunk.subarray(0, n));
    }
    checkUpgradeResponse(decoder.decode(head.subarray(0, head.length - 4)), await accept);
    if (this.#state !== CONNECTING) throw new Error("closed while connecting");
  }

  /** Reads and handles frames until the closing handshake is done or the connection fails. */
  async #readFrames(): Promise<void> {
    const conn = this.#conn!;
    for (;;) {
      for (let f = this.#reader.next(); f !== null; f = this.#reader.next()) {
        if (this.#onFrame(f)) return;
      }
      const n = await conn.read(this.#chunk);
      if (n === null) return;
      this.#reader.push(this.#chunk.subarray(0, n));
    }
  }

  /** Handles one frame; `true` once the server's close frame arrived. */
  #onFrame(f: Frame): boolean {
    if (f.opcode === OP_PING) {
      // §5.5.2: a pong with the ping's payload, unless our close frame already left.
      if (!this.#closeSent) this.#writer!.push(encodeFrame(OP_PONG, f.payload, this.#masks));
      return false;
    }
    if (f.opcode === OP_PONG) return false;
    if (f.opcode === OP_CLOSE) return this.#onCloseFrame(f.payload);
    const data = this.#messages.add(f);
    // The WebSocket API: no message events once closing has begun.
    if (data !== undefined && this.#state === OPEN) {
      this.#dispatch(this.onmessage, new MessageEvent("message", { data }));
    }
    return false;
  }

  /** §5.5.1: the server's close frame; answered with ours unless we sent it first. */
  #onCloseFrame(payload: Uint8Array): true {
    let code = CLOSE_NO_STATUS;
    let reason = "";
    if (payload.length === 1) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "close frame of 1 byte");
    }
    if (payload.length >= 2) {
      code = (payload[0]! << 8) | payload[1]!;
      if (!isValidCloseCode(code)) {
        throw new ProtocolError(CLOSE_PROTOCOL_ERROR, `close code ${code}`);
      }
      reason = decodeText(payload.subarray(2), "the close reason");
    }
    this.#code = code;
    this.#reason = reason;
    this.#clean = true;
    if (!this.#closeSent) {
      this.#state = CLOSING;
      this.#sendClose(code === CLOSE_NO_STATUS ? new Uint8Array(0) : closePayload(code, ""));
    }
    return true;
  }

  /** Fails the connection (§7.1.7): our close frame with `code`, then the end. */
  #fail(code: number, message: string): void {
    this.#state = CLOSING;
    this.#code = code;
    this.#reason = message;
    this.#clean = false;
    // A close frame's reason fits in 123 bytes: 40 UTF-16 units take at most 120.
    const reason = encoder.encode(message).length <= 123 ? message : message.slice(0, 40) + "...";
    this.#sendClose(closePayload(code, reason));
  }

  /** Lets queued frames leave (within the close timeout), cuts the connection, fires `close`. */
  async #end(): Promise<void> {
    if (this.#writer !== null && !this.#writer.idle && !this.#connClosed) {
      this.#armCloseTimer();
      await this.#writer.drained();
    }
    this.#closeTimer?.cancel();
    this.#closeTimer = null;
    this.#closeConn();
    this.#state = CLOSED;
    this.#dispatch(
      this.onclose,
      new CloseEvent("close", { code: this.#code, reason: this.#reason, wasClean: this.#clean }),
    );
  }

  #sendClose(payload: Uint8Array): void {
    if (this.#closeSent) return;
    this.#closeSent = true;
    this.#writer!.push(encodeFrame(OP_CLOSE, payload, this.#masks));
  }

  /** A server that does not finish the closing handshake in time is cut off. */
  #armCloseTimer(): void {
    this.#closeTimer ??= this.#s.clock.setTimer(this.#s.closeTimeoutMs, () => {
      this.#closeTimer = null;
      this.#closeConn();
    });
  }

  #closeConn(): void {
    if (this.#connClosed || this.#conn === null) return;
    this.#connClosed = true;
    this.#writer?.stop();
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }

  #dispatch<E extends Event>(handler: ((event: E) => void) | null, event: E): void {
    if (handler === null) return;
    try {
      handler.call(this, event);
    } catch (e) {
      // As with an event listener's exception: reported, and this connection goes on.
      reportError(e);
    }
  }
}
