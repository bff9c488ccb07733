/**
 * The coordinator protocol (`PROTOCOL.md`): messages, encoding, validation; no transport.
 *
 * @module
 */

export { Coalescer } from "./coalescer.ts";
export {
  type ClientMessage,
  CLOSE_PROTOCOL_ERROR,
  CLOSE_UNAUTHENTICATED,
  decodeClientMessage,
  type Decoded,
  decodeServerMessage,
  encodeMessage,
  MAX_BATCH,
  MAX_FRAME_LENGTH,
  MAX_NAME_LENGTH,
  negotiateVersion,
  type ServerMessage,
  WIRE_VERSIONS,
  type WireConfiguration,
  type WireDecision,
  type WireError,
  type WireErrorCode,
  type WireOp,
} from "./wire.ts";
export { effectiveFromWire } from "./wire_configuration.ts";
