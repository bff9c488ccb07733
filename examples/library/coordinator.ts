/**
 * The snippet of `docs/library.md`, "The coordinator": the embedded
 * coordinator hands out every level's seats. What it takes as given comes
 * from `_context.ts`.
 *
 *   deno run examples/library/coordinator.ts
 *   npx -y deno@2 run examples/library/coordinator.ts
 *
 * @module
 */

// The snippet holds its seat with `using`, whose name it never reads.
// deno-lint-ignore-file no-unused-vars

import { abortSignalOfTheRequest, handle } from "./_context.ts";
import {
  bootstrapConfiguration,
  Classifier,
  describeRequest,
  effectiveConfiguration,
  EmbeddedCoordinator,
  normalizeUser,
  seatRequestFor,
} from "@apf/edge";

const effective = effectiveConfiguration(bootstrapConfiguration(), { serverConcurrencyLimit: 600 });
const classifier = new Classifier(effective);
const coordinator = new EmbeddedCoordinator(effective); // borrowing runs every 10 s

const user = normalizeUser({ name: "alice", groups: ["dev"] });
const info = describeRequest("GET", "/api/v1/namespaces/a/pods");
const request = seatRequestFor(classifier.classify(user, info), { user, requestInfo: info });
const admission = await coordinator.acquire(request, { signal: abortSignalOfTheRequest });
if (admission.admitted) {
  using seat = admission.seat; // released when the block ends, whatever happens
  await handle(); // admission.waitedMs: time spent in a queue
} else {
  // admission.reason: "queue-full" | "concurrency-limit" | "time-out" | "cancelled" | "unavailable"
  // answer 429 with Retry-After: admission.retryAfterSeconds
}
coordinator.close(); // waiting requests get "unavailable"; timers stop
