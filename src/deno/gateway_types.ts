/**
 * The public shapes of the gateway: its options and what `serveGateway()`
 * returns.
 *
 * @module
 */

import type { GradientSnapshot } from "../adaptive/types.ts";
import type { GradientControllerOptions } from "../adaptive/gradient_options.ts";
import type { Coordinator } from "../coordinator/types.ts";
import type { EffectiveConfiguration, FlowControlConfiguration } from "../config/mod.ts";
import type { Clock } from "../fairqueuing/clock.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import type { ApfVariables } from "../hono/types.ts";
import type { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { ConnectionLimits } from "./_limits.ts";

/** Where a listener binds. */
export interface ListenAddress {
  /** Host name or IP address (`0.0.0.0` or `::` for every interface). */
  hostname: string;
  /** TCP port; 0 lets the system choose one (read it from `Gateway.addr`). */
  port: number;
}

/**
 * The Hono environment of the gateway's app: the server's info, and
 * `apf()`'s variables. Internal: not exported from `@apf/edge/deno`.
 */
export interface GatewayEnv {
  /** What the server tells of the connection: the client's address. */
  Bindings: { remoteAddr: Deno.Addr };
  /** What `apf()` sets. */
  Variables: ApfVariables;
}

/**
 * Options of {@linkcode serveGateway}. The connection limits
 * (`headerTimeoutMs`, `idleTimeoutMs`, `maxConnections`) apply to each
 * listener.
 */
export interface GatewayOptions extends ConnectionLimits {
  /** Where requests go: an `http:` or `https:` URL; its path, if any, prefixes every request's. */
  upstream: string | URL;
  /**
   * The APF configuration, as `apf()` takes it (manifest text, objects, or
   * an effective configuration such as the CLI loads from files). Default:
   * the built-in configuration.
   */
  config?: string | FlowControlConfiguration | EffectiveConfiguration | readonly unknown[];
  /**
   * Seats of the whole gateway (default 600; must match an effective
   * `config`'s), or `"auto"` (or the adaptive controller's options): learned
   * from the upstream's latency, from each request's dispatch to the end of
   * its response body, its 503s and 429s counting as refusals, its 504s as
   * time-outs (`docs/adaptive.md`). Not with a `coordinator` of your own.
   */
  serverConcurrencyLimit?: number | "auto" | GradientControllerOptions;
  /** Where clients connect (default `127.0.0.1:8080`). */
  listen?: ListenAddress;
  /** Where the metrics and debug routes are served (default: nowhere). */
  adminListen?: ListenAddress | null;
  /**
   * Take the user from `X-Remote-User`, `X-Remote-Group` and
   * `X-Remote-Extra-*` (Kubernetes' front-proxy convention). Only behind a
   * proxy that authenticates clients and sets these headers itself. Default
   * false: every request is anonymous.
   */
  trustIdentityHeaders?: boolean;
  /**
   * The request timeout in ms (default 60,000): a request waits in a queue
   * a quarter of it at most, and the upstream has what is left of it to
   * send its response headers (else 504).
   */
  requestTimeoutMs?: number;
  /** Called once per listener when it listens. */
  onListen?: (addr: Deno.NetAddr, listener: "main" | "admin") => void;
  /**
   * How requests reach the upstream: `"http1"` (the default), a pooled
   * HTTP/1.1 client with strict framing (RFC 9112), or `"fetch"`, Deno's
   * own, for an upstream that speaks only HTTP/2 or that the HTTP/1.1
   * client refuses. See `upstream_client.ts` for what each supports.
   */
  upstreamClient?: "http1" | "fetch";
  /**
   * Told why the upstream could not be reached (each 502 or 504), or why a
   * response body it had begun failed before its end (an
   * error named `UpstreamBodyFailed`, its `cause` the reason).
   */
  onUpstreamError?: (error: unknown, request: Request) => void;
  /**
   * Seats come from this coordinator (for example `connectCoordinator(…)`,
   * shared with other gateways) instead of an embedded one; with a remote
   * one, requests are classified with the configuration it sends.
   */
  coordinator?: Coordinator;
  /** The clock of the coordinator and of the upstream deadline (default: the system clock). */
  clock?: Clock;
}

/** What a gateway's APF middleware tells: its configuration, state and metrics. */
export interface GatewayMiddleware {
  /** The configuration requests are classified with. */
  readonly configuration: EffectiveConfiguration;
  /** The metrics of the embedded coordinator (what the admin listener's `/metrics` shows). */
  readonly metrics: FlowcontrolMetrics | null;
  /** The coordinator's state: every level's seats in use, queued requests and current limit. */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null;
  /** The learned limit's state (`serverConcurrencyLimit: "auto"`), else `null`. */
  adaptiveSnapshot(): GradientSnapshot | null;
}

/** A running gateway. */
export interface Gateway {
  /** Where it listens. */
  readonly addr: Deno.NetAddr;
  /** Where the admin routes listen, or `null`. */
  readonly adminAddr: Deno.NetAddr | null;
  /** The APF middleware: its `snapshot()`, `metrics` and `configuration`. */
  readonly middleware: GatewayMiddleware;
  /** Settles once both listeners stopped and the middleware is closed. */
  readonly finished: Promise<void>;
  /**
   * Stops accepting connections, lets in-flight requests finish (queued
   * ones included), then closes the middleware. What SIGINT and SIGTERM do
   * in `apf serve`. Idempotent.
   */
  shutdown(): Promise<void>;
  /** Same as {@linkcode Gateway.shutdown}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}
