/**
 * The snippet of `docs/library.md`, "Queue sets": one priority level's queue
 * set decides who runs, who waits and who is rejected. What it takes as
 * given comes from `_context.ts`.
 *
 *   deno run examples/library/queue_set.ts
 *   npx -y deno@2 run examples/library/queue_set.ts
 *
 * @module
 */

import { classification, handle } from "./_context.ts";
import { FakeEventClock } from "@apf/edge";
import { QueueSet } from "@apf/edge/sim";

const clock = new FakeEventClock(); // or omit `clock` for the real one
const level = new QueueSet(
  {
    type: "Limited",
    concurrencyLimit: 10,
    queuing: { queues: 64, queueLengthLimit: 50, handSize: 6 },
  },
  { clock, name: "workload-low" },
);
const controller = new AbortController();
const request = level.startRequest({
  hash: classification.flowHash!, // { hi, lo } from the Classifier; required with several queues
  work: { initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 },
  signal: controller.signal, // abort while waiting: "cancelled"
  waitLimitMs: 15_000, // still waiting then: "time-out"
});
const decision = request.decision ?? await request.wait();
if (decision === "execute") {
  try {
    await handle();
  } finally {
    request.finish(); // exactly once; corrects virtual time by the real execution time
  }
} else {
  // "queue-full" | "concurrency-limit" | "time-out" | "cancelled": answer 429
}

console.log(decision);
level.close();
