/**
 * RequestInfo: what an HTTP request asks for, in Kubernetes terms. Ports
 * `NewRequestInfo` (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`;
 * `docs/semantics.md` §2.2) and adds declared resource routes, so that an ordinary REST API
 * gets the same resource semantics (verbs, namespaces, names).
 *
 * Classification must see what the Kubernetes API server would see, so three
 * Go behaviours are reproduced:
 *
 * - The path is percent-decoded once, before it is split, as Go's `net/http`
 *   does when it fills `req.URL.Path`: `%2D` becomes `-`, `%2F` becomes a
 *   separator, and `path` in the result is the decoded path. Go's server
 *   answers a malformed escape with 400 before any filter runs; here such a
 *   path yields a non-resource description with `error` set.
 * - The query is parsed like Go's `url.ParseQuery`: a pair containing `;` or
 *   a malformed escape is dropped, `+` is a space, the first value counts.
 * - When the list options do not decode (a bad `labelSelector`,
 *   `fieldSelector`, `limit` or `timeoutSeconds`), Kubernetes logs, keeps
 *   `watch` from the raw parameter and ignores the field selector's
 *   `metadata.name`; so does this port.
 *
 * The hot path walks the path with `indexOf` and slices only the segments it
 * keeps (about 0.1 µs per request); the query is read only for collection
 * GETs and DELETEs.
 *
 * @module
 */

import {
  badEscape,
  findSegment,
  isSegment,
  segmentEnd,
  SLASH,
  splitSegments,
  urlUnescape,
} from "./_path_segments.ts";
import { show } from "../_shared/show.ts";
import {
  exactMetadataName,
  hasLongS,
  isPathSegmentName,
  ListParams,
  queryBool,
} from "./list_options.ts";
import {
  type CompiledRoute,
  compileRoute,
  matchRoute,
  type ResourceRoute,
  spanValue,
} from "./_resource_routes.ts";

export type { ResourceRoute };

/** What a request asks for (Kubernetes `RequestInfo`). */
export interface RequestInfo {
  /** True for API resources and subresources, false for everything else. */
  isResourceRequest: boolean;
  /** The URL path, percent-decoded once (Go's `req.URL.Path`). */
  path: string;
  /**
   * The Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`,
   * `delete`, `deletecollection`, `proxy`, or `""` for other methods) for
   * resource requests; the lower-cased HTTP method for the others.
   */
  verb: string;
  /** `api` or `apis` (one of the configured prefixes); `""` if none applied. */
  apiPrefix: string;
  /** The API group; `""` for the core group. */
  apiGroup: string;
  /** The API version, e.g. `v1`. */
  apiVersion: string;
  /** The namespace; `""` for cluster-scoped and non-resource requests. */
  namespace: string;
  /** The resource, e.g. `pods`. */
  resource: string;
  /** The subresource, e.g. `status`; never set for the `proxy` verb. */
  subresource: string;
  /**
   * The object name from the path or from an exact `metadata.name` field
   * selector (when the list options decode and the value is a valid path
   * segment name).
   */
  name: string;
  /** Path segments from the resource on: `[resource, name, subresource, ...]`. */
  parts: string[];
  /** The raw `fieldSelector` of a list, watch or deletecollection, when not empty. */
  fieldSelector?: string;
  /** The raw `labelSelector` of a list, watch or deletecollection, when not empty. */
  labelSelector?: string;
  /**
   * Set when Kubernetes would fail the request before classifying it: a
   * malformed percent escape in the path (Go answers 400; the rest of the
   * info describes a non-resource request for the raw path), or a deprecated
   * `/watch/` or `/proxy/` prefix with nothing after it (Go's RequestInfo
   * filter answers 500; the rest is the info built so far: a resource request
   * with prefix, group and version, and the lower-cased method as verb).
   */
  error?: string;
}

/** How paths are read. */
export interface RequestInfoOptions {
  /** First path segments of API requests; default `["api", "apis"]`. */
  apiPrefixes?: readonly string[];
  /** Prefixes whose requests have no group segment; default `["api"]`. */
  grouplessApiPrefixes?: readonly string[];
  /** Resource routes, tried in order before the Kubernetes rules. */
  routes?: readonly ResourceRoute[];
}

/**
 * Describes requests; reuse one instance (routes are compiled once).
 *
 * @example
 * ```ts
 * import { RequestInfoResolver } from "@apf/edge";
 *
 * const resolver = new RequestInfoResolver();
 * const info = resolver.describe("GET", "/api/v1/namespaces/default/pods", "watch=true");
 * console.assert(info.verb === "watch" && info.namespace === "default");
 * ```
 */
export class RequestInfoResolver {
  readonly #apiPrefixes: readonly string[];
  readonly #grouplessApiPrefixes: readonly string[];
  readonly #routes: readonly CompiledRoute[];
  // describe() is synchronous, so one scratch record per resolver suffices.
  readonly #params = new ListParams();
  readonly #spans = new Int32Array(6);

  /** Validates the options; throws a TypeError naming a bad prefix or route. */
  constructor(options: RequestInfoOptions = {}) {
    this.#apiPrefixes = checkPrefixes("apiPrefixes", options.apiPrefixes ?? ["api", "apis"]);
    this.#grouplessApiPrefixes = checkPrefixes(
      "grouplessApiPrefixes",
      options.grouplessApiPrefixes ?? ["api"],
    );
    const routes = options.routes ?? [];
    if (!Array.isArray(routes)) {
      throw new TypeError(
        `Cannot create RequestInfoResolver: routes must be an array, received ${show(routes)}`,
      );
    }
    this.#routes = routes.map(compileRoute);
  }

  /**
   * Describes a request. `path` is the raw, still percent-encoded URL path
   * (`new URL(request.url).pathname`); `query` is the raw search string, with
   * or without its leading `?`, or already parsed. Never throws.
   */
  describe(method: string, path: string, query?: string | URLSearchParams): RequestInfo {
    const methodVerb = lowerMethod(method);
    const decoded = urlUnescape(path, false);
    if (decoded === undefined) {
      const info = nonResource(path, methodVerb, "");
      info.error = `Cannot decode path: invalid URL escape "${badEscape(path)}" in ${show(path)}`;
      return info;
    }
    for (const route of this.#routes) {
      if (matchRoute(route, path, this.#spans)) {
        return this.#routeInfo(route, method, decoded, path, query);
      }
    }
    return this.#kubernetesInfo(method, methodVerb, decoded, query);
  }

  #kubernetesInfo(
    method: string,
    methodVerb: string,
    path: string,
    query: string | URLSearchParams | undefined,
  ): RequestInfo {
    let start = 0;
    let end = path.length;
    while (start < end && path.charCodeAt(start) === SLASH) start++;
    while (end > start && path.charCodeAt(end - 1) === SLASH) end--;
    // Segments are walked with indexOf and sliced only when kept: split() and re-slicing the
    // array cost more than the rest of describe() together. Fewer than three segments make a
    // non-resource request, before the prefix is looked at.
    const prefixEnd = segmentEnd(path, start, end);
    if (prefixEnd === end) return nonResource(path, methodVerb, "");
    const secondEnd = segmentEnd(path, prefixEnd + 1, end);
    if (secondEnd === end) return nonResource(path, methodVerb, "");
    const apiPrefix = findSegment(this.#apiPrefixes, path, start, prefixEnd);
    if (apiPrefix === undefined) return nonResource(path, methodVerb, "");
    let from = prefixEnd + 1;
    let to = secondEnd;
    let apiGroup = "";
    if (!this.#grouplessApiPrefixes.includes(apiPrefix)) {
      const thirdEnd = segmentEnd(path, secondEnd + 1, end);
      // Go sets APIPrefix before this check, so /apis/apps/v1 keeps it.
      if (thirdEnd === end) return nonResource(path, methodVerb, apiPrefix);
      apiGroup = path.slice(from, to);
      from = to + 1;
      to = thirdEnd;
    }
    const apiVersion = path.slice(from, to);
    from = to + 1;
    to = segmentEnd(path, from, end);
    let verb: string;
    const special = isSegment(path, from, to, "watch")
      ? "watch"
      : isSegment(path, from, to, "proxy")
      ? "proxy"
      : "";
    if (special !== "") {
      if (to === end) {
        const info = buildInfo(path, methodVerb, apiPrefix, apiGroup, apiVersion, "", []);
        info.error = `Cannot determine kind and namespace from URL: nothing follows the ` +
          `deprecated "${special}" verb in ${show(path)}`;
        return info;
      }
      verb = special;
      from = to + 1;
      to = segmentEnd(path, from, end);
    } else {
      verb = kubernetesVerb(method);
    }
    // namespaces/<ns>/<resource>/... drops the first two segments; namespaces/<ns>,
    // namespaces/<ns>/status and namespaces/<ns>/finalize address the namespace itself.
    let namespaceFrom = -1;
    let namespaceTo = -1;
    if (to < end && isSegment(path, from, to, "namespaces")) {
      namespaceFrom = to + 1;
      namespaceTo = segmentEnd(path, namespaceFrom, end);
      if (namespaceTo < end) {
        const next = namespaceTo + 1;
        const nextEnd = segmentEnd(path, next, end);
        if (
          !isSegment(path, next, nextEnd, "status") && !isSegment(path, next, nextEnd, "finalize")
        ) {
          from = next;
        }
      }
    }
    const parts = splitSegments(path, from, end);
    const namespace = namespaceFrom < 0
      ? ""
      : from === namespaceTo + 1
      ? path.slice(namespaceFrom, namespaceTo)
      : parts[1]!;
    const info = buildInfo(path, verb, apiPrefix, apiGroup, apiVersion, namespace, parts);
    // A verb taken from the path is watch or proxy, which the list rules leave alone: that is
    // also Kubernetes' !verbViaPathPrefix guard on recording selectors.
    return this.#applyListRules(info, query);
  }

  #routeInfo(
    route: CompiledRoute,
    method: string,
    decodedPath: string,
    rawPath: string,
    query: string | URLSearchParams | undefined,
  ): RequestInfo {
    const spans = this.#spans;
    const namespace = spanValue(rawPath, spans, 0);
    const name = spanValue(rawPath, spans, 2);
    const subresource = spanValue(rawPath, spans, 4);
    const parts = [route.resource];
    if (name !== "" || subresource !== "") parts.push(name);
    if (subresource !== "") parts.push(subresource);
    const info = buildInfo(
      decodedPath,
      kubernetesVerb(method),
      "",
      route.apiGroup,
      route.apiVersion,
      namespace,
      parts,
    );
    return this.#applyListRules(info, query);
  }

  /**
   * The end of Kubernetes' `NewRequestInfo`: list vs watch, the metadata.name
   * selector, deletecollection, selectors.
   */
  #applyListRules(info: RequestInfo, query: string | URLSearchParams | undefined): RequestInfo {
    const verb = info.verb;
    if (info.name !== "" || (verb !== "get" && verb !== "delete")) return info;
    const params = this.#params;
    params.load(query);
    if (verb === "get") {
      // Whether the list options decode matters only when a metadata.name term could name the
      // request, or for the rare watch value that the two bool rules read differently.
      const fieldSelector = params.fieldSelector;
      const longS = hasLongS(params.watch);
      const selected = fieldSelector === undefined ||
          (!longS && !fieldSelector.includes("metadata.name"))
        ? null
        : exactMetadataName(fieldSelector);
      let failed = selected === false;
      if (!failed && (typeof selected === "string" || longS)) {
        failed = !params.otherOptionsDecode();
      }
      info.verb = queryBool(params.watch, failed) ? "watch" : "list";
      if (!failed && typeof selected === "string" && isPathSegmentName(selected)) {
        info.name = selected;
      }
    } else {
      info.verb = "deletecollection";
    }
    if (params.fieldSelector) info.fieldSelector = params.fieldSelector;
    if (params.labelSelector) info.labelSelector = params.labelSelector;
    return info;
  }
}

let defaultResolver: RequestInfoResolver | undefined;

/**
 * Describes a request given as an absolute URL, a `URL`, or a path with an
 * optional query (`/api/v1/pods?watch=1`). Without options it reuses one
 * default resolver; with options it compiles them on every call, so hold a
 * {@linkcode RequestInfoResolver} on hot paths. Absolute URLs go through
 * WHATWG URL parsing, which also resolves `.` and `..` segments (Go does not);
 * paths are taken as they are.
 *
 * @example
 * ```ts
 * import { describeRequest } from "@apf/edge";
 *
 * const info = describeRequest("DELETE", "https://k8s.example/api/v1/namespaces/ns/pods");
 * console.assert(info.verb === "deletecollection" && info.resource === "pods");
 * ```
 */
export function describeRequest(
  method: string,
  url: string | URL,
  options?: RequestInfoOptions,
): RequestInfo {
  const resolver = options === undefined
    ? (defaultResolver ??= new RequestInfoResolver())
    : new RequestInfoResolver(options);
  if (url instanceof URL) return resolver.describe(method, url.pathname, url.search);
  if (typeof url !== "string") {
    throw new TypeError(
      `Cannot describe request: url must be a string or URL, received ${show(url)}`,
    );
  }
  if (url === "" || url.charCodeAt(0) === SLASH) {
    const hash = url.indexOf("#");
    const end = hash < 0 ? url.length : hash;
    const mark = url.indexOf("?");
    return mark < 0 || mark > end
      ? resolver.describe(method, url.slice(0, end))
      : resolver.describe(method, url.slice(0, mark), url.slice(mark + 1, end));
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(
      `Cannot describe request: url must be a path starting with "/" or an absolute URL, received ${
        show(url)
      }`,
    );
  }
  return resolver.describe(method, parsed.pathname, parsed.search);
}

function nonResource(path: string, verb: string, apiPrefix: string): RequestInfo {
  return buildInfo(path, verb, apiPrefix, "", "", "", [], false);
}

/** Builds every info with one object shape, which keeps property access monomorphic. */
function buildInfo(
  path: string,
  verb: string,
  apiPrefix: string,
  apiGroup: string,
  apiVersion: string,
  namespace: string,
  parts: string[],
  isResourceRequest = true,
): RequestInfo {
  const n = parts.length;
  return {
    isResourceRequest,
    path,
    verb,
    apiPrefix,
    apiGroup,
    apiVersion,
    namespace,
    resource: n >= 1 ? parts[0]! : "",
    // The proxy verb forwards parts[2..] to the target: they are never a subresource.
    subresource: n >= 3 && verb !== "proxy" ? parts[2]! : "",
    name: n >= 2 ? parts[1]! : "",
    parts,
  };
}

// The common methods by a switch: a server's method string is often a new one per request,
// which a Map would hash before finding it.
function lowerMethod(method: string): string {
  switch (method) {
    case "GET":
      return "get";
    case "POST":
      return "post";
    case "PUT":
      return "put";
    case "PATCH":
      return "patch";
    case "DELETE":
      return "delete";
    case "HEAD":
      return "head";
    case "OPTIONS":
      return "options";
    default:
      return method.toLowerCase();
  }
}

// Go compares the method case-sensitively: "get" is not GET and maps to "".
function kubernetesVerb(method: string): string {
  switch (method) {
    case "GET":
    case "HEAD":
      return "get";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return "delete";
    default:
      return "";
  }
}

function checkPrefixes(option: string, prefixes: readonly string[]): readonly string[] {
  if (!Array.isArray(prefixes)) {
    throw new TypeError(
      `Cannot create RequestInfoResolver: ${option} must be an array, received ${show(prefixes)}`,
    );
  }
  prefixes.forEach((p: unknown, i) => {
    if (typeof p !== "string" || p === "" || p.includes("/")) {
      throw new TypeError(
        `Cannot create RequestInfoResolver: ${option}[${i}] must be one path segment without "/", received ${
          show(p)
        }`,
      );
    }
  });
  return [...prefixes];
}
