/**
 * What the snippets of `docs/library.md`, `docs/observing.md` and
 * `docs/configuration.md` take as given: a request, its URL, its signal, its
 * classification, a handler, a clock and a manifest. Each other file of this
 * folder is one of those snippets, whole, with what it needs imported from
 * here, so that `deno task check` type-checks every snippet of the guides;
 * each runs too:
 *
 *   deno run examples/library/classification.ts
 *   npx -y deno@2 run examples/library/classification.ts
 *
 * @module
 */

import {
  bootstrapConfiguration,
  type Classification,
  Classifier,
  type Clock,
  describeRequest,
  effectiveConfiguration,
  normalizeUser,
  type RequestInfo,
  systemClock,
} from "@apf/edge";

/** A request as a server receives it, from behind an authenticating proxy. */
export const request: Request = new Request("http://127.0.0.1/v1/tenants/acme/orders/42", {
  headers: { "X-Remote-User": "alice", "X-Remote-Group": "customers" },
});

/** The request's URL. */
export const url: URL = new URL(request.url);

/** The request's abort signal: it aborts when the client goes away. */
export const abortSignalOfTheRequest: AbortSignal = request.signal;

/** The built-in configuration at the default server concurrency limit. */
export const effective = effectiveConfiguration(bootstrapConfiguration(), {
  serverConcurrencyLimit: 600,
});

/** The request's Kubernetes RequestInfo. */
export const info: RequestInfo = describeRequest("GET", url);

/** The request's classification. */
export const classification: Classification = new Classifier(effective).classify(
  normalizeUser({ name: "alice", groups: ["customers"] }),
  info,
);

/** The classification, by the short name the work estimation snippet gives it. */
export const c: Classification = classification;

/** The real clock. */
export const clock: Clock = systemClock;

/** A manifest, as read from a file. */
export const yamlText = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: customers
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 50
    limitResponse:
      type: Queue
      queuing: { queues: 64, handSize: 4, queueLengthLimit: 20 }
`;

/** The application's handler: here, 10 ms of work. */
export async function handle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 10));
}
