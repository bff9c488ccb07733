/**
 * Observer benchmarks: what the metrics observer adds to request events.
 * Run with `deno task bench bench/observe_bench.ts`.
 *
 * Group "observer events": one request's life as the queue set reports it
 * (enqueued, dispatched, finished, released: 4 events), called directly on
 * the `FlowcontrolMetrics` observer and on a no-op observer. "1 schema"
 * hits the last-schema shortcut; "8 schemas" alternates flow schemas so
 * every event does a Map lookup (the worst case).
 *
 * Group "queue-set cycle": a queue set with 16 queues and 4 seats; each
 * iteration starts a request (it queues and dispatches at once) and
 * finishes it, with no observer, a no-op observer, and the metrics
 * observer.
 */

import {
  FakeEventClock,
  QueueSet,
  type QueueSetObserver,
  type QueueSetRequest,
} from "../src/fairqueuing/mod.ts";
import type { RequestDescriptor } from "../src/fairqueuing/types.ts";
import { FlowcontrolMetrics } from "../src/observe/mod.ts";

const SCHEMAS = 8;
const descriptors: RequestDescriptor[] = Array.from({ length: SCHEMAS }, (_, i) => ({
  flowSchema: `schema-${i}`,
  distinguisher: "",
}));

const noop: QueueSetObserver = {
  enqueued() {},
  dispatched() {},
  rejected() {},
  finished() {},
  released() {},
};

/** Real request handles (one per schema) to pass to the observers. */
function sampleRequests(): QueueSetRequest[] {
  const qs = new QueueSet({ type: "Exempt" }, { clock: new FakeEventClock() });
  return descriptors.map((descriptor) => qs.startRequest({ descriptor }));
}

function lifeCycle(o: QueueSetObserver, r: QueueSetRequest): void {
  o.enqueued!(r, 1);
  o.dispatched!(r, 0.5);
  o.finished!(r, 2);
  o.released!(r, 1);
}

const requests = sampleRequests();
const metricsObserver = new FlowcontrolMetrics().observerFor("workload-low");
let k = 0;

Deno.bench("no-op observer, 4 events", { group: "observer events", baseline: true }, () => {
  lifeCycle(noop, requests[0]!);
});
Deno.bench("metrics observer, 4 events, 1 schema", { group: "observer events" }, () => {
  lifeCycle(metricsObserver, requests[0]!);
});
Deno.bench("metrics observer, 4 events, 8 schemas", { group: "observer events" }, () => {
  k = (k + 1) % SCHEMAS;
  const r = requests[k]!;
  metricsObserver.enqueued(r, 1);
  metricsObserver.dispatched(r, 0.5);
  k = (k + 1) % SCHEMAS;
  const s = requests[k]!;
  metricsObserver.finished(s, 2);
  metricsObserver.released(s, 1);
});

function cycleBench(observer: QueueSetObserver | undefined): () => void {
  const clock = new FakeEventClock();
  const qs = new QueueSet(
    {
      type: "Limited",
      concurrencyLimit: 4,
      queuing: { queues: 16, queueLengthLimit: 50, handSize: 4 },
    },
    observer === undefined ? { clock } : { clock, observer },
  );
  let i = 0;
  return () => {
    const r = qs.startRequest({ hash: { hi: 0, lo: i }, descriptor: descriptors[i % SCHEMAS]! });
    i++;
    clock.advance(0.01);
    r.finish();
  };
}

Deno.bench("no observer", { group: "queue-set cycle", baseline: true }, cycleBench(undefined));
Deno.bench("no-op observer", { group: "queue-set cycle" }, cycleBench(noop));
Deno.bench(
  "metrics observer",
  { group: "queue-set cycle" },
  cycleBench(new FlowcontrolMetrics().observerFor("workload-low")),
);
