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
  /** Headers carrying groups (repeated or comma-separated). Default `X-Remote-Group`. */
  groupHeaders?: readonly string[];
  /** Prefixes of headers carrying extra attributes. Default `X-Remote-Extra-`. */
  extraHeaderPrefixes?: readonly string[];
}

/** Adds the non-empty comma-separated values of `value` to `into`, trimmed. */
function addValues(value: string | null, into: string[]): void {
  if (value === null) return;
  // Most carry one value: no split, no array of its own.
  if (value.indexOf(",") < 0) {
    const v = value.trim();
    if (v !== "") into.push(v);
    return;
  }
  for (const part of value.split(",")) {
    const v = part.trim();
    if (v !== "") into.push(v);
  }
}

function unescapeKey(key: string): string {
  try {
    return decodeURIComponent(key).toLowerCase();
  } catch {
    throw new IdentityError(
      `Cannot accept identity: malformed extra header key ${JSON.stringify(key)}`,
    );
  }
}

/**
 * Reads identity from front-proxy headers, as Kubernetes' request-header
 * authenticator does. **Enable only behind a proxy that authenticates clients
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
    let name = "";
    for (const h of userHeaders) {
      name = headers.get(h)?.trim() ?? "";
      if (name !== "") break;
    }
    if (name === "") return undefined;
    const groups: string[] = [];
    for (const h of groupHeaders) addValues(headers.get(h), groups);
    const identity: IdentityInput = { name, groups };
    if (extraPrefixes.length > 0) {
      let extra: Record<string, string[]> | undefined;
      headers.forEach((value, header) => {
        for (const prefix of extraPrefixes) {
          if (!header.startsWith(prefix)) continue;
          if (header.length === prefix.length) return; // the first prefix found decides
          const key = unescapeKey(header.slice(prefix.length));
          extra ??= {};
          addValues(value, extra[key] ??= []);
          return;
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
