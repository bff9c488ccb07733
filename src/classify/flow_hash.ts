/**
 * The flow hash (spec §2.5): the first 8 bytes, little-endian, of
 * SHA-256(fsName ‖ 0x00 ‖ distinguisher), as an unsigned 64-bit integer.
 *
 * SHA-256 comes from `npm:@noble/hashes`, which is synchronous and runs on
 * Deno, Node and Workers alike; Web Crypto's `digest` is async only, which
 * would put a microtask hop on every request. The classifier caches hashes
 * per flow, so a warm flow hashes nothing at all.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";

const encoder = new TextEncoder();

/** A 64-bit flow hash as two unsigned 32-bit halves (exact in JS numbers). */
export interface FlowHash {
  /** High 32 bits. */
  hi: number;
  /** Low 32 bits. */
  lo: number;
}

/**
 * Hashes a flow to its two 32-bit halves.
 *
 * @example
 * ```ts
 * import { flowHashHalves } from "@apf/edge";
 * flowHashHalves("global-default", "alice"); // { hi: 0xf4de3bd4, lo: 0x2ccdf6b7 }
 * ```
 */
export function flowHashHalves(flowSchemaName: string, distinguisher: string): FlowHash {
  const fs = encoder.encode(flowSchemaName);
  const d = encoder.encode(distinguisher);
  const input = new Uint8Array(fs.length + 1 + d.length);
  input.set(fs, 0);
  input.set(d, fs.length + 1);
  const digest = sha256(input);
  const view = new DataView(digest.buffer, digest.byteOffset, 8);
  return { lo: view.getUint32(0, true), hi: view.getUint32(4, true) };
}

/** The flow hash as an unsigned 64-bit bigint. */
export function flowHash(flowSchemaName: string, distinguisher: string): bigint {
  return toBigInt(flowHashHalves(flowSchemaName, distinguisher));
}

/** Joins the two halves into one unsigned 64-bit bigint. */
export function toBigInt(hash: FlowHash): bigint {
  return (BigInt(hash.hi) << 32n) | BigInt(hash.lo);
}
