/**
 * A small Prometheus registry: counters, gauges and histograms with label
 * names fixed at creation, cached children per label values (so the hot
 * path is a field update), collect-time hooks for values computed at scrape
 * time, and the text exposition format 0.0.4 as Go's client prints it
 * (families sorted by name, labels by name, series by label values).
 *
 * @module
 */

import { checkMetricName, escapeHelp } from "./_exposition.ts";
import { Counter, Gauge, Histogram, type HistogramOptions, type MetricOptions } from "./metrics.ts";

/** The `Content-Type` of {@linkcode Registry.expose}'s output. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Any metric a {@linkcode Registry} holds. */
export type Metric = Counter | Gauge | Histogram;

/**
 * A set of metrics and the hooks that refresh them at scrape time.
 *
 * @example
 * ```ts
 * import { Registry } from "./mod.ts";
 * const registry = new Registry();
 * const hits = registry.counter({ name: "hits_total", help: "Hits.", labelNames: ["path"] });
 * const root = hits.labels("/"); // cache it: inc() is then a field update
 * root.inc();
 * registry.expose();
 * // # HELP hits_total Hits.
 * // # TYPE hits_total counter
 * // hits_total{path="/"} 1
 * ```
 */
export class Registry {
  #metrics = new Map<string, Metric>();
  #hooks: Array<() => void> = [];

  /**
   * Creates and registers a counter.
   *
   * @throws {TypeError} for an invalid or already registered name, or invalid label names.
   */
  counter(options: MetricOptions): Counter {
    return this.#add(options.name, () => new Counter(options));
  }

  /**
   * Creates and registers a gauge.
   *
   * @throws {TypeError} for an invalid or already registered name, or invalid label names.
   */
  gauge(options: MetricOptions): Gauge {
    return this.#add(options.name, () => new Gauge(options));
  }

  /**
   * Creates and registers a histogram.
   *
   * @throws {TypeError} for an invalid or already registered name, or invalid label names.
   * @throws {RangeError} for buckets that are not strictly increasing ({TypeError}: not numbers).
   */
  histogram(options: HistogramOptions): Histogram {
    return this.#add(options.name, () => new Histogram(options));
  }

  /** The metric registered under `name`, if any. */
  get(name: string): Metric | undefined {
    return this.#metrics.get(name);
  }

  /**
   * Adds a hook run at the start of every {@linkcode Registry.expose}, to
   * set values computed at scrape time (for example gauges read from a
   * snapshot). Hooks run in the order added. Returns a function removing it.
   */
  onCollect(hook: () => void): () => void {
    if (typeof hook !== "function") {
      throw new TypeError(`Cannot add a collect hook: expected a function, got ${typeof hook}`);
    }
    this.#hooks.push(hook);
    return () => {
      const i = this.#hooks.indexOf(hook);
      if (i >= 0) this.#hooks.splice(i, 1);
    };
  }

  /**
   * Runs the collect hooks, then renders every metric in the text format
   * 0.0.4 (serve it with {@linkcode PROMETHEUS_CONTENT_TYPE}). A family with
   * labels and no series yet is left out, as Go's client does.
   */
  expose(): string {
    for (const hook of this.#hooks) hook();
    const names = [...this.#metrics.keys()].sort();
    let out = "";
    for (const name of names) {
      const m = this.#metrics.get(name)!;
      const body = m.expose();
      if (body === "") continue;
      out += `# HELP ${name} ${escapeHelp(m.help)}\n# TYPE ${name} ${m.type}\n${body}`;
    }
    return out;
  }

  #add<M extends Metric>(name: unknown, make: () => M): M {
    checkMetricName(name);
    if (this.#metrics.has(name)) {
      throw new TypeError(`Cannot register metric ${name}: the name is already registered`);
    }
    const m = make();
    this.#metrics.set(name, m);
    return m;
  }
}
