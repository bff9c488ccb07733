/**
 * The classifier's flow-hash cache: one cache for all FlowSchemas, keyed by
 * (schema, distinguisher), holding at most `limit` entries whatever the number
 * of schemas or users.
 *
 * Kubernetes hashes every request (`hashFlowID` in
 * k8s.io/apiserver/pkg/util/flowcontrol/apf_controller.go); the cache exists
 * so that a warm flow costs a map look-up instead of a SHA-256. Eviction is
 * by two generations: entries go into the current generation; when it holds
 * `limit / 2` entries it becomes the previous one and the old previous one is
 * dropped whole. A hit in the previous generation copies the entry forward.
 * So a flow seen at least once every `limit / 2` new flows is never rehashed,
 * a hit costs no bookkeeping (an LRU over a `Map` would delete and re-insert
 * on every hit), and eviction is one pointer swap, never a pause that forgets
 * every flow at once (the previous design cleared a per-schema map when full,
 * so all of a busy schema's flows went cold together).
 *
 * Entries are found by a 30-bit number computed from the schema position and
 * the distinguisher, then checked against both. A `Map` keyed by small
 * integers never reads its stored keys to compare them, so a miss stays in
 * the map's own memory; keyed by the distinguisher strings, every miss read
 * the strings in its bucket, scattered over the heap (about 200 ns more per
 * miss with a million users), and a request's fresh name string had to be
 * hashed by the map anyway. The number is seeded per cache and a chain of
 * colliding entries stops growing at {@linkcode MAX_CHAIN}, so names chosen to
 * collide cost a hash each, never a long walk.
 *
 * @module
 */

import type { FlowHash } from "../fairqueuing/types.ts";
import { flowHash } from "./flow_hash.ts";
import { checkNumber } from "../_shared/errors.ts";

/** Entries sharing one key, at most: past it a flow is hashed on every request instead. */
export const MAX_CHAIN = 8;

/**
 * The longest distinguisher cached (UTF-16 units). An entry keeps its
 * distinguisher string alive, so this caps what the cache can hold in bytes:
 * about `limit` × 0.5 KB at worst. A longer one (a user name can be up to
 * 1,024 characters after `normalizeUser`, and unbounded before) is hashed on
 * every request, about 1 µs per 100 characters.
 */
export const MAX_CACHED_LENGTH = 256;

/** A cached flow, and the next one with the same key. */
class Entry {
  constructor(
    readonly position: number,
    readonly distinguisher: string,
    readonly hash: FlowHash,
    readonly next: Entry | undefined,
    readonly depth: number,
  ) {}
}

function find(entry: Entry | undefined, position: number, distinguisher: string) {
  for (; entry !== undefined; entry = entry.next) {
    if (entry.position === position && entry.distinguisher === distinguisher) return entry.hash;
  }
  return undefined;
}

/** A bounded cache of frozen flow hashes, by schema position (the key) and name (what is hashed). */
export class FlowCache {
  readonly #perGeneration: number;
  readonly #mask: number;
  readonly #seed = (Math.random() * 0x100000000) | 0;
  #current = new Map<number, Entry>();
  #previous = new Map<number, Entry>();
  #currentSize = 0;
  #previousSize = 0;

  /**
   * `limit`: the most entries held, both generations together (an integer ≥ 2).
   * `keyBits`: bits of the key (tests lower it to make keys collide).
   */
  constructor(limit: number, keyBits = 30) {
    checkNumber(
      limit,
      (n) => Number.isSafeInteger(n) && n >= 2,
      () => `Cannot create a flow cache: limit must be an integer ≥ 2, got ${limit}`,
    );
    this.#perGeneration = Math.floor(limit / 2);
    this.#mask = 2 ** Math.min(Math.max(keyBits, 0), 30) - 1;
  }

  /** Entries held now (an entry copied forward counts in both generations). */
  get size(): number {
    return this.#currentSize + this.#previousSize;
  }

  /**
   * The frozen flow hash of `distinguisher` under the schema at `position`
   * named `schemaName`: the cached object if there is one, else a new one,
   * cached.
   */
  get(position: number, schemaName: string, distinguisher: string): FlowHash {
    if (distinguisher.length > MAX_CACHED_LENGTH) {
      return Object.freeze(flowHash(schemaName, distinguisher));
    }
    const key = this.#key(position, distinguisher);
    let head = this.#current.get(key);
    const hot = find(head, position, distinguisher);
    if (hot !== undefined) return hot;
    const hash = find(this.#previous.get(key), position, distinguisher) ??
      Object.freeze(flowHash(schemaName, distinguisher));
    if (this.#currentSize >= this.#perGeneration) {
      this.#previous = this.#current;
      this.#previousSize = this.#currentSize;
      this.#current = new Map();
      this.#currentSize = 0;
      head = undefined;
    }
    const depth = head === undefined ? 1 : head.depth + 1;
    if (depth <= MAX_CHAIN) {
      this.#current.set(key, new Entry(position, distinguisher, hash, head, depth));
      this.#currentSize++;
    }
    return hash;
  }

  /** FNV-1a over the UTF-16 units, seeded, mixed with the position; a non-negative small integer. */
  #key(position: number, distinguisher: string): number {
    let h = this.#seed ^ Math.imul(position + 1, 0x9e3779b1);
    for (let i = 0; i < distinguisher.length; i++) {
      h = Math.imul(h ^ distinguisher.charCodeAt(i), 0x01000193);
    }
    h ^= h >>> 15;
    return h & this.#mask;
  }
}
