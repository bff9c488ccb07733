/**
 * The `apf()` middleware invoked directly: per request, a fresh
 * Hono `Context` over one prepared `Request`, the middleware, and a `next`
 * that does what Hono's compose does with `c.text("hello")`. No HTTP, no
 * router: what is left is the middleware's own server CPU per request, the
 * quantity the wrk target bounds (0.6 µs over the no-op middleware).
 *
 * Variants take turns in 51 rounds of one batch each (a busy machine slows
 * them all alike); the table gives the median ns per request and the
 * difference to the no-op middleware.
 *
 * With `APF_BASELINE=<dir>` (another checkout, e.g. from `git archive`), its
 * `apf()` runs too, in the same rounds, to measure a change against what it
 * replaces. Two copies of the middleware in one process are not measured
 * alike (the same code loaded twice differed by a fifth on 2026-11-28, the
 * copy loaded second being the slower), so `APF_DIR=<dir>` instead
 * makes the process measure that checkout's `apf()` alone: run it and this
 * checkout in alternate processes, and compare each to its own process's
 * `hdrafter`.
 *
 * Run: `deno run --allow-read --allow-env bench/hono_middleware_bench.ts`.
 *
 * @module
 */

import { Context, type MiddlewareHandler } from "hono";
import { apf as apfHere } from "../src/hono/mod.ts";
import { ALICE, APF_FIELDS } from "./_apf_fields.ts";

const apfDir = Deno.env.get("APF_DIR");
const apf: typeof apfHere = apfDir === undefined
  ? apfHere
  : (await import(`${apfDir}/src/hono/mod.ts`)).apf;

const ROUNDS = 51;
const BATCH = 20_000;

const request = new Request("http://127.0.0.1:8000/");
const alice = ALICE;
const [[FS_NAME, FS_UID], [PL_NAME, PL_UID], [TIMING_NAME, TIMING]] = APF_FIELDS;

type Handler = (c: Context, next: () => Promise<void>) => Promise<unknown>;

function batch(middleware: Handler): (n: number) => Promise<void> {
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const c = new Context(request);
      // Hono's compose: the handler's response becomes c.res.
      await middleware(c, () => {
        c.res = c.text("hello");
        return Promise.resolve();
      });
      if (c.res.status !== 200) throw new Error(`Cannot bench: status ${c.res.status}`);
    }
  };
}

const noop: MiddlewareHandler = async (_c, next) => {
  await next();
};
/** The no-op plus the three response fields apf() adds (names and values), set the same way (wrk's `hdrafter`). */
const hdrafter: MiddlewareHandler = async (c, next) => {
  await next();
  const h = c.res.headers;
  h.set(FS_NAME, FS_UID);
  h.set(PL_NAME, PL_UID);
  h.append(TIMING_NAME, TIMING);
};
const apfMiddleware = apf({ identify: () => alice });

const variants: [string, (n: number) => Promise<void>][] = [
  ["no-op middleware", batch(noop as Handler)],
  ["no-op + three headers after next()", batch(hdrafter as Handler)],
  ["apf(), identified user", batch(apfMiddleware as unknown as Handler)],
];
const baselineDir = Deno.env.get("APF_BASELINE");
const baseline: typeof apfMiddleware | null = baselineDir === undefined
  ? null
  : (await import(`${baselineDir}/src/hono/mod.ts`)).apf({ identify: () => alice });
if (baseline !== null) {
  variants.push(["apf() of APF_BASELINE", batch(baseline as unknown as Handler)]);
}

const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
for (const [, run] of variants) await run(BATCH); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of variants) {
    const t0 = performance.now();
    await run(BATCH);
    samples.get(name)!.push(((performance.now() - t0) * 1e6) / BATCH);
  }
}
apfMiddleware.close();
baseline?.close();

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}
const base = median(samples.get("no-op middleware")!);
const headers = median(samples.get("no-op + three headers after next()")!);
console.log("| variant | ns/request (median) | over no-op | over the header-setting no-op |");
console.log("| --- | --- | --- | --- |");
for (const [name, xs] of samples) {
  const m = median(xs);
  console.log(
    `| ${name} | ${m.toFixed(0)} | ${(m - base).toFixed(0)} ns | ${(m - headers).toFixed(0)} ns |`,
  );
}
