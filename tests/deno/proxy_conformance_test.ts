/**
 * The proxy conformance suite (`tests/_helpers/proxy_conformance.ts`) for
 * both upstream clients of the gateway: the pooled HTTP/1.1 client (the
 * default) and Deno's `fetch`.
 */

import { proxyConformance } from "../_helpers/proxy_conformance.ts";

proxyConformance("http1");
proxyConformance("fetch");
