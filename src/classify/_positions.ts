/**
 * Schema positions by key: for one attribute of a request (a group, a verb, a
 * namespace, …), which FlowSchemas could match each value, and which match
 * any value. Built once per configuration by visiting the schemas in matching
 * order, so every list comes out sorted ascending.
 *
 * @module
 */

import type { StringSet } from "./matching.ts";

/** The values of one attribute a schema accepts: some keys, or any value at all. */
export class KeySet {
  /** The schema accepts every value. */
  any = false;
  /** The values it accepts (ignored when `any`). */
  readonly keys: Set<string> = new Set();

  /** Adds a compiled string list: `["*"]` accepts anything, other entries are literals. */
  addStrings(set: StringSet): void {
    if (set.all) this.any = true;
    else for (const value of set.values) this.keys.add(value);
  }
}

/** For each key, the positions of the schemas that accept it; and those that accept any key. */
export interface Positions {
  /** Positions of the schemas that accept any value (`undefined` when none). */
  readonly any: Int32Array | undefined;
  /** Positions by the value they accept. */
  readonly byKey: ReadonlyMap<string, Int32Array>;
}

/** Collects {@linkcode Positions}; schemas must be added in ascending position. */
export class PositionsBuilder {
  readonly #any: number[] = [];
  readonly #byKey = new Map<string, number[]>();

  /** Records what the schema at `position` accepts. */
  add(position: number, accepts: KeySet): void {
    if (accepts.any) {
      this.addAny(position);
      return;
    }
    for (const key of accepts.keys) this.addKey(position, key);
  }

  /** Records that the schema at `position` accepts any value. */
  addAny(position: number): void {
    if (this.#any.at(-1) !== position) this.#any.push(position);
  }

  /** Records that the schema at `position` accepts `key`. */
  addKey(position: number, key: string): void {
    const list = this.#byKey.get(key);
    if (list === undefined) this.#byKey.set(key, [position]);
    else if (list.at(-1) !== position) list.push(position);
  }

  /** The positions, as compact sorted arrays. */
  build(): Positions {
    const byKey = new Map<string, Int32Array>();
    for (const [key, list] of this.#byKey) byKey.set(key, Int32Array.from(list));
    return { any: this.#any.length === 0 ? undefined : Int32Array.from(this.#any), byKey };
  }
}
