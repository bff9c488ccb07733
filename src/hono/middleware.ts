/**
 * `apf()`: API Priority and Fairness as Hono middleware (Kubernetes'
 * `WithPriorityAndFairness` filter; `docs/semantics.md` §7 and §11.2). Each
 * request is identified, described, classified and estimated in the
 * isolate, then asks the coordinator for seats; the handler runs holding
 * them, and they go back when it is done, whatever happens.
 *
 * @module
 */

import type { Context, Env, MiddlewareHandler } from "hono";
import { type Classification, Classifier } from "../classify/classifier.ts";
import {
  anonymousUser,
  IdentityError,
  type IdentityInput,
  normalizeUser,
  type UserInfo,
} from "../classify/identity.ts";
import { type RequestInfo, RequestInfoResolver } from "../classify/request_info.ts";
import type { ResolvedWorkEstimate } from "../estimate/types.ts";
import { requestPathProblem } from "../classify/request_path.ts";
import { ListParams } from "../classify/list_options.ts";
import { type EffectiveConfiguration, resolveConfiguration } from "../config/mod.ts";
import { levelsInMatchingOrder } from "../config/effective.ts";
import { EmbeddedCoordinator } from "../coordinator/embedded.ts";
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  queueWaitLimitMs,
  requestDeadlineMs,
  seatRequestFor,
} from "../coordinator/seat_request.ts";
import type { Admission, Coordinator, ReleaseOptions } from "../coordinator/types.ts";
import type { WireConfiguration } from "../protocol/wire.ts";
import { effectiveFromWire } from "../protocol/wire_configuration.ts";
import { kubernetesEstimator } from "../estimate/kubernetes.ts";
import { routeCostEstimator } from "../estimate/routes.ts";
import { estimateInputFor, type WorkEstimator } from "../estimate/types.ts";
import { FlowcontrolMetrics } from "../observe/flowcontrol_metrics.ts";
import type { CoordinatorSnapshot } from "../observe/types.ts";
import type { SnapshotOptions } from "../fairqueuing/types.ts";
import { parseDurationMs } from "../_shared/duration.ts";
import { checkOptionNames } from "../_shared/options.ts";
import { bodyIsComplete } from "./_complete_body.ts";
import { headerValue } from "./_header_list.ts";
import { releaseWhenBodyEnds } from "./_release_stream.ts";
import { releasesItsSeat } from "./seat_body.ts";
import {
  splitUrl,
  TOO_MANY_REQUESTS_BODY,
  tooManyRequests,
  withAdmittedHeaders,
  withApfHeaders,
} from "./_response.ts";
import type { ApfEnv, ApfOptions, ApfState } from "./types.ts";
import {
  ADMISSION,
  type Admission as AdmissionKit,
  type AdmissionResult,
  Refusal,
} from "./admission.ts";
import { checkNumber } from "../_shared/errors.ts";
import {
  AdaptiveLimit,
  adaptiveOptionsOf,
  outcomeOfStatus,
} from "../coordinator/adaptive_limit.ts";
import { RELEASED_AS } from "../coordinator/release_outcome.ts";
import { resolveGradientOptions } from "../adaptive/gradient_options.ts";
import type { GradientSnapshot } from "../adaptive/types.ts";
import { systemClock } from "../fairqueuing/clock.ts";
import { exposeAdaptiveLimit } from "../observe/adaptive_metrics.ts";

/** The middleware, with what the admin routes and the app's shutdown need. */
export interface ApfMiddleware<E extends Env = ApfEnv> extends MiddlewareHandler<E> {
  /**
   * The configuration requests are classified with: the `config` option's
   * (at the ServerCL in force, which a learned limit moves), or, with a
   * remote coordinator, the one it last sent.
   */
  readonly configuration: EffectiveConfiguration;
  /** The coordinator seats come from (the embedded one is created on first use). */
  readonly coordinator: Coordinator;
  /**
   * The metrics of the embedded coordinator, or of a coordinator of your own
   * that has flow-control metrics (a budget holder), else `null`.
   */
  readonly metrics: FlowcontrolMetrics | null;
  /** The coordinator's state, for the admin routes (`null` when it cannot tell). */
  snapshot(options?: SnapshotOptions): CoordinatorSnapshot | null;
  /** The priority levels in the order requests are matched to them, for the dashboard. */
  levelOrder(): readonly string[];
  /**
   * The learned server concurrency limit's state (`serverConcurrencyLimit:
   * "auto"`), `null` with a static limit or before the first request.
   */
  adaptiveSnapshot(): GradientSnapshot | null;
  /** Closes the embedded coordinator (waiters get `unavailable`, its timer stops). */
  close(): void;
}

/**
 * Creates the middleware. Options and configuration are checked here, so a
 * mistake throws at startup, never per request.
 *
 * @throws {ConfigurationError} listing every problem of an invalid configuration.
 * @throws {TypeError} or {RangeError} for an invalid option, naming it and the value received.
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { apf, type ApfEnv } from "@apf/edge/hono";
 *
 * const app = new Hono<ApfEnv>();
 * app.use(apf());
 * app.get("/hello", (c) => c.text(`hello from ${c.get("apf").classification.priorityLevel.name}`));
 * ```
 */
export function apf<E extends ApfEnv = ApfEnv>(options: ApfOptions<E> = {}): ApfMiddleware<E> {
  checkOptions(options);
  const adaptiveOptions = adaptiveOptionsOf(options.serverConcurrencyLimit);
  if (adaptiveOptions !== null) {
    if (options.coordinator !== undefined) {
      throw new TypeError(
        'Cannot create apf(): serverConcurrencyLimit "auto" learns the limit of the embedded coordinator; a coordinator of your own sets its own (apf coordinator --server-concurrency auto)',
      );
    }
    // Checked now, not when the first request creates the coordinator.
    resolveGradientOptions(adaptiveOptions);
  }
  const configuration = resolveConfiguration(options.config, {
    serverConcurrencyLimit: typeof options.serverConcurrencyLimit === "number"
      ? options.serverConcurrencyLimit
      : undefined,
    mandatoryOnly: options.mandatoryOnly,
  });
  let current = configuration;
  let classifier = new Classifier(configuration);
  // A remote coordinator is the one source of truth: classify with what it sends.
  const source = options.coordinator;
  // A source that can say when its first configuration is in: requests wait for it, bounded.
  let first: (() => Promise<void>) | null = isConfigurationPublisher(source) &&
      typeof source.ready === "function"
    ? source.ready.bind(source)
    : null;
  const unsubscribe = isConfigurationPublisher(source)
    ? subscribe(source, (effective) => {
      current = effective;
      classifier = new Classifier(effective);
      first = null;
    })
    : () => {};
  const describer = new RequestInfoResolver(
    options.routes === undefined ? {} : { routes: options.routes },
  );
  const estimator = estimatorOf(options.estimate);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const defaultWaitMs = queueWaitLimitMs(requestTimeoutMs);
  const { identify, longRunning, onRejected } = options;
  const hold = options.holdLongRunningSeats === true;
  // A coordinator of your own may bring its metrics (a budget holder does).
  const metrics = options.coordinator === undefined
    ? new FlowcontrolMetrics({ snapshot: () => embeddedCoordinator().snapshot() })
    : metricsOf(options.coordinator);
  let embedded: EmbeddedCoordinator | null = null;
  let adaptive: AdaptiveLimit | null = null;
  // Created on first use: a timer set at module scope is refused on some platforms.
  const coordinator: Coordinator = options.coordinator ?? {
    acquire: (request, acquireOptions) => embeddedCoordinator().acquire(request, acquireOptions),
  };
  function embeddedCoordinator(): EmbeddedCoordinator {
    if (embedded === null) {
      embedded = new EmbeddedCoordinator(configuration, {
        ...(options.clock !== undefined && { clock: options.clock }),
        ...(metrics !== null && { metrics }),
      });
      if (adaptiveOptions !== null) {
        adaptive = new AdaptiveLimit(embedded, adaptiveOptions, {
          clock: options.clock ?? systemClock,
        });
        if (metrics !== null) {
          exposeAdaptiveLimit(metrics.registry, () => adaptive!.snapshot());
        }
      }
    }
    return embedded;
  }
  const anonymous = anonymousUser();

  /** Identifies the request, then {@linkcode admitAs}; a promise only when something waits. */
  function admit(
    raw: Request,
    context: unknown,
    method: string,
    path: string,
    query: string,
  ): AdmissionResult | Promise<AdmissionResult> {
    // The closures of what waits are made in functions of their own (here and in admitAs), so
    // that the common case allocates no context for the variables they would capture.
    if (first !== null) return afterFirst(first(), raw, context, method, path, query);
    if (identify === undefined) return admitAs(anonymous, raw, method, path, query);
    let found;
    try {
      found = identify(raw, context as Context<E>);
    } catch (e) {
      return unauthorized(e);
    }
    if (found instanceof Promise) return afterIdentify(found, raw, method, path, query);
    let user: UserInfo;
    try {
      user = normalizeUser(found);
    } catch (e) {
      return unauthorized(e);
    }
    return admitAs(user, raw, method, path, query);
  }

  function afterFirst(
    ready: Promise<void>,
    raw: Request,
    context: unknown,
    method: string,
    path: string,
    query: string,
  ): Promise<AdmissionResult> {
    // Only the first attempt is waited for: a source that is down answers by its policy.
    return ready.then(() => {
      first = null;
      return admit(raw, context, method, path, query);
    });
  }

  function afterIdentify(
    found: Promise<IdentityInput | undefined | null>,
    raw: Request,
    method: string,
    path: string,
    query: string,
  ): Promise<AdmissionResult> {
    return found.then(normalizeUser).then(
      (user) => admitAs(user, raw, method, path, query),
      unauthorized,
    );
  }

  /** Describes, classifies and estimates the request, then asks for its seats. */
  function admitAs(
    user: UserInfo,
    raw: Request,
    method: string,
    path: string,
    query: string,
  ): AdmissionResult | Promise<AdmissionResult> {
    // Classify exactly what is served: a path that a router or fetch() reads differently is
    // refused before it can borrow another FlowSchema's limits.
    const pathProblem = requestPathProblem(path);
    if (pathProblem !== null) return new Refusal(400, `Bad Request: ${pathProblem}\n`);
    const requestInfo = describer.describe(method, path, query);
    const classification = classifier.classify(user, requestInfo);
    const work = estimator(estimateInputFor(classification, requestInfo, method, query));
    const seatRequest = seatRequestFor(classification, {
      work,
      waitLimitMs: waitLimitOf(query, requestInfo.verb, requestTimeoutMs, defaultWaitMs),
      user,
      requestInfo,
    });
    const acquireOptions = lazySignal(raw);
    // The embedded coordinator answers a request decided at once as a value: no promise to
    // settle and await for the common case.
    const answer = options.coordinator === undefined
      ? embeddedCoordinator().begin(seatRequest, acquireOptions)
      : coordinator.acquire(seatRequest, acquireOptions);
    // A request decided at once makes no closure (the common case, per request): the one for
    // a request that waits is made in a function of its own, so that this one keeps its
    // variables without allocating a context for them.
    return answer instanceof Promise
      ? afterWaiting(answer, user, requestInfo, classification, work)
      : decided(answer, user, requestInfo, classification, work);
  }

  function afterWaiting(
    answer: Promise<Admission>,
    user: UserInfo,
    requestInfo: RequestInfo,
    classification: Classification,
    work: ResolvedWorkEstimate,
  ): Promise<AdmissionResult> {
    return answer.then((a) => decided(a, user, requestInfo, classification, work));
  }

  /** The state of an admitted request, or the refusal of a rejected one. */
  function decided(
    admission: Admission,
    user: UserInfo,
    requestInfo: RequestInfo,
    classification: Classification,
    work: ResolvedWorkEstimate,
  ): AdmissionResult {
    if (!admission.admitted) {
      return new Refusal(429, TOO_MANY_REQUESTS_BODY, {
        reason: admission.reason,
        retryAfterSeconds: admission.retryAfterSeconds,
        classification,
        user,
        requestInfo,
      });
    }
    return {
      user,
      requestInfo,
      classification,
      work,
      waitedMs: admission.waitedMs,
      // With a learned limit, the seat's time from now to its release is a sample.
      seat: adaptive === null ? admission.seat : adaptive.track(admission.seat),
    };
  }

  /** Whether a response of `contentType` gives its seats back once its head is out. */
  function initializesEarly(state: ApfState, contentType: string | null, c?: Context<E>): boolean {
    const streaming = state.requestInfo.verb === "watch" ||
      // The "e" of "event" first: most types are told apart without a call.
      (contentType?.charCodeAt(5) === 0x65 &&
        contentType.startsWith("text/event-stream")) ||
      (longRunning !== undefined && c !== undefined && longRunning(c));
    return streaming && !hold;
  }

  const middleware = async function apf(c: Context<E>, next: () => Promise<void>) {
    const raw = c.req.raw;
    const { path, query } = splitUrl(raw.url);
    const decided = admit(raw, c, raw.method, path, query);
    const result = decided instanceof Promise ? await decided : decided;
    if (result instanceof Refusal) {
      const rejection = result.rejection;
      if (rejection === null) return c.text(result.message, result.status);
      const custom = onRejected === undefined ? undefined : await onRejected(c, rejection);
      return custom instanceof Response
        ? withApfHeaders(custom, rejection.classification)
        : tooManyRequests(rejection.classification, rejection.retryAfterSeconds);
    }
    const state = result;
    const { seat, classification } = state;
    c.set("apf", state);
    let released = false;
    // How the work ended, stated with the release for a learned limit wherever it runs (a
    // coordinator server's too): one options object per outcome, made once.
    let ended: ReleaseOptions | undefined;
    try {
      try {
        await next();
      } catch (e) {
        ended = RELEASED_AS.error;
        throw e;
      }
      ended = RELEASED_AS[outcomeOfStatus(c.res.status)];
      // Added to the response the handler made, not prepared with c.header() before next():
      // prepared headers send Hono's c.text() and c.json() down their slow path (a copy of the
      // headers per response), about 1.3 µs more per request on Deno.
      const handled = c.res;
      const headers = handled.headers;
      // Read before the three are added (fewer to look through); a copy keeps it.
      const contentType = headerValue(headers, "content-type");
      let res = withAdmittedHeaders(handled, headers, classification, state.waitedMs);
      if (initializesEarly(state, contentType, c)) {
        // Kubernetes gives a watch's seats back once it is initialized (KEP-1040, "Watch
        // initialization").
        seat.initialized();
      } else if (!bodyIsComplete(res)) {
        // The body is still being made: the seat follows it, not the handler's return (a body
        // that releases the seat itself, the gateway's, is left as it is).
        if (!releasesItsSeat(res.body)) res = releaseWhenBodyEnds(res, seat, ended);
        released = true;
      }
      if (res !== c.res) c.res = res;
    } finally {
      if (!released) seat.release(ended);
    }
  } as ApfMiddleware<E>;

  const admission: AdmissionKit = {
    admit,
    initializesEarly: (state, contentType) => initializesEarly(state, contentType),
  };
  return Object.defineProperties(middleware, {
    [ADMISSION]: { value: admission },
    // The embedded coordinator's, whose ServerCL a learned limit moves.
    configuration: { get: () => embedded?.configuration ?? current, enumerable: true },
    coordinator: { value: coordinator, enumerable: true },
    metrics: { value: metrics, enumerable: true },
    snapshot: {
      value: (snapshotOptions?: SnapshotOptions): CoordinatorSnapshot | null => {
        if (options.coordinator === undefined) {
          return embeddedCoordinator().snapshot(snapshotOptions);
        }
        const own = options.coordinator as Coordinator & {
          snapshot?: (o?: SnapshotOptions) => CoordinatorSnapshot;
        };
        return typeof own.snapshot === "function" ? own.snapshot(snapshotOptions) : null;
      },
    },
    levelOrder: { value: (): readonly string[] => levelsInMatchingOrder(current) },
    adaptiveSnapshot: {
      // A coordinator of your own that learns its limit (a budget holder) tells its own.
      value: (): GradientSnapshot | null =>
        adaptive?.snapshot() ??
          (options.coordinator as { adaptiveSnapshot?: () => GradientSnapshot | null } | undefined)
            ?.adaptiveSnapshot?.() ??
          null,
    },
    close: {
      value: (): void => {
        unsubscribe();
        adaptive?.close();
        embedded?.close();
      },
    },
  });
}

/**
 * The acquire options of `raw`: its signal, read only if the request has to wait (on Deno,
 * reading it costs about 6 µs per request, as the server starts tracking it, and prints a
 * warning).
 */
function lazySignal(raw: Request): { signal: () => AbortSignal } {
  return { signal: () => raw.signal };
}

/** The 401 of a request whose identity was refused (any other failure is thrown on). */
function unauthorized(e: unknown): Refusal {
  if (!(e instanceof IdentityError)) throw e;
  return new Refusal(401, `Unauthorized: ${e.message}\n`);
}

/** The coordinator's own `metrics`, when it has flow-control metrics. */
function metricsOf(coordinator: Coordinator): FlowcontrolMetrics | null {
  const own = (coordinator as { metrics?: unknown }).metrics;
  return own instanceof FlowcontrolMetrics ? own : null;
}

/** A coordinator that hands out its configuration (a remote one). */
interface ConfigurationPublisher {
  readonly configuration: WireConfiguration | null;
  onConfiguration(listener: (configuration: WireConfiguration) => void): () => void;
  /** Resolves once the first configuration arrived, or the source gave up waiting for it. */
  ready?(): Promise<void>;
}

function isConfigurationPublisher(
  c: Coordinator | undefined,
): c is Coordinator & ConfigurationPublisher {
  return c !== undefined &&
    typeof (c as Partial<ConfigurationPublisher>).onConfiguration === "function";
}

/** Adopts the source's configuration now (if any) and on every update; returns the unsubscribe. */
function subscribe(
  source: ConfigurationPublisher,
  adopt: (effective: EffectiveConfiguration) => void,
): () => void {
  const take = (wire: WireConfiguration) => {
    const effective = effectiveFromWire(wire);
    if (effective !== null) adopt(effective);
  };
  if (source.configuration !== null) take(source.configuration);
  return source.onConfiguration(take);
}

/**
 * The queue wait limit of a request: a quarter of its deadline, honouring
 * `?timeout=` (Kubernetes: `getRequestWaitContext`).
 */
/** The `timeout` parameter, read as Go's `url.Query().Get` does (first value, pairs it drops). */
const TIMEOUT_PARAM = new ListParams(["timeout"]);

/**
 * How long the request may wait in a queue. A watch is long-running: Kubernetes gives it no
 * deadline (`WithRequestDeadline` skips long-running requests), so it waits the default limit
 * whatever its `?timeout=` says. A `timeout` that is no Go duration is ignored (Kubernetes
 * answers 400 before APF; here the application decides about its own query).
 */
function waitLimitOf(
  query: string,
  verb: string,
  requestTimeoutMs: number,
  defaultMs: number,
): number {
  // An escaped key ("time%6Fut") has a "%".
  if (verb === "watch" || !(query.includes("timeout") || query.includes("%"))) return defaultMs;
  TIMEOUT_PARAM.load(query);
  const raw = TIMEOUT_PARAM.value(0);
  const user = raw === undefined ? undefined : parseDurationMs(raw);
  return user === undefined
    ? defaultMs
    : queueWaitLimitMs(requestDeadlineMs(requestTimeoutMs, user));
}

function estimatorOf(estimate: ApfOptions["estimate"]): WorkEstimator {
  if (estimate === undefined) return kubernetesEstimator();
  if (typeof estimate === "function") return estimate;
  if (Array.isArray(estimate)) return routeCostEstimator(estimate);
  throw new TypeError(
    `Cannot create apf(): estimate must be route costs or an estimator function, got ${typeof estimate}`,
  );
}

/** Every option of `apf()`, for {@linkcode checkOptionNames}. */
const APF_OPTION_NAMES: readonly (keyof ApfOptions)[] = [
  "config",
  "mandatoryOnly",
  "serverConcurrencyLimit",
  "coordinator",
  "identify",
  "routes",
  "estimate",
  "requestTimeoutMs",
  "longRunning",
  "holdLongRunningSeats",
  "onRejected",
  "clock",
];

// deno-lint-ignore no-explicit-any
function checkOptions(options: ApfOptions<any>): void {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`Cannot create apf(): options must be an object, got ${String(options)}`);
  }
  checkOptionNames("create apf()", options, APF_OPTION_NAMES);
  const fns = ["identify", "longRunning", "onRejected"] as const;
  for (const name of fns) {
    const f = options[name];
    if (f !== undefined && typeof f !== "function") {
      throw new TypeError(`Cannot create apf(): ${name} must be a function, got ${typeof f}`);
    }
  }
  const t = options.requestTimeoutMs;
  if (t !== undefined) {
    checkNumber(
      t,
      (ms) => ms > 0 && ms < Infinity,
      () => `Cannot create apf(): requestTimeoutMs must be a finite number > 0, got ${String(t)}`,
    );
  }
  const co = options.coordinator;
  if (
    co !== undefined && (typeof co !== "object" || co === null || typeof co.acquire !== "function")
  ) {
    throw new TypeError(
      "Cannot create apf(): coordinator must have an acquire(request, options) method",
    );
  }
}
