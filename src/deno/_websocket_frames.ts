/**
 * WebSocket frames (RFC 6455 §5) for the client side: encoding masked
 * frames, and reading the server's frames out of a byte stream with every
 * check §5.2 asks of a client. Internal to `noDelayWebSocket`.
 *
 * @module
 */

/** Opcodes (RFC 6455 §5.2). */
export const OP_CONTINUATION = 0x0;
export const OP_TEXT = 0x1;
export const OP_BINARY = 0x2;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

/** Close codes this client sends (RFC 6455 §7.4.1). */
export const CLOSE_NORMAL = 1000;
export const CLOSE_PROTOCOL_ERROR = 1002;
export const CLOSE_INVALID_DATA = 1007;
export const CLOSE_TOO_BIG = 1009;
/** Reported, never sent: no close code was received, or there was no closing handshake. */
export const CLOSE_NO_STATUS = 1005;
export const CLOSE_ABNORMAL = 1006;

/** A violation of the protocol by the server: the connection fails with `code`. */
export class ProtocolError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = "ProtocolError";
    this.code = code;
  }
}

/** One frame from the server. `payload` is a view, valid until the next `push`. */
export interface Frame {
  fin: boolean;
  opcode: number;
  payload: Uint8Array;
}

/**
 * Random masking keys in bulk: RFC 6455 §5.3 wants each frame's key fresh
 * and unpredictable, which `crypto.getRandomValues` gives; one call per 256
 * frames rather than one per frame.
 */
export class MaskSource {
  #pool = new Uint8Array(1024);
  #offset = this.#pool.length;

  /** Writes a fresh 4-byte key at `out[at]`. */
  next(out: Uint8Array, at: number): void {
    if (this.#offset === this.#pool.length) {
      crypto.getRandomValues(this.#pool);
      this.#offset = 0;
    }
    out.set(this.#pool.subarray(this.#offset, this.#offset + 4), at);
    this.#offset += 4;
  }
}

/**
 * Where a frame's payload starts in the buffer it is built in: 4-byte
 * aligned, so that masking goes a 32-bit word at a time, with room before it
 * for the longest header (10 bytes) and the masking key.
 */
const PAYLOAD_AT = 16;

/** A final frame of `opcode` carrying `payload`, masked with a key from `masks` (§5.3). */
export function encodeFrame(opcode: number, payload: Uint8Array, masks: MaskSource): Uint8Array {
  const buf = new Uint8Array(PAYLOAD_AT + payload.length);
  buf.set(payload, PAYLOAD_AT);
  return seal(buf, opcode, payload.length, masks);
}

/**
 * A final text frame carrying `text` in UTF-8, masked: the same bytes as
 * {@linkcode encodeFrame} of the encoded text, with the text encoded right
 * into the frame (one buffer, no copy) when it is ASCII, as JSON mostly is.
 */
export function encodeTextFrame(text: string, masks: MaskSource): Uint8Array {
  const buf = new Uint8Array(PAYLOAD_AT + text.length);
  const { read, written } = encoder.encodeInto(text, buf.subarray(PAYLOAD_AT));
  if (read !== text.length) return encodeFrame(OP_TEXT, encoder.encode(text), masks);
  return seal(buf, OP_TEXT, written, masks);
}

/**
 * Writes the header and a fresh key before the `n` payload bytes at
 * `buf[PAYLOAD_AT]` (`buf` starts its buffer), masks them, and returns
 * the frame's bytes.
 */
function seal(buf: Uint8Array, opcode: number, n: number, masks: MaskSource): Uint8Array {
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const start = PAYLOAD_AT - 4 - head;
  buf[start] = 0x80 | opcode;
  if (n < 126) {
    buf[start + 1] = 0x80 | n;
  } else if (n < 65_536) {
    buf[start + 1] = 0x80 | 126;
    buf[start + 2] = n >>> 8;
    buf[start + 3] = n & 0xff;
  } else {
    buf[start + 1] = 0x80 | 127;
    new DataView(buf.buffer).setBigUint64(start + 2, BigInt(n));
  }
  const keyAt = PAYLOAD_AT - 4;
  masks.next(buf, keyAt);
  // XOR with the key a word at a time: the key's 4 bytes read as a word in the platform's byte
  // order line up with each payload word read in the same order.
  const words = n >>> 2;
  if (words > 0) {
    const key = new Uint32Array(buf.buffer, keyAt, 1)[0]!;
    const payload = new Uint32Array(buf.buffer, PAYLOAD_AT, words);
    for (let i = 0; i < words; i++) payload[i] = payload[i]! ^ key;
  }
  for (let i = words << 2; i < n; i++) {
    buf[PAYLOAD_AT + i] = buf[PAYLOAD_AT + i]! ^ buf[keyAt + (i & 3)]!;
  }
  return buf.subarray(start, PAYLOAD_AT + n);
}

const encoder = new TextEncoder();

/** The payload of a close frame: the code, then the reason in UTF-8 (§5.5.1). */
export function closePayload(code: number, reason: string): Uint8Array {
  const text = encoder.encode(reason);
  const out = new Uint8Array(2 + text.length);
  out[0] = code >>> 8;
  out[1] = code & 0xff;
  out.set(text, 2);
  return out;
}

/** A close code a peer may send (§7.4.1, §7.4.2 and the IANA registry): others are protocol errors. */
export function isValidCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
    (code >= 3000 && code <= 4999);
}

const INITIAL_BUFFER = 64 * 1024;
const KNOWN_OPCODES = new Set([OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG]);

/**
 * The server's bytes, buffered, and the frames in them. Refuses at the
 * header, before buffering its payload, a frame longer than
 * `maxPayloadBytes`.
 */
export class FrameReader {
  #buf = new Uint8Array(INITIAL_BUFFER);
  #start = 0;
  #end = 0;
  #maxPayloadBytes: number;

  constructor(maxPayloadBytes: number) {
    this.#maxPayloadBytes = maxPayloadBytes;
  }

  /** Bytes buffered and not consumed yet. */
  get buffered(): number {
    return this.#end - this.#start;
  }

  /** Appends bytes read from the connection. */
  push(chunk: Uint8Array): void {
    if (this.#end + chunk.length > this.#buf.length) {
      const live = this.#end - this.#start;
      const need = live + chunk.length;
      if (need <= this.#buf.length) {
        this.#buf.copyWithin(0, this.#start, this.#end);
      } else {
        const next = new Uint8Array(2 ** Math.ceil(Math.log2(need)));
        next.set(this.#buf.subarray(this.#start, this.#end));
        this.#buf = next;
      }
      this.#start = 0;
      this.#end = live;
    }
    this.#buf.set(chunk, this.#end);
    this.#end += chunk.length;
  }

  /** The bytes up to and including the first CRLF CRLF (an HTTP head), or `null`. */
  takeHead(): Uint8Array | null {
    const b = this.#buf;
    for (let i = this.#start; i + 3 < this.#end; i++) {
      if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) {
        const head = b.slice(this.#start, i + 4);
        this.#start = i + 4;
        return head;
      }
    }
    return null;
  }

  /**
   * The next complete frame, or `null` until more bytes arrive.
   *
   * @throws {ProtocolError} 1002 for reserved bits, an unknown opcode, a
   * masked frame, a fragmented or long control frame, a 64-bit length with
   * its top bit set; 1009 for a payload over the limit.
   */
  next(): Frame | null {
    const b = this.#buf;
    const avail = this.#end - this.#start;
    if (avail < 2) return null;
    const b0 = b[this.#start]!, b1 = b[this.#start + 1]!;
    if ((b0 & 0x70) !== 0) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "reserved bits set without an extension");
    }
    const opcode = b0 & 0x0f;
    if (!KNOWN_OPCODES.has(opcode)) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, `unknown opcode ${opcode}`);
    }
    // §5.1: "A client MUST close a connection if it detects a masked frame."
    if ((b1 & 0x80) !== 0) throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "masked server frame");
    const fin = (b0 & 0x80) !== 0;
    let len = b1 & 0x7f;
    let at = 2;
    if (opcode >= OP_CLOSE && (!fin || len > 125)) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "fragmented or long control frame");
    }
    if (len === 126) {
      if (avail < 4) return null;
      len = (b[this.#start + 2]! << 8) | b[this.#start + 3]!;
      at = 4;
    } else if (len === 127) {
      if (avail < 10) return null;
      const big = new DataView(b.buffer, b.byteOffset + this.#start + 2, 8).getBigUint64(0);
      if (big >> 63n !== 0n) throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "length over 2^63");
      if (big > BigInt(this.#maxPayloadBytes)) {
        throw new ProtocolError(CLOSE_TOO_BIG, `frame of ${big} bytes`);
      }
      len = Number(big);
      at = 10;
    }
    // Control frames (125 bytes at most) are never too big, whatever the limit.
    if (opcode < OP_CLOSE && len > this.#maxPayloadBytes) {
      throw new ProtocolError(CLOSE_TOO_BIG, `frame of ${len} bytes`);
    }
    if (avail < at + len) return null;
    const payload = b.subarray(this.#start + at, this.#start + at + len);
    this.#start += at + len;
    if (this.#start === this.#end) {
      this.#start = this.#end = 0;
      // After a large message, give the memory back (the payload view keeps the old one alive).
      if (this.#buf.length > INITIAL_BUFFER) this.#buf = new Uint8Array(INITIAL_BUFFER);
    }
    return { fin, opcode, payload };
  }
}
