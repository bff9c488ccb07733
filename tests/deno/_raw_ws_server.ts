/**
 * A WebSocket server the test scripts byte by byte, on `Deno.listen` at
 * 127.0.0.1, for the frame-level tests of `noDelayWebSocket()`: it reads the
 * client's frames as they are on the wire (mask bit and key included) and
 * writes whatever frames a case needs, well-formed or not.
 *
 * @module
 */

import { acceptFor } from "../../src/deno/_websocket_handshake.ts";

/** A frame as the client wrote it, unmasked. */
export interface WireFrame {
  fin: boolean;
  opcode: number;
  masked: boolean;
  /** The masking key (4 bytes), or `null`. */
  mask: Uint8Array | null;
  /** 7, 16 or 64: how the length was encoded. */
  lengthBits: 7 | 16 | 64;
  payload: Uint8Array;
}

/** Options of {@linkcode ServerConn.writeFrame}. */
export interface WriteFrameOptions {
  fin?: boolean;
  /** Reserved bits (RSV1-3) to set, as the 0x70 nibble. */
  rsv?: number;
  /** Mask the frame (a protocol error from a server). */
  mask?: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One accepted connection. */
export class ServerConn {
  readonly conn: Deno.Conn;
  #buf = new Uint8Array(0);

  constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  async #more(): Promise<boolean> {
    const chunk = new Uint8Array(64 * 1024);
    const n = await this.conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(this.#buf.length + n);
    next.set(this.#buf);
    next.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = next;
    return true;
  }

  /** Reads the upgrade request head; returns it without the blank line. */
  async readRequest(): Promise<string> {
    for (;;) {
      const text = decoder.decode(this.#buf);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        this.#buf = this.#buf.slice(end + 4);
        return text.slice(0, end);
      }
      if (!(await this.#more())) throw new Error("closed before the request ended");
    }
  }

  /** Reads the request and answers 101 (or `response(accept)` when given). */
  async handshake(response?: (accept: string) => string): Promise<string> {
    const request = await this.readRequest();
    const key = /^sec-websocket-key: *(.*)$/im.exec(request)?.[1]?.trim() ?? "";
    const accept = await acceptFor(key);
    await this.writeRaw(encoder.encode(
      response?.(accept) ??
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
    ));
    return request;
  }

  /** The next frame from the client, or `null` at the end of the stream. */
  async readFrame(): Promise<WireFrame | null> {
    for (;;) {
      const f = this.#parse();
      if (f !== null) return f;
      if (!(await this.#more())) return null;
    }
  }

  #parse(): WireFrame | null {
    const b = this.#buf;
    if (b.length < 2) return null;
    const masked = (b[1]! & 0x80) !== 0;
    let len = b[1]! & 0x7f;
    let at = 2;
    let lengthBits: 7 | 16 | 64 = 7;
    if (len === 126) {
      if (b.length < 4) return null;
      len = (b[2]! << 8) | b[3]!;
      at = 4;
      lengthBits = 16;
    } else if (len === 127) {
      if (b.length < 10) return null;
      len = Number(new DataView(b.buffer, b.byteOffset + 2, 8).getBigUint64(0));
      at = 10;
      lengthBits = 64;
    }
    const mask = masked ? b.slice(at, at + 4) : null;
    if (masked) at += 4;
    if (b.length < at + len) return null;
    const payload = b.slice(at, at + len);
    if (mask !== null) { for (let i = 0; i < len; i++) payload[i]! ^= mask[i & 3]!; }
    this.#buf = b.slice(at + len);
    return { fin: (b[0]! & 0x80) !== 0, opcode: b[0]! & 0x0f, masked, mask, lengthBits, payload };
  }

  /** Writes one frame (unmasked unless asked). */
  async writeFrame(
    opcode: number,
    payload: Uint8Array | string,
    options: WriteFrameOptions = {},
  ): Promise<void> {
    await this.writeRaw(frame(opcode, payload, options));
  }

  /** Writes bytes as they are. */
  async writeRaw(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
  }

  /** Closes the connection (idempotent). */
  close(): void {
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
  }
}

/** One frame's bytes, as a server would write it (or a broken one, by `options`). */
export function frame(
  opcode: number,
  payload: Uint8Array | string,
  options: WriteFrameOptions = {},
): Uint8Array {
  const p = typeof payload === "string" ? encoder.encode(payload) : payload;
  const n = p.length;
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const maskLength = options.mask === true ? 4 : 0;
  const out = new Uint8Array(head + maskLength + n);
  out[0] = (options.fin === false ? 0 : 0x80) | (options.rsv ?? 0) | opcode;
  const maskBit = options.mask === true ? 0x80 : 0;
  if (n < 126) {
    out[1] = maskBit | n;
  } else if (n < 65_536) {
    out[1] = maskBit | 126;
    out[2] = n >>> 8;
    out[3] = n & 0xff;
  } else {
    out[1] = maskBit | 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(n));
  }
  // A zero key: the bytes are the payload itself, which is all a masked-frame test needs.
  out.set(p, head + maskLength);
  return out;
}

/** A close frame's payload: the code, then the reason. */
export function closeBody(code: number, reason = ""): Uint8Array {
  const r = encoder.encode(reason);
  const out = new Uint8Array(2 + r.length);
  out[0] = code >>> 8;
  out[1] = code & 0xff;
  out.set(r, 2);
  return out;
}

/** The code of a close frame's payload. */
export function closeCode(payload: Uint8Array): number {
  return (payload[0]! << 8) | payload[1]!;
}

/** A listener on 127.0.0.1 whose connections the test accepts one by one. */
export class RawServer {
  readonly listener: Deno.Listener<Deno.TcpConn, Deno.NetAddr>;
  #accepted: ServerConn[] = [];

  constructor() {
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  }

  /** `ws://127.0.0.1:PORT/path`. */
  url(path = "/"): string {
    return `ws://127.0.0.1:${this.listener.addr.port}${path}`;
  }

  /** The next connection. */
  async accept(): Promise<ServerConn> {
    const c = new ServerConn(await this.listener.accept());
    this.#accepted.push(c);
    return c;
  }

  /** Closes every accepted connection and the listener. */
  [Symbol.dispose](): void {
    for (const c of this.#accepted) c.close();
    this.listener.close();
  }
}
