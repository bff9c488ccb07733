/**
 * `@apf/edge/hono`: the Hono integration. The `apf()` middleware arrives with
 * the gateway; until then this entry point offers the portable core, so that
 * Hono apps can load and check their APF configuration with one import.
 *
 * @module
 */

export * from "../../mod.ts";
