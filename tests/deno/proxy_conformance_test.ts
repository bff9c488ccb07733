/**
 * The proxy conformance suite (`tests/_helpers/proxy_conformance.ts`) for
 * both upstream clients of the gateway: the pooled HTTP/1.1 client (the
 * default) and Deno's `fetch`; and the HTTP/1.1 client again with the
 * gateway's sockets read and written by the connections' own methods, as
 * where Deno's core operations cannot be reached (`src/deno/_socket.ts`).
 */

import { proxyConformance } from "../_helpers/proxy_conformance.ts";

proxyConformance("http1");
proxyConformance("fetch");
proxyConformance("http1", { directOps: false });
