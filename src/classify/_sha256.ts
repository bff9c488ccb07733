/**
 * SHA-256 of a flow id, reduced to what the flow hash keeps: the first 8
 * bytes of SHA-256(fsName ‖ 0x00 ‖ distinguisher), read little-endian, as
 * Kubernetes' `hashFlowID` in k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go
 * does. It is FIPS 180-4 SHA-256, written for this one input shape: the two
 * strings are UTF-8-encoded (as `TextEncoder` does, lone surrogates becoming
 * U+FFFD) straight into a reused block buffer, so hashing a new flow
 * allocates nothing but its result. A general-purpose implementation
 * (`@noble/hashes`) spent about 3 µs per flow id here, mostly on encoding,
 * concatenating and its hasher object; this one about 0.5 µs, which is what a
 * flow the cache has forgotten costs (see bench/RESULTS.md). Tests compare it
 * with `@noble/hashes` on random inputs.
 *
 * @module
 */

import type { FlowHash } from "../fairqueuing/types.ts";

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);

// FIPS 180-4 §5.3.3: the initial hash value.
const IV = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);

const W = new Int32Array(64);
const H = new Int32Array(8);
/** Reused for ids up to this many bytes; a longer id gets a buffer of its own, dropped after. */
const SCRATCH = new Uint8Array(512);

/** Writes `s` as UTF-8 at `at`; returns the index after it. */
function writeUtf8(buf: Uint8Array, s: string, at: number): number {
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[at++] = c;
      continue;
    }
    if (c < 0x800) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 63);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        buf[at++] = 0xf0 | (c >> 18);
        buf[at++] = 0x80 | ((c >> 12) & 63);
        buf[at++] = 0x80 | ((c >> 6) & 63);
        buf[at++] = 0x80 | (c & 63);
        continue;
      }
      c = 0xfffd; // a lone surrogate, as TextEncoder writes it
    }
    buf[at++] = 0xe0 | (c >> 12);
    buf[at++] = 0x80 | ((c >> 6) & 63);
    buf[at++] = 0x80 | (c & 63);
  }
  return at;
}

/** One 64-byte block at `off` into the state `H` (FIPS 180-4 §6.2.2). */
function compress(buf: Uint8Array, off: number): void {
  for (let t = 0; t < 16; t++) {
    const j = off + 4 * t;
    W[t] = (buf[j]! << 24) | (buf[j + 1]! << 16) | (buf[j + 2]! << 8) | buf[j + 3]!;
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!, w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (s1 + W[t - 7]! + s0 + W[t - 16]!) | 0;
  }
  let a = H[0]!, b = H[1]!, c = H[2]!, d = H[3]!, e = H[4]!, f = H[5]!, g = H[6]!, h = H[7]!;
  for (let t = 0; t < 64; t++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + (g ^ (e & (f ^ g))) + K[t]! + W[t]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) | (c & (a | b)))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

/** A big-endian state word read as the little-endian uint32 of its 4 digest bytes. */
function swap32(x: number): number {
  return ((x << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

/**
 * The first 8 bytes of SHA-256(fsName ‖ 0x00 ‖ distinguisher), little-endian,
 * as 32-bit halves.
 */
export function flowIdDigest(fsName: string, distinguisher: string): FlowHash {
  // UTF-8 takes at most 3 bytes per UTF-16 unit; then 0x80, the 8-byte length and padding.
  const most = 3 * (fsName.length + distinguisher.length) + 1 + 9;
  const blocks = Math.ceil(most / 64);
  const buf = blocks * 64 <= SCRATCH.length ? SCRATCH : new Uint8Array(blocks * 64);
  let n = writeUtf8(buf, fsName, 0);
  buf[n++] = 0;
  n = writeUtf8(buf, distinguisher, n);
  const end = (Math.floor((n + 8) / 64) + 1) * 64;
  buf[n] = 0x80;
  buf.fill(0, n + 1, end - 8);
  const high = Math.floor(n / 0x20000000); // the bit length n * 8 as two 32-bit words
  const low = (n * 8) >>> 0;
  buf[end - 8] = high >>> 24;
  buf[end - 7] = high >>> 16;
  buf[end - 6] = high >>> 8;
  buf[end - 5] = high;
  buf[end - 4] = low >>> 24;
  buf[end - 3] = low >>> 16;
  buf[end - 2] = low >>> 8;
  buf[end - 1] = low;
  H.set(IV);
  for (let off = 0; off < end; off += 64) compress(buf, off);
  return { lo: swap32(H[0]!), hi: swap32(H[1]!) };
}
