/**
 * Observability: a Prometheus registry, the `apiserver_flowcontrol_*`
 * metrics (recorded through queue-set observers and read from coordinator
 * snapshots at scrape time), Kubernetes' debug dumps, and the admin router
 * that serves them on any platform.
 *
 * @module
 */

export { type Metric, PROMETHEUS_CONTENT_TYPE, Registry } from "./registry.ts";
export {
  Counter,
  CounterChild,
  Gauge,
  GaugeChild,
  Histogram,
  HistogramChild,
  type HistogramOptions,
  MetricFamily,
  type MetricOptions,
  ScalarMetric,
} from "./metrics.ts";
export {
  FlowcontrolMetrics,
  type FlowcontrolMetricsOptions,
  QUEUE_LENGTH_BUCKETS,
  REQUEST_DURATION_BUCKETS,
  WORK_ESTIMATED_SEATS_BUCKETS,
} from "./flowcontrol_metrics.ts";
export { PriorityLevelObserver, type RequestFamilies } from "./level_observer.ts";
export {
  dumpPriorityLevels,
  dumpPriorityLevelsJson,
  dumpQueues,
  dumpQueuesJson,
  dumpRequests,
  dumpRequestsJson,
  type DumpRequestsOptions,
  type PriorityLevelDumpRow,
  type QueueDumpRow,
  type RequestDumpDetails,
  type RequestDumpRow,
} from "./dumps.ts";
export { mergeExpositions } from "./merge_expositions.ts";
export {
  type AdminRoute,
  type AdminRouter,
  adminRouter,
  type AdminRouterOptions,
} from "./admin_router.ts";
export { type AdminReading, type AdminSource, AdminUnavailable } from "./admin_source.ts";
export { bearerTokenCheck } from "./bearer_token.ts";
export type { LiveViewOptions } from "./live_view.ts";
export {
  dumpSessions,
  dumpSessionsJson,
  type ReclaimedSeatDumpRow,
  type SessionsDump,
} from "./session_dumps.ts";
export type {
  BudgetHolderLine,
  BudgetSnapshot,
  CoordinatorSnapshot,
  DemandSnapshot,
  PriorityLevelSnapshot,
  ReclaimedSeatSnapshot,
  SessionSnapshot,
  SessionsSnapshot,
} from "./types.ts";
