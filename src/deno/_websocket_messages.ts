/**
 * WebSocket messages out of data frames (RFC 6455 §5.4, §5.6): a message is
 * one final frame, or a first frame and continuation frames up to a final
 * one, possibly with control frames in between (handled elsewhere). Text
 * must be valid UTF-8 (§8.1). Internal to `noDelayWebSocket`.
 *
 * @module
 */

import {
  CLOSE_INVALID_DATA,
  CLOSE_PROTOCOL_ERROR,
  CLOSE_TOO_BIG,
  type Frame,
  OP_CONTINUATION,
  OP_TEXT,
  ProtocolError,
} from "./_websocket_frames.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Text as a string, or the bytes of a binary message. */
export type MessageData = string | ArrayBuffer;

/**
 * The UTF-8 text of `bytes`.
 *
 * @throws {ProtocolError} 1007 when `bytes` is not valid UTF-8.
 */
export function decodeText(bytes: Uint8Array, what: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new ProtocolError(CLOSE_INVALID_DATA, `invalid UTF-8 in ${what}`);
  }
}

/** Joins data frames into messages of at most `maxMessageBytes`. */
export class MessageAssembler {
  #maxMessageBytes: number;
  /** The fragments of the message being received, and its opcode (0: none). */
  #fragments: Uint8Array[] = [];
  #opcode = 0;
  #bytes = 0;

  constructor(maxMessageBytes: number) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /**
   * Takes a data frame (text, binary or continuation); returns the message
   * it completes, or `undefined` while it waits for more fragments.
   *
   * @throws {ProtocolError} 1002 for a continuation outside a message or a
   * new message inside one; 1009 past `maxMessageBytes`; 1007 for text that
   * is not UTF-8.
   */
  add(f: Frame): MessageData | undefined {
    if (f.opcode === OP_CONTINUATION) {
      if (this.#opcode === 0) {
        throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "continuation frame outside a message");
      }
    } else if (this.#opcode !== 0) {
      throw new ProtocolError(CLOSE_PROTOCOL_ERROR, "new message inside a fragmented one");
    } else if (f.fin) {
      // The common case, one frame: no copy but the decoding.
      return data(f.opcode, f.payload);
    } else {
      this.#opcode = f.opcode;
    }
    this.#bytes += f.payload.length;
    if (this.#bytes > this.#maxMessageBytes) {
      throw new ProtocolError(CLOSE_TOO_BIG, `message of more than ${this.#maxMessageBytes} bytes`);
    }
    // The frame's payload is a view into the read buffer: keep a copy.
    this.#fragments.push(f.payload.slice());
    if (!f.fin) return undefined;
    const message = new Uint8Array(this.#bytes);
    let at = 0;
    for (const part of this.#fragments) {
      message.set(part, at);
      at += part.length;
    }
    const opcode = this.#opcode;
    this.#fragments = [];
    this.#opcode = 0;
    this.#bytes = 0;
    return data(opcode, message);
  }
}

function data(opcode: number, payload: Uint8Array): MessageData {
  return opcode === OP_TEXT ? decodeText(payload, "a text message") : payload.slice().buffer;
}
