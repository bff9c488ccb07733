/**
 * The server of the wrk benchmark (bench/hono_wrk.sh): a
 * hello-world Hono app on Deno, `GET /` → `hello`, in one variant per
 * process so variants cannot disturb each other's JIT or heap:
 *
 * - `bare`: no middleware;
 * - `noop`: `async (c, next) => { await next(); }`, the ceiling for any middleware;
 * - `apf`: `apf()` with the embedded coordinator and built-in configuration,
 *   every request from one identified user (no contention at 16 connections);
 * - `apf-auto`: the same with `serverConcurrencyLimit: "auto"` (the learned
 *   limit's overhead: `REFERENCE=apf bench/hono_wrk.sh 5 8 16 "apf apf-auto"`);
 * - `ratelimit`: hono-rate-limiter with its memory store, a limit it never reaches;
 * - diagnostics, each the no-op middleware plus one thing `apf()` does:
 *   `signal` reads `c.req.raw.signal`; `hdr` sets the three fields `apf()`
 *   adds (the same names and values, `_apf_fields.ts`) with `c.header()`
 *   before `next()`; `hdrafter` sets them on `c.res` after it;
 * - `apf-base`: `apf` from another checkout (`APF_BASELINE=<dir>`, e.g. from
 *   `git archive`), to compare a change with what it replaces in one run.
 *
 * Run: `deno run --allow-net=127.0.0.1 --allow-env --allow-read bench/hono_wrk_server.ts <variant> [port]`.
 *
 * @module
 */

import { Hono } from "hono";
// An outside reference for this bench only, so kept out of deno.json's import map (the package's).
// deno-lint-ignore no-import-prefix
import { rateLimiter } from "npm:hono-rate-limiter@0.5.4";
import { apf as apfHere } from "../src/hono/mod.ts";
import { ALICE, APF_FIELDS } from "./_apf_fields.ts";

const VARIANTS = [
  "bare",
  "noop",
  "apf",
  "apf-auto",
  "apf-base",
  "ratelimit",
  "signal",
  "hdr",
  "hdrafter",
] as const;
type Variant = typeof VARIANTS[number];

const variant = Deno.args[0] as Variant;
if (!VARIANTS.includes(variant)) {
  throw new TypeError(
    `Cannot start: variant must be one of ${VARIANTS.join(", ")}, got ${variant}`,
  );
}
const port = Number(Deno.args[1] ?? 8000);

const app = new Hono();
const alice = ALICE;
// The fields apf() adds, for the header-setting no-ops: the same names and values.
const [[FS_NAME, FS_UID], [PL_NAME, PL_UID], [TIMING_NAME, TIMING]] = APF_FIELDS;
const apf: typeof apfHere = variant === "apf-base"
  ? (await import(`${Deno.env.get("APF_BASELINE")}/src/hono/mod.ts`)).apf
  : apfHere;
const apfMiddleware = variant.startsWith("apf")
  ? apf({
    identify: () => alice,
    ...(variant === "apf-auto" && { serverConcurrencyLimit: "auto" as const }),
  })
  : null;
switch (variant) {
  case "noop":
    app.use(async (_c, next) => {
      await next();
    });
    break;
  case "apf":
  case "apf-auto":
  case "apf-base":
    app.use(apfMiddleware!);
    break;
  case "signal":
    app.use(async (c, next) => {
      c.req.raw.signal;
      await next();
    });
    break;
  case "hdr":
    app.use(async (c, next) => {
      c.header(FS_NAME, FS_UID);
      c.header(PL_NAME, PL_UID);
      c.header(TIMING_NAME, TIMING, { append: true });
      await next();
    });
    break;
  case "hdrafter":
    app.use(async (c, next) => {
      await next();
      const h = c.res.headers;
      h.set(FS_NAME, FS_UID);
      h.set(PL_NAME, PL_UID);
      h.append(TIMING_NAME, TIMING);
    });
    break;
  case "ratelimit":
    app.use(rateLimiter({ windowMs: 60_000, limit: 1e12, keyGenerator: () => "alice" }));
    break;
}
app.get("/", (c) => c.text("hello"));

const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, app.fetch);
console.log(`listening ${variant} on 127.0.0.1:${port}`);
Deno.addSignalListener("SIGTERM", () => {
  apfMiddleware?.close();
  server.shutdown();
});
