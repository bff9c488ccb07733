/**
 * UIDs for objects that have none. Kubernetes reports `metadata.uid` in the
 * `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`
 * response headers; objects loaded from files (and the built-in ones) often
 * have no uid, so one is derived from the kind and the name: stable across
 * processes and restarts, so every replica reports the same value.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";

const encoder = new TextEncoder();

/**
 * The UID of an object without `metadata.uid`: the first 16 bytes of
 * SHA-256(`flowcontrol.apiserver.k8s.io/<kind>/<name>`), formatted as an
 * RFC 9562 UUID of version 8 (custom).
 *
 * @example
 * ```ts
 * import { objectUid } from "./mod.ts";
 * objectUid("FlowSchema", "global-default"); // the same string on every run
 * ```
 */
export function objectUid(kind: "FlowSchema" | "PriorityLevelConfiguration", name: string): string {
  const b = sha256(encoder.encode(`flowcontrol.apiserver.k8s.io/${kind}/${name}`)).subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80; // version 8
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}
