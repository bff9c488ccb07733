/**
 * The three metric kinds of the registry. Each is a family of series, one
 * per combination of label values; `labels(...)` returns the series' child,
 * cached, so callers keep it and update it with one field write.
 *
 * @module
 */

import { fmtReceived, formatValue } from "./_exposition.ts";
import { braces, Family } from "./_family.ts";
import { checkNumber } from "../_shared/errors.ts";

/** Options of a counter or gauge. */
export interface MetricOptions {
  /** Metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`). */
  name: string;
  /** Help text (`# HELP`). */
  help: string;
  /** Label names, fixed for the metric's life (default: none). */
  labelNames?: readonly string[];
}

/** Options of a histogram. */
export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing; `+Inf` is implied (and dropped if given). */
  buckets: readonly number[];
}

/** One counter series. */
export class CounterChild {
  #value = 0;
  /** The current value. */
  get value(): number {
    return this.#value;
  }
  /**
   * Adds `n` (default 1).
   *
   * @throws {RangeError} when `n` is negative or NaN (counters only go up; {TypeError}: not a
   * number).
   */
  inc(n = 1): void {
    checkNumber(n, (x) => x >= 0, () => `Cannot decrease a counter: got ${n}`);
    this.#value += n;
  }
}

/** One gauge series. */
export class GaugeChild {
  #value = 0;
  /** The current value. */
  get value(): number {
    return this.#value;
  }
  /** Sets the value. */
  set(v: number): void {
    this.#value = v;
  }
  /** Adds `n` (default 1; may be negative). */
  inc(n = 1): void {
    this.#value += n;
  }
  /** Subtracts `n` (default 1). */
  dec(n = 1): void {
    this.#value -= n;
  }
}

/** One histogram series. */
export class HistogramChild {
  #bounds: Float64Array;
  /** Non-cumulative counts per bucket; the last one is `+Inf`. */
  #counts: Float64Array;
  #sum = 0;
  #count = 0;

  /** Creates a series with upper bounds `bounds` (validated by the histogram). */
  constructor(bounds: Float64Array) {
    this.#bounds = bounds;
    this.#counts = new Float64Array(bounds.length + 1);
  }
  /** Records an observation: O(buckets), no allocation. */
  observe(x: number): void {
    const b = this.#bounds;
    let i = 0;
    while (i < b.length && !(x <= b[i]!)) i++;
    this.#counts[i]!++;
    this.#sum += x;
    this.#count++;
  }
  /** Number of observations. */
  get count(): number {
    return this.#count;
  }
  /** Sum of observations. */
  get sum(): number {
    return this.#sum;
  }
  /** Cumulative counts per bucket, `+Inf` last (what `_bucket` series show). */
  cumulativeCounts(): number[] {
    let acc = 0;
    return Array.from(this.#counts, (c) => (acc += c));
  }
}

/**
 * What every metric kind shares: a name, a help text and a family of
 * series, one per combination of label values.
 */
export abstract class MetricFamily<C> {
  /** The metric name. */
  readonly name: string;
  /** The help text. */
  readonly help: string;
  #family: Family<C>;

  /**
   * Validates the options and creates the family (a label-less one gets its
   * series now); `reserved` label names are refused.
   */
  constructor(options: MetricOptions, reserved: readonly string[], make: () => C) {
    this.#family = new Family(options, reserved, make);
    this.name = options.name;
    this.help = options.help;
  }
  /** The label names. */
  get labelNames(): readonly string[] {
    return this.#family.labelNames;
  }
  /**
   * The series for `values` (one per label name), created on first use.
   *
   * @throws {TypeError} when the count or type of values is wrong.
   */
  labels(...values: string[]): C {
    return this.#family.get(values);
  }
  /** Removes every series (a label-less metric gets a fresh empty series). */
  reset(): void {
    this.#family.clear();
  }
  /** Renders the series (no `# HELP`/`# TYPE`), `""` when there are none. */
  expose(): string {
    let out = "";
    for (const s of this.#family.sorted()) out += this.renderSeries(s.text, s.child);
    return out;
  }
  /** The exposition lines of one series whose rendered labels are `labels`. */
  protected abstract renderSeries(labels: string, child: C): string;
  /** Removes one series; returns whether it existed. */
  protected removeSeries(values: string[]): boolean {
    return this.#family.delete(values);
  }
}

/** What counters and gauges share: series holding one number each. */
export abstract class ScalarMetric<C extends { readonly value: number }> extends MetricFamily<C> {
  /** Validates the options and creates the family. */
  constructor(options: MetricOptions, make: () => C) {
    super(options, [], make);
  }
  /** `name{labels} value`. */
  protected renderSeries(labels: string, child: C): string {
    return `${this.name}${braces(labels)} ${formatValue(child.value)}\n`;
  }
}

/** A counter family. */
export class Counter extends ScalarMetric<CounterChild> {
  /** `counter`. */
  readonly type = "counter" as const;

  /** Creates a counter (usually through {@linkcode Registry.counter}). */
  constructor(options: MetricOptions) {
    super(options, () => new CounterChild());
  }
}

/** A gauge family. */
export class Gauge extends ScalarMetric<GaugeChild> {
  /** `gauge`. */
  readonly type = "gauge" as const;

  /** Creates a gauge (usually through {@linkcode Registry.gauge}). */
  constructor(options: MetricOptions) {
    super(options, () => new GaugeChild());
  }
  /** Removes one series; returns whether it existed. */
  remove(...values: string[]): boolean {
    return this.removeSeries(values);
  }
}

/** A histogram family. */
export class Histogram extends MetricFamily<HistogramChild> {
  /** `histogram`. */
  readonly type = "histogram" as const;
  /** Upper bounds of the buckets, without the implied `+Inf`. */
  readonly buckets: readonly number[];
  #les: string[];

  /**
   * Creates a histogram (usually through {@linkcode Registry.histogram}).
   *
   * @throws {RangeError} for buckets that are not strictly increasing ({TypeError}: not numbers).
   */
  constructor(options: HistogramOptions) {
    const b = Array.isArray(options.buckets) ? [...options.buckets] : null;
    if (b !== null && b[b.length - 1] === Infinity) b.pop();
    if (
      b === null || b.some((x, i) => typeof x !== "number" || !(x > (i ? b[i - 1]! : -Infinity)))
    ) {
      const message =
        `Cannot create metric ${options.name}: buckets must be strictly increasing numbers, got ${
          fmtReceived(options.buckets)
        }`;
      // Numbers out of order are a range mistake; anything else is of the wrong type.
      throw b !== null && b.every((x) => typeof x === "number")
        ? new RangeError(message)
        : new TypeError(message);
    }
    const bounds = Float64Array.from(b);
    super(options, ["le"], () => new HistogramChild(bounds));
    this.buckets = Object.freeze(b);
    this.#les = [...b.map(formatValue), "+Inf"];
  }
  /** The `_bucket` lines, `_sum` and `_count` of one series. */
  protected renderSeries(labels: string, child: HistogramChild): string {
    const pre = labels === "" ? "" : `${labels},`;
    const counts = child.cumulativeCounts();
    let out = "";
    for (let i = 0; i < counts.length; i++) {
      out += `${this.name}_bucket{${pre}le="${this.#les[i]}"} ${formatValue(counts[i]!)}\n`;
    }
    out += `${this.name}_sum${braces(labels)} ${formatValue(child.sum)}\n`;
    out += `${this.name}_count${braces(labels)} ${formatValue(child.count)}\n`;
    return out;
  }
}
