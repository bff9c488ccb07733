/**
 * The flow hash: the first 8 bytes, little-endian, of
 * SHA-256(fsName ‖ 0x00 ‖ distinguisher), as an unsigned 64-bit integer, as
 * Kubernetes' `hashFlowID` (k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go)
 * computes it; held as two unsigned 32-bit halves ({@linkcode FlowHash}):
 * what the classifier caches, the queue set deals from, and wires and dumps
 * carry (JSON `{ "hi": …, "lo": … }`, or the decimal string of the whole value).
 *
 * SHA-256 is computed synchronously by a small implementation specialised to
 * this input (`_sha256.ts`), which runs unchanged on Deno, Node and Workers;
 * Web Crypto's `digest` is async only, which would put a microtask hop on
 * every new flow. The classifier caches hashes per flow, so a warm flow hashes
 * nothing at all.
 *
 * @module
 */

import type { FlowHash } from "../fairqueuing/types.ts";
import { flowIdDigest } from "./_sha256.ts";

export type { FlowHash };

const MAX_UINT64 = (1n << 64n) - 1n;

/**
 * Hashes a flow: the FlowSchema's name and the flow distinguisher.
 *
 * @example
 * ```ts
 * import { flowHash } from "./mod.ts";
 * flowHash("global-default", "alice"); // { hi: 0xf4de3bd4, lo: 0x2ccdf6b7 }
 * ```
 */
export function flowHash(flowSchemaName: string, distinguisher: string): FlowHash {
  return flowIdDigest(flowSchemaName, distinguisher);
}

/**
 * The flow hash as an unsigned 64-bit bigint.
 *
 * @example
 * ```ts
 * import { flowHashToBigInt } from "./mod.ts";
 * flowHashToBigInt({ hi: 1, lo: 2 }); // 4294967298n
 * ```
 */
export function flowHashToBigInt(hash: FlowHash): bigint {
  return (BigInt(hash.hi) << 32n) | BigInt(hash.lo);
}

/**
 * The flow hash as a decimal string (its JSON form in `apf classify`).
 *
 * @example
 * ```ts
 * import { flowHashToString } from "./mod.ts";
 * flowHashToString({ hi: 0, lo: 7 }); // "7"
 * ```
 */
export function flowHashToString(hash: FlowHash): string {
  return flowHashToBigInt(hash).toString();
}

/**
 * Reads a flow hash from its JSON forms: `{ hi, lo }` halves, a decimal
 * string, a bigint, or a safe integer.
 *
 * @throws {RangeError} naming the value received when it is a number (halves, a decimal string,
 * a bigint or a number) out of the unsigned 64-bit range, {TypeError} when it is none of these forms.
 * @example
 * ```ts
 * import { parseFlowHash } from "./mod.ts";
 * parseFlowHash("4294967298"); // { hi: 1, lo: 2 }
 * ```
 */
export function parseFlowHash(value: unknown): FlowHash {
  if (typeof value === "object" && value !== null) {
    const { hi, lo } = value as Partial<FlowHash>;
    if (isUint32(hi) && isUint32(lo)) return { hi, lo };
  } else if (typeof value === "bigint" && value >= 0n && value <= MAX_UINT64) {
    return { hi: Number(value >> 32n), lo: Number(value & 0xffffffffn) };
  } else if (typeof value === "string" && /^(0|[1-9][0-9]{0,19})$/.test(value)) {
    const n = BigInt(value);
    if (n <= MAX_UINT64) return parseFlowHash(n);
  } else if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) {
    return parseFlowHash(BigInt(value));
  }
  const message =
    `Cannot read a flow hash: expected { hi, lo } unsigned 32-bit halves or an unsigned 64-bit decimal string, got ${
      typeof value === "bigint" ? `${value}n` : JSON.stringify(value) ?? String(value)
    }`;
  throw isNumeric(value) ? new RangeError(message) : new TypeError(message);
}

/** Whether `value` is a number in one of the forms read (only out of range): the RangeError cases. */
function isNumeric(value: unknown): boolean {
  if (typeof value === "number" || typeof value === "bigint") return true;
  if (typeof value === "string") return /^(0|[1-9][0-9]*)$/.test(value);
  if (typeof value !== "object" || value === null) return false;
  const { hi, lo } = value as Partial<FlowHash>;
  return typeof hi === "number" && typeof lo === "number";
}

function isUint32(x: unknown): x is number {
  return typeof x === "number" && x >>> 0 === x;
}
