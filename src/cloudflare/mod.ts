/**
 * `@apf/edge/cloudflare`: the Cloudflare Workers adapter. The Durable Object
 * classes arrive with the coordinator; until then this entry point offers the
 * portable core (it runs unchanged in workerd).
 *
 * @module
 */

export * from "../../mod.ts";
