/**
 * Resource routes: declared REST paths that get Kubernetes resource semantics.
 *
 * @module
 */

import { show } from "../_shared/show.ts";
import { SLASH, urlUnescape } from "./_path_segments.ts";

/**
 * Declares that paths matching `pattern` address a resource, so that an
 * ordinary REST API gets resource semantics. Segments are literals or
 * parameters (`:name`); the last parameter may be optional (`:name?`).
 * Parameter values are percent-decoded, as web frameworks hand them to
 * handlers.
 */
export interface ResourceRoute {
  /** For example `/v1/tenants/:tenant/orders/:id?`. */
  pattern: string;
  /** The API group reported for matches; default `""`. */
  apiGroup?: string;
  /** The API version reported for matches; default `""`. */
  apiVersion?: string;
  /** The resource reported for matches, e.g. `orders`. */
  resource: string;
  /** The parameter holding the namespace. */
  namespaceParam?: string;
  /** The parameter holding the object name. */
  nameParam?: string;
  /** The parameter holding the subresource (needs `nameParam`). */
  subresourceParam?: string;
}

// ---------------------------------------------------------------------------
// Resource routes.

/** A validated route: one entry per segment. */
export interface CompiledRoute {
  /** Literal text per segment; `undefined` for a parameter. */
  readonly literals: readonly (string | undefined)[];
  /** Per segment: 0, or 1/2/3 when it holds the namespace/name/subresource. */
  readonly roles: Uint8Array;
  readonly optionalLast: boolean;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
}

export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const ROLES = ["namespaceParam", "nameParam", "subresourceParam"] as const;

export function compileRoute(route: ResourceRoute, index: number): CompiledRoute {
  const where = `routes[${index}]`;
  const fail = (reason: string): never => {
    throw new TypeError(`Cannot compile ${where}: ${reason}`);
  };
  if (typeof route !== "object" || route === null) {
    fail(`expected a ResourceRoute, received ${show(route)}`);
  }
  const { pattern } = route;
  if (typeof pattern !== "string" || pattern.charCodeAt(0) !== SLASH) {
    fail(`pattern must be a string starting with "/", received ${show(pattern)}`);
  }
  const at = `${where} ${show(pattern)}`;
  const failAt = (reason: string): never => {
    throw new TypeError(`Cannot compile ${at}: ${reason}`);
  };
  const segments = pattern.slice(1).split("/");
  const literals: (string | undefined)[] = [];
  const params = new Map<string, number>();
  let optionalLast = false;
  segments.forEach((segment, k) => {
    if (segment === "") failAt('empty segment (a pattern has no "//" and no trailing "/")');
    const optional = segment.endsWith("?");
    if (segment.charCodeAt(0) !== 0x3a) {
      if (optional) failAt(`only a parameter can be optional, received segment ${show(segment)}`);
      literals.push(segment);
      return;
    }
    const name = segment.slice(1, optional ? -1 : undefined);
    if (!PARAM_NAME.test(name)) {
      failAt(`parameter ${show(segment)} must be ":" and a name of letters, digits and "_"`);
    }
    if (params.has(name)) failAt(`parameter ":${name}" appears twice`);
    if (optional && k !== segments.length - 1) {
      failAt(`only the last segment can be optional, received ${show(segment)}`);
    }
    optionalLast = optional;
    params.set(name, k);
    literals.push(undefined);
  });
  const roles = new Uint8Array(segments.length);
  ROLES.forEach((role, r) => {
    const param = route[role];
    if (param === undefined) return;
    const k = typeof param === "string" ? params.get(param) : undefined;
    if (k === undefined) {
      failAt(
        `${role} ${show(param)} is not a parameter of the pattern (it has ${
          [...params.keys()].map((p) => `:${p}`).join(", ") || "none"
        })`,
      );
    }
    if (roles[k!] !== 0) failAt(`parameter ":${param}" cannot hold two roles`);
    roles[k!] = r + 1;
  });
  if (route.subresourceParam !== undefined && route.nameParam === undefined) {
    failAt("subresourceParam needs a nameParam (a subresource belongs to a named object)");
  }
  if (typeof route.resource !== "string" || route.resource === "" || route.resource.includes("/")) {
    failAt(`resource must be a non-empty string without "/", received ${show(route.resource)}`);
  }
  for (const key of ["apiGroup", "apiVersion"] as const) {
    if (route[key] !== undefined && typeof route[key] !== "string") {
      failAt(`${key} must be a string, received ${show(route[key])}`);
    }
  }
  return {
    literals,
    roles,
    optionalLast,
    apiGroup: route.apiGroup ?? "",
    apiVersion: route.apiVersion ?? "",
    resource: route.resource,
  };
}

/**
 * Matches the raw path segment by segment (leading and trailing slashes
 * ignored, as the Kubernetes rules do) and records the start and end of the
 * namespace, name and subresource segments in `spans` (-1 when absent).
 * Parameters never match an empty segment.
 */
export function matchRoute(route: CompiledRoute, path: string, spans: Int32Array): boolean {
  let pos = 0;
  let end = path.length;
  while (pos < end && path.charCodeAt(pos) === SLASH) pos++;
  while (end > pos && path.charCodeAt(end - 1) === SLASH) end--;
  if (pos === end) pos = end + 1; // no segments at all
  for (let k = 0; k < spans.length; k++) spans[k] = -1;
  const { literals, roles } = route;
  for (let k = 0; k < literals.length; k++) {
    if (pos > end) return k === literals.length - 1 && route.optionalLast;
    let to = path.indexOf("/", pos);
    if (to < 0 || to > end) to = end;
    const literal = literals[k];
    if (literal === undefined) {
      if (to === pos) return false;
      const role = roles[k]!;
      if (role !== 0) {
        spans[2 * role - 2] = pos;
        spans[2 * role - 1] = to;
      }
    } else if (!segmentIs(path, pos, to, literal)) {
      return false;
    }
    pos = to + 1;
  }
  return pos > end;
}

/** Whether path[from, to), percent-decoded, equals `literal`; slices only when escaped. */
export function segmentIs(path: string, from: number, to: number, literal: string): boolean {
  if (literal.length === to - from && path.startsWith(literal, from)) return true;
  const pct = path.indexOf("%", from);
  return pct >= 0 && pct < to && urlUnescape(path.slice(from, to), false) === literal;
}

/** The decoded parameter recorded at spans[at], or "" when absent. */
export function spanValue(path: string, spans: Int32Array, at: number): string {
  const from = spans[at]!;
  if (from < 0) return "";
  const raw = path.slice(from, spans[at + 1]!);
  // describe() has already rejected paths with malformed escapes.
  return urlUnescape(raw, false) ?? raw;
}
