/**
 * The snippet of `docs/library.md`, "Classification": classify a request
 * without a framework. What it takes as given comes from `_context.ts`.
 *
 *   deno run examples/library/classification.ts
 *   npx -y deno@2 run examples/library/classification.ts
 *
 * @module
 */

import { request } from "./_context.ts";
import {
  bootstrapConfiguration,
  Classifier,
  effectiveConfiguration,
  frontProxyIdentity,
  normalizeUser,
  RequestInfoResolver,
} from "@apf/edge";

const classifier = new Classifier(effectiveConfiguration(bootstrapConfiguration()));
const describe = new RequestInfoResolver({
  // An ordinary REST API with Kubernetes resource semantics: the tenant is the namespace,
  // so a ByNamespace FlowSchema gives every tenant its own flow.
  routes: [{
    pattern: "/v1/tenants/:tenant/orders/:id?",
    apiGroup: "shop",
    resource: "orders",
    namespaceParam: "tenant",
    nameParam: "id",
  }],
});
const identify = frontProxyIdentity(); // only behind a proxy that strips X-Remote-* from clients

const url = new URL(request.url);
const user = normalizeUser(identify(request, undefined));
const c = classifier.classify(user, describe.describe(request.method, url.pathname, url.search));
// c.flowSchema.name, c.priorityLevel.name, c.distinguisher, c.flowHash ({ hi, lo } | null), c.match

console.log(c.flowSchema.name, c.priorityLevel.name, c.distinguisher);
