/** Helpers for QueueSet tests. */

import { FakeEventClock } from "../../src/fairqueuing/clock.ts";
import { QueueSet, type QueueSetOptions } from "../../src/fairqueuing/queue_set.ts";
import type {
  LimitedQueueSetConfig,
  QueueSetConfig,
  QueueSetRequest,
} from "../../src/fairqueuing/types.ts";

/** A queue set on a fresh fake clock. */
export function makeSet(
  config: QueueSetConfig,
  options: Omit<QueueSetOptions, "clock"> = {},
): { qs: QueueSet; clock: FakeEventClock } {
  const clock = new FakeEventClock();
  return { qs: new QueueSet(config, { ...options, clock }), clock };
}

/** A limited queuing configuration. */
export function queuing(
  concurrencyLimit: number,
  queues: number,
  queueLengthLimit: number,
  handSize: number,
): LimitedQueueSetConfig {
  return { type: "Limited", concurrencyLimit, queuing: { queues, queueLengthLimit, handSize } };
}

/** Records the order in which requests are decided. */
export class DecisionLog {
  readonly events: string[] = [];
  /** An onDecision callback that logs `label:decision`. */
  note(label: string): (r: QueueSetRequest) => void {
    return (r) => this.events.push(`${label}:${r.decision}`);
  }
}
