/**
 * A segment trie of path patterns that finds the first matching pattern (in
 * declaration order) without trying every pattern: literal segments are map
 * lookups, and a subtree whose earliest pattern comes after the best match
 * so far is skipped.
 *
 * @module
 */

/** One segment of a pattern: a literal, a parameter (one non-empty segment) or the wildcard. */
export type PatternSegment = { literal: string } | "param" | "wildcard";

/** What the trie stores: an entry in declaration order, with an optional method filter. */
export interface TrieEntry {
  /** Position in declaration order; earlier wins. */
  index: number;
  /** Upper-case methods, or undefined for any. */
  methods: ReadonlySet<string> | undefined;
}

class Node<T extends TrieEntry> {
  readonly literals = new Map<string, Node<T>>();
  param: Node<T> | undefined;
  /** Entries whose pattern ends here, in order. */
  readonly ends: T[] = [];
  /** Entries whose pattern ends with a wildcard here, in order. */
  readonly wildcards: T[] = [];
  /** Smallest index in this subtree. */
  minIndex = Infinity;
}

/** Entries by path pattern. */
export class RouteTrie<T extends TrieEntry> {
  readonly #root = new Node<T>();
  #best: T | undefined;
  #method = "";
  #path = "";

  /** Adds `entry` under `segments`; add in declaration order. */
  add(segments: readonly PatternSegment[], entry: T): void {
    let node = this.#root;
    node.minIndex = Math.min(node.minIndex, entry.index);
    for (const segment of segments) {
      if (segment === "wildcard") {
        node.wildcards.push(entry);
        return;
      }
      let next: Node<T> | undefined;
      if (segment === "param") {
        next = node.param ??= new Node<T>();
      } else {
        next = node.literals.get(segment.literal);
        if (next === undefined) node.literals.set(segment.literal, next = new Node<T>());
      }
      node = next;
      node.minIndex = Math.min(node.minIndex, entry.index);
    }
    node.ends.push(entry);
  }

  /**
   * The earliest entry whose pattern matches `path` (split at "/" after an
   * optional leading "/") and whose methods include `method`.
   */
  find(method: string, path: string): T | undefined {
    this.#best = undefined;
    this.#method = method;
    this.#path = path;
    this.#search(this.#root, path.charCodeAt(0) === 0x2f ? 1 : 0, true);
    const best = this.#best;
    this.#best = undefined;
    return best;
  }

  /** Searches from the segment starting at `pos` (past the end: nothing left). */
  #search(node: Node<T>, pos: number, root: boolean): void {
    const path = this.#path;
    const n = path.length;
    // A wildcard needs the slash before it, so a position past the end does not do.
    if (pos <= n) this.#consider(node.wildcards);
    // The root pattern "/" matches the root path (nothing after the leading slash).
    if (pos > n || (root && pos === n)) {
      this.#consider(node.ends);
      return;
    }
    if (pos === n) return; // an empty last segment matches no literal nor parameter
    let end = path.indexOf("/", pos);
    if (end < 0) end = n;
    const literal = node.literals.get(path.slice(pos, end));
    if (literal !== undefined && literal.minIndex < this.#bound()) {
      this.#search(literal, end + 1, false);
    }
    const param = node.param;
    if (param !== undefined && end > pos && param.minIndex < this.#bound()) {
      this.#search(param, end + 1, false);
    }
  }

  #bound(): number {
    return this.#best === undefined ? Infinity : this.#best.index;
  }

  #consider(entries: readonly T[]): void {
    const bound = this.#bound();
    for (const entry of entries) {
      if (entry.index >= bound) return;
      if (entry.methods === undefined || entry.methods.has(this.#method)) {
        this.#best = entry;
        return;
      }
    }
  }
}
