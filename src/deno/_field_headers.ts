/**
 * A request's header fields as received (names and values alternating),
 * read through the part of the `Headers` interface identity resolvers use
 * (`get`, `has`, `forEach`), without building a `Headers`, and `lines`, each
 * field of a name apart (which `Headers` cannot give): the gateway's own
 * HTTP/1.1 server hands this to `apf()`'s identity resolver.
 *
 * @module
 */

import { sameName } from "../_shared/field_names.ts";

/** Read-only `Headers` over fields as received. */
export class FieldHeaders {
  readonly #fields: readonly string[];

  constructor(fields: readonly string[]) {
    this.#fields = fields;
  }

  /** The values of `name` joined by `, ` (as `Headers.get`), `null` when absent. */
  get(name: string): string | null {
    const lower = name.toLowerCase();
    const f = this.#fields;
    let out: string | null = null;
    for (let i = 0; i < f.length; i += 2) {
      const n = f[i]!;
      // Most clients send a name in the case it is asked for: that needs no letter-by-letter look.
      if (n.length === name.length && (n === name || sameName(n, lower))) {
        out = out === null ? f[i + 1]! : `${out}, ${f[i + 1]}`;
      }
    }
    return out;
  }

  /** The value of each field named `name`, in the order received (none: empty). */
  lines(name: string): string[] {
    const lower = name.toLowerCase();
    const f = this.#fields;
    const out: string[] = [];
    for (let i = 0; i < f.length; i += 2) {
      const n = f[i]!;
      if (n.length === name.length && (n === name || sameName(n, lower))) out.push(f[i + 1]!);
    }
    return out;
  }

  /** Whether `name` is present. */
  has(name: string): boolean {
    return this.get(name) !== null;
  }

  /**
   * Calls `callback` with each field's value and lower-case name, in the
   * order received (repeated names once each, unlike `Headers`, which joins
   * them and sorts the names).
   */
  forEach(callback: (value: string, name: string) => void): void {
    const f = this.#fields;
    for (let i = 0; i < f.length; i += 2) callback(f[i + 1]!, f[i]!.toLowerCase());
  }
}
