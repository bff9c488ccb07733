/**
 * An adaptive server concurrency limit's state as Prometheus metrics, beside
 * Kubernetes' `apiserver_flowcontrol_*` in the same registry. Kubernetes has
 * no such limit; the names follow Envoy's adaptive concurrency statistics
 * (`concurrency_limit`, `min_rtt_msecs`, `sample_rtt_msecs`,
 * `min_rtt_calculation_active`) in Prometheus' base units:
 *
 * | metric | what |
 * | --- | --- |
 * | `apf_adaptive_concurrency_limit` | the learned ServerCL in force (pinned while the minRTT is measured) |
 * | `apf_adaptive_min_rtt_seconds` | the last minRTT measured (0 before the first) |
 * | `apf_adaptive_sample_rtt_seconds` | the latency percentile of the last sample window |
 * | `apf_adaptive_gradient` | the gradient of the last sample window |
 * | `apf_adaptive_min_rtt_calculation_active` | 1 while the minRTT is measured |
 * | `apf_adaptive_sample_windows_total` | sample windows evaluated |
 * | `apf_adaptive_min_rtt_measurements_total` | minRTT measurements completed |
 *
 * @module
 */

import type { GradientSnapshot } from "../adaptive/types.ts";
import type { CounterChild } from "./metrics.ts";
import type { Registry } from "./registry.ts";

/**
 * Registers the adaptive limit's metrics in `registry`, read from
 * `snapshot()` at scrape time; returns the function removing the collect hook.
 *
 * @throws {TypeError} when `registry` already has these metrics.
 */
export function exposeAdaptiveLimit(
  registry: Registry,
  snapshot: () => GradientSnapshot,
): () => void {
  const gauge = (name: string, help: string) => registry.gauge({ name, help, labelNames: [] });
  const limit = gauge(
    "apf_adaptive_concurrency_limit",
    "The server concurrency limit learned from latency (pinned while the minRTT is measured)",
  );
  const minRtt = gauge("apf_adaptive_min_rtt_seconds", "The last minRTT measured, in seconds");
  const sampleRtt = gauge(
    "apf_adaptive_sample_rtt_seconds",
    "The latency percentile of the last sample window, in seconds",
  );
  const gradient = gauge("apf_adaptive_gradient", "The gradient of the last sample window");
  const active = gauge(
    "apf_adaptive_min_rtt_calculation_active",
    "1 while the minRTT is measured at the pinned limit",
  );
  const windows = registry.counter({
    name: "apf_adaptive_sample_windows_total",
    help: "Sample windows evaluated",
    labelNames: [],
  });
  const measurements = registry.counter({
    name: "apf_adaptive_min_rtt_measurements_total",
    help: "minRTT measurements completed",
    labelNames: [],
  });
  // Counters only go up: each scrape adds what the controller counted since the last one.
  const sync = (child: CounterChild, total: number) => child.inc(total - child.value);
  return registry.onCollect(() => {
    const s = snapshot();
    limit.labels().set(s.limit);
    if (s.minRttMs !== null) minRtt.labels().set(s.minRttMs / 1000);
    // A window of refusals has an infinite percentile: Prometheus writes it +Inf.
    if (s.sampleRttMs !== null) sampleRtt.labels().set(s.sampleRttMs / 1000);
    if (s.gradient !== null) gradient.labels().set(s.gradient);
    active.labels().set(s.phase === "measuring-min-rtt" ? 1 : 0);
    sync(windows.labels(), s.windows);
    sync(measurements.labels(), s.minRttMeasurements);
  });
}
