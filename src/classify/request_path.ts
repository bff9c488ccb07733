/**
 * Which request paths may be classified at all. A path is classified as
 * written, but whatever serves it afterwards may read it differently: the
 * WHATWG URL parser (every `fetch`, so the gateway's upstream call) removes
 * `.` and `..` segments, also written `%2e`, and turns `\` into `/`, and a
 * server that decodes `%2F` before resolving dot segments sees segments the
 * classifier never saw. `/healthz/../load` would then be classified by the
 * exempt `probes` FlowSchema (it starts with `/healthz/`) and served as
 * `/load`. Kubernetes is not exposed to this (its handlers route the path
 * exactly as classified; an unknown one is a 404); an app behind `apf()` or
 * the gateway is, so such paths are refused (400) before classification:
 * what is classified is exactly what is served.
 *
 * @module
 */

import { badEscape, urlUnescape } from "./_path_segments.ts";

/**
 * Why the raw (still percent-encoded) URL path `path` must not be
 * classified, or `null` when it is a normal path: no `.` or `..` segment,
 * written plainly or percent-encoded (also behind an encoded `/`), no `\`,
 * no malformed percent escape (Go's server answers those 400 too).
 *
 * @example
 * ```ts
 * import { requestPathProblem } from "./mod.ts";
 *
 * console.assert(requestPathProblem("/apis/apps/v1/deployments") === null);
 * console.assert(requestPathProblem("/healthz/%2e%2e/load") !== null);
 * ```
 */
export function requestPathProblem(path: string): string | null {
  // Most paths have none of the three characters that could make them abnormal.
  if (!mayBeAbnormal(path)) return null;
  if (path.indexOf("\\") >= 0) return `a "\\" in the path ${JSON.stringify(path)}`;
  const decoded = path.indexOf("%") < 0 ? path : urlUnescape(path, false);
  if (decoded === undefined) {
    return `invalid URL escape "${badEscape(path)}" in ${JSON.stringify(path)}`;
  }
  if (hasDotSegment(decoded)) {
    return `a dot segment in the path ${JSON.stringify(path)}`;
  }
  return null;
}

/**
 * Whether `path` has a `.`, `%` or `\`: by one loop for a short path (three calls to
 * `indexOf` cost more than its few characters), by `indexOf` for a long one.
 */
function mayBeAbnormal(path: string): boolean {
  if (path.length > 32) {
    return path.indexOf(".") >= 0 || path.indexOf("%") >= 0 || path.indexOf("\\") >= 0;
  }
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === DOT || c === PERCENT || c === BACKSLASH) return true;
  }
  return false;
}

/**
 * Whether a segment of `path` is `.` or `..`; `\` separates too, as it
 * does for some servers once `%5C` is decoded.
 */
function hasDotSegment(path: string): boolean {
  for (let dot = path.indexOf("."); dot >= 0; dot = path.indexOf(".", dot + 1)) {
    if (dot > 0 && !isSeparator(path.charCodeAt(dot - 1))) continue;
    let end = dot + 1;
    if (path.charCodeAt(end) === DOT) end++;
    if (end === path.length || isSeparator(path.charCodeAt(end))) return true;
  }
  return false;
}

function isSeparator(c: number): boolean {
  return c === 0x2f || c === 0x5c;
}

const DOT = 0x2e;
const PERCENT = 0x25;
const BACKSLASH = 0x5c;
