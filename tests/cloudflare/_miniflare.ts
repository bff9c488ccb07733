/**
 * Runs Worker code of this repository, written in TypeScript, in real workerd through
 * Miniflare: {@linkcode startWorker} bundles an entry module with esbuild (in memory, from
 * `node_modules`, no network), hands the bundle to Miniflare as an explicit module, and
 * returns the running Worker.
 *
 * A test that starts a Worker must turn off two sanitizers (spread
 * {@linkcode MINIFLARE_TEST_OPTIONS}): Miniflare leaves a `MessagePort` (of its synchronous
 * proxy fetcher) and a timer (its batch of proxy finalizations) behind after `dispose()`.
 *
 * ```ts ignore
 * Deno.test({ name: "…", ...MINIFLARE_TEST_OPTIONS }, async () => {
 *   await using worker = await startWorker({
 *     entry: new URL("./_fixtures/smoke_worker.ts", import.meta.url),
 *     durableObjects: { SMOKE: "SmokeObject" },
 *   });
 *   const res = await worker.fetch("/lease/a");
 * });
 * ```
 *
 * Permissions (those of `deno task test`): `--allow-read`, `--allow-run` (esbuild's binary,
 * workerd), `--allow-net=127.0.0.1` (workerd listens there; Miniflare talks to it), unscoped
 * `--allow-env` (Miniflare starts workerd with `{ ...process.env }` and esbuild starts its
 * service with the inherited environment: both list every variable, which Deno grants only to
 * an unscoped `--allow-env`), and `--allow-write=/tmp` (Miniflare's scratch directory
 * `os.tmpdir()/miniflare-<random>`; with `TMPDIR` set elsewhere, grant that instead).
 *
 * @module
 */

import * as esbuild from "esbuild";
import type { Readable } from "node:stream";
import { Miniflare, type MiniflareOptions, type WorkerOptions } from "miniflare";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import type { DurableObjectNamespace, RpcStub } from "../../src/cloudflare/_workers_types.d.ts";

/**
 * The compatibility date of test Workers. At most the bundled workerd's own date (2026-04-26
 * for miniflare 4.20260426.0): workerd refuses a later one.
 */
export const COMPATIBILITY_DATE = "2026-04-01";

/** Options of a `Deno.test` that starts Miniflare (see the module's documentation). */
export const MINIFLARE_TEST_OPTIONS = { sanitizeOps: false, sanitizeResources: false } as const;

/** What {@linkcode startWorker} starts. */
export interface StartWorkerOptions {
  /** The Worker's entry module, TypeScript or JavaScript; its default export is the handler. */
  entry: URL;
  /** Durable Object bindings: binding name to class name (exported by `entry`), or options. */
  durableObjects?: WorkerOptions["durableObjects"];
  /** Plain bindings (`env.NAME`): JSON values. */
  bindings?: Record<string, unknown>;
  /** Default {@linkcode COMPATIBILITY_DATE}. */
  compatibilityDate?: string;
  compatibilityFlags?: string[];
  /** esbuild's target; default wrangler's, `es2024` (which lowers `using` to helper calls). */
  target?: string;
  /** Any other Miniflare option, applied last. */
  miniflare?: Partial<MiniflareOptions>;
}

/** A Worker running in workerd; dispose of it (or `await using` it) to stop workerd. */
export interface StartedWorker extends AsyncDisposable {
  readonly mf: Miniflare;
  /** Where workerd listens (on 127.0.0.1), for plain `fetch` or `new WebSocket`. */
  readonly url: URL;
  /** The bundled module workerd runs. */
  readonly code: string;
  /** How long bundling and starting took, in ms. */
  readonly timings: { readonly bundleMs: number; readonly startMs: number };
  /** What the Worker and workerd printed so far (kept, not printed). */
  logs(): string;
  /** `mf.dispatchFetch` of `path` (relative to {@linkcode StartedWorker.url}). */
  fetch(
    path: string,
    init?: Parameters<Miniflare["dispatchFetch"]>[1],
  ): ReturnType<Miniflare["dispatchFetch"]>;
  /**
   * A stub, on the test's side, of the Durable Object `name` of the namespace `binding`:
   * calls run over Miniflare's proxy. Results that are objects arrive as proxies whose
   * properties read synchronously; stubs have no `[Symbol.dispose]` on this side (Miniflare
   * frees them when they are garbage-collected, or at `dispose()`).
   */
  durableObject<T>(binding: string, name: string): Promise<ProxiedStub<T>>;
  dispose(): Promise<void>;
}

/** A stub of `T` held by the test: {@linkcode RpcStub} without `[Symbol.dispose]`. */
export type ProxiedStub<T> = Omit<RpcStub<T>, typeof Symbol.dispose>;

let bundling: Promise<unknown> = Promise.resolve();

const root = new URL("../../", import.meta.url);
const packageExports: Record<string, string> = JSON.parse(
  Deno.readTextFileSync(new URL("deno.json", root)),
).exports;

/**
 * Resolves this package's own name (`@apf/edge`, `@apf/edge/hono`, …) to its
 * sources through deno.json `exports`, as a Worker that installed the
 * package from JSR would get them.
 */
const selfImports: esbuild.Plugin = {
  name: "apf-edge-self",
  setup(build) {
    build.onResolve({ filter: /^@apf\/edge(\/|$)/ }, (args) => {
      const entry = "." + args.path.slice("@apf/edge".length);
      const target = packageExports[entry];
      if (target === undefined) return { errors: [{ text: `@apf/edge has no export ${entry}` }] };
      return { path: fileURLToPath(new URL(target, root)) };
    });
  },
};

/**
 * Bundles `entry` and its imports (relative modules, npm packages of `node_modules` such as
 * `hono` and `zod`) into one ES module, the way wrangler 4 does: target `es2024` unless told
 * otherwise, conditions `workerd`, `worker`, `browser`; `cloudflare:*` and `node:*` stay
 * imports, for workerd to resolve. Runs one build at a time (each stops the esbuild service it
 * started).
 */
export function bundleWorker(entry: URL, target = "es2024"): Promise<string> {
  const build = bundling.then(async () => {
    try {
      const result = await esbuild.build({
        entryPoints: [fileURLToPath(entry)],
        bundle: true,
        write: false,
        format: "esm",
        target,
        conditions: ["workerd", "worker", "browser"],
        external: ["cloudflare:*", "node:*"],
        keepNames: true,
        logLevel: "silent",
        plugins: [selfImports],
      });
      return result.outputFiles[0]!.text;
    } finally {
      await esbuild.stop();
    }
  });
  bundling = build.catch(() => {});
  return build;
}

/** Bundles `options.entry`, starts it in workerd, and waits until it listens. */
export async function startWorker(options: StartWorkerOptions): Promise<StartedWorker> {
  checkTmpWritable();
  const t0 = performance.now();
  const code = await bundleWorker(options.entry, options.target);
  const t1 = performance.now();
  // What the Worker and workerd print is kept for the test to read (`logs()`), not printed:
  // tests that provoke errors would otherwise clutter the output with the expected ones.
  let logs = "";
  const collect = (stream: Readable) => {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => void (logs += chunk));
  };
  const mf = new Miniflare({
    name: "worker",
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      collect(stdout);
      collect(stderr);
    },
    // An explicit module: Miniflare does not parse it (its parser rejects a native `using`).
    modules: [{
      type: "ESModule",
      path: fileURLToPath(options.entry).replace(/\.[cm]?[jt]s$/, ".js"),
      contents: code,
    }],
    compatibilityDate: options.compatibilityDate ?? COMPATIBILITY_DATE,
    compatibilityFlags: options.compatibilityFlags ?? [],
    durableObjects: options.durableObjects ?? {},
    bindings: options.bindings ?? {},
    host: "127.0.0.1",
    port: 0,
    ...options.miniflare,
  });
  let url: URL;
  try {
    url = await mf.ready;
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
  const timings = { bundleMs: t1 - t0, startMs: performance.now() - t1 };
  let disposed: Promise<void> | undefined;
  const dispose = () => disposed ??= mf.dispose();
  return {
    mf,
    url,
    code,
    timings,
    fetch: (path, init) => mf.dispatchFetch(new URL(path, url), init),
    logs: () => logs,
    async durableObject<T>(binding: string, name: string) {
      // Miniflare types its proxies with @cloudflare/workers-types, which Deno cannot load.
      const namespace = await mf.getDurableObjectNamespace(
        binding,
      ) as unknown as DurableObjectNamespace<T>;
      return namespace.getByName(name) as unknown as ProxiedStub<T>;
    },
    dispose,
    [Symbol.asyncDispose]: dispose,
  };
}

/** Fails early, and clearly, when Miniflare could not make its scratch directory. */
function checkTmpWritable(): void {
  const path = tmpdir();
  if (Deno.permissions.querySync({ name: "write", path }).state !== "granted") {
    throw new Error(`Miniflare writes under ${path}: run the test with --allow-write=${path}`);
  }
}
