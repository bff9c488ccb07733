/**
 * The snippet of `docs/library.md`, "Work estimation": how many seats a
 * request takes, and for how long after it. What it takes as given comes
 * from `_context.ts`.
 *
 *   deno run examples/library/work_estimation.ts
 *   npx -y deno@2 run examples/library/work_estimation.ts
 *
 * @module
 */

import { c, clock, info, url } from "./_context.ts";
import {
  kubernetesEstimator,
  ObjectCountTracker,
  routeCostEstimator,
  WatchTracker,
} from "@apf/edge";

const objectCounts = new ObjectCountTracker(clock); // objectCounts.set("pods", { count, avgSizeBytes })
const watches = new WatchTracker(); // const forget = watches.register(requestInfo, query)
const estimate = routeCostEstimator(
  [
    { method: "POST", pattern: "/v1/reports/*", seats: 4 }, // an expensive endpoint
    { pattern: "/v1/exports/:id", seats: 2, finalSeats: 1, additionalLatencyMs: 50 },
  ],
  kubernetesEstimator({ objectCounts, watchCounts: watches }), // the fallback
);
const work = estimate({
  requestInfo: info,
  method: "GET",
  query: url.searchParams,
  flowSchema: c.flowSchema.name,
  priorityLevel: c.priorityLevel.name,
  maxSeats: c.priorityLevel.maxSeats ?? 0,
});

console.log(work);
