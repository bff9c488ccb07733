/**
 * The series of one metric family, by label values: validation of names at
 * creation, a cached child per label-value tuple, and the rendered label
 * text of each series. Internal to the metrics.
 *
 * @module
 */

import { checkLabelName, checkMetricName, escapeLabelValue, fmtReceived } from "./_exposition.ts";

/** One series' labels as rendered, and the values it sorts by. */
export interface Series<C> {
  child: C;
  /** `a="x",b="y"` with names sorted, or `""`. */
  text: string;
  /** Label values in sorted-name order. */
  sortKey: string[];
}

/** What a family is created from (the fields of `MetricOptions`). */
export interface FamilyOptions {
  /** Metric name. */
  name: string;
  /** Help text. */
  help: string;
  /** Label names. */
  labelNames?: readonly string[];
}

/** Children by label values, shared by the three kinds of metric. */
export class Family<C> {
  readonly name: string;
  readonly labelNames: readonly string[];
  #order: number[];
  #series = new Map<string, Series<C>>();
  #make: () => C;

  constructor(options: FamilyOptions, reserved: readonly string[], make: () => C) {
    checkMetricName(options.name);
    if (typeof options.help !== "string") {
      throw new TypeError(
        `Cannot create metric ${options.name}: help must be a string, got ${
          fmtReceived(options.help)
        }`,
      );
    }
    const names = [...(options.labelNames ?? [])];
    for (const n of names) checkLabelName(options.name, n, reserved);
    if (new Set(names).size !== names.length) {
      throw new TypeError(
        `Cannot create metric ${options.name}: duplicate label names ${fmtReceived(names)}`,
      );
    }
    this.name = options.name;
    this.labelNames = Object.freeze(names);
    this.#order = names.map((_, i) => i).sort((a, b) => (names[a]! < names[b]! ? -1 : 1));
    this.#make = make;
    if (names.length === 0) this.get([]);
  }

  get(values: readonly string[]): C {
    const n = this.labelNames.length;
    // One label: the value is the key; else length-prefixed, so no two tuples collide.
    let key = values.length === 1 ? values[0]! : "";
    if (values.length !== 1) { for (const v of values) key += `${v.length}:${v}`; }
    const hit = this.#series.get(key);
    if (hit !== undefined && values.length === n) return hit.child;
    if (values.length !== n || values.some((v) => typeof v !== "string")) {
      throw new TypeError(
        `Cannot get series of ${this.name}: expected ${n} string label values (${
          this.labelNames.join(", ")
        }), got ${fmtReceived(values)}`,
      );
    }
    const sortKey = this.#order.map((i) => values[i]!);
    const text = this.#order
      .map((i) => `${this.labelNames[i]}="${escapeLabelValue(values[i]!)}"`)
      .join(",");
    const child = this.#make();
    this.#series.set(key, { child, text, sortKey });
    return child;
  }

  clear(): void {
    this.#series.clear();
    if (this.labelNames.length === 0) this.get([]);
  }

  delete(values: readonly string[]): boolean {
    let key = values.length === 1 ? values[0]! : "";
    if (values.length !== 1) { for (const v of values) key += `${v.length}:${v}`; }
    return this.#series.delete(key);
  }

  /** Series sorted by label values, as Go's gatherer sorts them. */
  sorted(): Series<C>[] {
    return [...this.#series.values()].sort((a, b) => {
      for (let i = 0; i < a.sortKey.length; i++) {
        const x = a.sortKey[i]!, y = b.sortKey[i]!;
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    });
  }
}

export const braces = (text: string): string => (text === "" ? "" : `{${text}}`);
