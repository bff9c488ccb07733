/**
 * Identity resolvers: front-proxy headers (Kubernetes' request-header
 * authentication), verified JWT payloads, and custom functions all have one
 * shape, {@linkcode IdentityResolver}: a function of the request and a
 * framework context (Hono's `c`, so that `c.get("jwtPayload")` works). A
 * resolver reports {@linkcode IdentityInput}; {@linkcode normalizeUser} turns
 * it into the final user.
 *
 * @module
 */

import { IdentityError, type IdentityInput } from "./identity.ts";

/**
 * Derives identity from a request and the framework's context for it
 * (`unknown` outside a framework). Returns `undefined` for "no identity"
 * (anonymous); throws {@linkcode IdentityError} for input it refuses. May
 * return a promise (for example to look up an API key).
 */
export type IdentityResolver<C = unknown> = (
  request: Request,
  context: C,
) => IdentityInput | undefined | Promise<IdentityInput | undefined>;

/** Header names of a trusted authenticating front proxy. */
export interface FrontProxyHeaderOptions {
  /** Headers carrying the user name; the first non-empty one wins. Default `X-Remote-User`. */
  usernameHeaders?: readonly string[];
  /** Headers carrying groups, one a field (repeated for several). Default `X-Remote-Group`. */
  groupHeaders?: readonly string[];
  /** Prefixes of headers carrying extra attributes. Default `X-Remote-Extra-`. */
  extraHeaderPrefixes?: readonly string[];
}

/** `Headers` that can give each field of a name apart (the gateway's own server's). */
interface FieldLines {
  lines(name: string): readonly string[];
}

function hasLines(headers: Headers): headers is Headers & FieldLines {
  return typeof (headers as Partial<FieldLines>).lines === "function";
}

/**
 * Adds the values of the fields `joined` holds to `into`: a `Headers` joins the fields of one
 * name with ", " (the Fetch standard's combining), so that is where they part again. A value
 * that itself holds ", " therefore reads as two; one with a bare "," stays one, as in
 * Kubernetes, where each field is one value. Empty values are left out.
 */
function addJoined(joined: string | null, into: string[]): void {
  if (joined === null) return;
  // Most carry one value: no split, no array of its own.
  if (joined.indexOf(", ") < 0) {
    if (joined !== "") into.push(joined);
    return;
  }
  for (const v of joined.split(", ")) if (v !== "") into.push(v);
}

/** The values of the fields named `name`, each field one value (Kubernetes' `allHeaderValues`). */
function addFieldValues(headers: Headers, name: string, into: string[]): void {
  if (!hasLines(headers)) return addJoined(headers.get(name), into);
  for (const v of headers.lines(name)) if (v !== "") into.push(v);
}

/**
 * An extra's key: the header name's rest, lower-cased, then %-unescaped (Kubernetes'
 * `unescapeExtraKey`); a malformed escape keeps the key as it is.
 */
function extraKey(rest: string): string {
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

/**
 * Reads identity from front-proxy headers, as Kubernetes' request-header
 * authenticator does: the first user field, each group field one group (a
 * bare comma is part of the name), extra keys lower-cased then unescaped. A
 * Fetch `Headers` joins repeated fields with ", ", so there values part at
 * ", " (the gateway's own server gives each field apart). **Enable only behind a proxy that authenticates clients
 * and strips these headers from incoming requests**: a client could otherwise
 * claim any identity.
 *
 * @example
 * ```ts
 * import { frontProxyIdentity } from "@apf/edge";
 * const identify = frontProxyIdentity();
 * const request = new Request("http://localhost/", {
 *   headers: { "X-Remote-User": "alice", "X-Remote-Group": "dev, ops" },
 * });
 * identify(request, undefined); // { name: "alice", groups: ["dev", "ops"] }
 * ```
 */
export function frontProxyIdentity(
  options: FrontProxyHeaderOptions = {},
): (request: Request, context?: unknown) => IdentityInput | undefined {
  const userHeaders = options.usernameHeaders ?? ["X-Remote-User"];
  const groupHeaders = options.groupHeaders ?? ["X-Remote-Group"];
  const extraPrefixes = (options.extraHeaderPrefixes ?? ["X-Remote-Extra-"]).map((p) =>
    p.toLowerCase()
  );
  for (const h of [...userHeaders, ...groupHeaders, ...extraPrefixes]) {
    if (typeof h !== "string" || h.trim() === "") {
      throw new TypeError(
        `Cannot configure front-proxy identity: bad header name ${JSON.stringify(h)}`,
      );
    }
  }
  return function frontProxy(request: Request): IdentityInput | undefined {
    const headers = request.headers;
    const lines = hasLines(headers);
    // The first field of the first header that has a non-empty one (Kubernetes' `headerValue`).
    let name = "";
    for (const h of userHeaders) {
      name = (lines ? (headers as Headers & FieldLines).lines(h)[0] : headers.get(h))?.trim() ?? "";
      if (name !== "") break;
    }
    if (name === "") return undefined;
    const groups: string[] = [];
    for (const h of groupHeaders) addFieldValues(headers, h, groups);
    const identity: IdentityInput = { name, groups };
    if (extraPrefixes.length > 0) {
      let extra: Record<string, string[]> | undefined;
      // Every prefix a header has counts (Kubernetes' `newExtra`); each field is one value.
      headers.forEach((value, header) => {
        for (const prefix of extraPrefixes) {
          // A key of nothing is no extra.
          if (header.length === prefix.length || !header.startsWith(prefix)) continue;
          const key = extraKey(header.slice(prefix.length));
          extra ??= {};
          const values = extra[key] ??= [];
          if (lines) {
            if (value !== "") values.push(value);
          } else addJoined(value, values);
        }
      });
      if (extra !== undefined) identity.extra = extra;
    }
    return identity;
  };
}

/** Which claims of a verified JWT carry the identity. */
export interface JwtClaimOptions {
  /** Claim with the user name. Default `sub`. */
  userClaim?: string;
  /** Prefix added to the user name, for example `oidc:`. Default none. */
  usernamePrefix?: string;
  /** Claim with the groups (a string or a list of strings). Default `groups`. */
  groupsClaim?: string;
  /** Prefix added to every group. Default none. */
  groupsPrefix?: string;
  /** Claim with the uid. Default none. */
  uidClaim?: string;
}

/**
 * A resolver reading the payload of an already **verified** JWT from the
 * request's context (for example Hono's `jwt` middleware's
 * `c.get("jwtPayload")`) and mapping it with {@linkcode jwtPayloadIdentity}.
 *
 * @example
 * ```ts
 * import { jwtIdentity } from "@apf/edge";
 * type Ctx = { get(key: "jwtPayload"): unknown };
 * const identify = jwtIdentity((_request, c: Ctx) => c.get("jwtPayload"), { groupsClaim: "roles" });
 * ```
 */
export function jwtIdentity<C>(
  payloadOf: (request: Request, context: C) => unknown,
  options: JwtClaimOptions = {},
): (request: Request, context: C) => IdentityInput | undefined {
  if (typeof payloadOf !== "function") {
    throw new TypeError(
      `Cannot configure JWT identity: payloadOf must be a function, got ${typeof payloadOf}`,
    );
  }
  return function jwt(request: Request, context: C): IdentityInput | undefined {
    return jwtPayloadIdentity(payloadOf(request, context), options);
  };
}

/**
 * Maps the payload of an already **verified** JWT to identity. A payload
 * without the user claim means no identity; claims of the wrong type are
 * refused. {@linkcode jwtIdentity} makes a resolver of it.
 *
 * @example
 * ```ts
 * import { jwtPayloadIdentity } from "@apf/edge";
 * jwtPayloadIdentity({ sub: "alice", groups: ["dev"] });
 * // { name: "alice", groups: ["dev"] }
 * ```
 */
export function jwtPayloadIdentity(
  payload: unknown,
  options: JwtClaimOptions = {},
): IdentityInput | undefined {
  if (payload === undefined || payload === null) return undefined;
  if (typeof payload !== "object" || Array.isArray(payload)) {
    throw new IdentityError("Cannot accept identity: the JWT payload is not an object");
  }
  const claims = payload as Record<string, unknown>;
  const userClaim = options.userClaim ?? "sub";
  const user = claims[userClaim];
  if (user === undefined || user === null || user === "") return undefined;
  if (typeof user !== "string") {
    throw new IdentityError(
      `Cannot accept identity: JWT claim ${JSON.stringify(userClaim)} is not a string`,
    );
  }
  const groupsClaim = options.groupsClaim ?? "groups";
  const raw = claims[groupsClaim];
  let groups: string[];
  if (raw === undefined || raw === null) groups = [];
  else if (typeof raw === "string") groups = [raw];
  else if (Array.isArray(raw) && raw.every((g) => typeof g === "string")) groups = raw;
  else {
    throw new IdentityError(
      `Cannot accept identity: JWT claim ${JSON.stringify(groupsClaim)} is not a string list`,
    );
  }
  const identity: IdentityInput = {
    name: (options.usernamePrefix ?? "") + user,
    groups: groups.map((g) => (options.groupsPrefix ?? "") + g),
  };
  if (options.uidClaim !== undefined) {
    const uid = claims[options.uidClaim];
    if (typeof uid === "string" && uid !== "") identity.uid = uid;
    else if (uid !== undefined && uid !== null) {
      throw new IdentityError(
        `Cannot accept identity: JWT claim ${JSON.stringify(options.uidClaim)} is not a string`,
      );
    }
  }
  return identity;
}
