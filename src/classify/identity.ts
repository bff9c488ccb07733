/**
 * Who sent a request: Kubernetes-style user info, and resolvers that derive it
 * from trusted front-proxy headers, a verified JWT payload or a custom
 * function. Nothing here trusts a client: the header resolver must be enabled
 * explicitly, and only behind a proxy that strips those headers from clients.
 *
 * @module
 */

/** The user name of requests without identity. */
export const ANONYMOUS_USER = "system:anonymous";
/** The group of requests without identity. */
export const UNAUTHENTICATED_GROUP = "system:unauthenticated";
/** The group every identified user belongs to. */
export const AUTHENTICATED_GROUP = "system:authenticated";

/** An authenticated (or anonymous) user, as Kubernetes' `user.Info`. */
export interface UserInfo {
  /** User name, for example `alice` or `system:serviceaccount:ns:name`. */
  name: string;
  /** Groups, including `system:authenticated` or `system:unauthenticated`. */
  groups: string[];
  /** Optional unique id. */
  uid?: string;
  /** Extra attributes (key → values). */
  extra?: Record<string, string[]>;
}

/** Identity as a resolver reports it, before normalisation. */
export interface IdentityInput {
  /** User name; empty or absent means no identity (anonymous). */
  name?: string;
  /** Groups the user belongs to. */
  groups?: readonly string[];
  /** Optional unique id. */
  uid?: string;
  /** Extra attributes. */
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** Thrown for identity input that cannot be accepted (too large or malformed). */
export class IdentityError extends Error {
  /** Builds the error with a message saying what was wrong. */
  constructor(message: string) {
    super(message);
    this.name = "IdentityError";
  }
}

/** Bounds on identity input; beyond them input is refused, never truncated silently. */
export const IDENTITY_LIMITS: Readonly<{
  nameLength: number;
  groups: number;
  groupLength: number;
  extraKeys: number;
  extraValues: number;
}> = Object.freeze({
  nameLength: 1024,
  groups: 256,
  groupLength: 1024,
  extraKeys: 64,
  extraValues: 256,
});

// C0/C1 control characters (and DEL) never belong in a user or group name.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Whether `value` holds a control character: {@linkcode CONTROL}, by a loop for the short
 * names of nearly every request (a regular expression's call costs more than their few
 * characters), by the expression for long ones.
 */
function hasControl(value: string): boolean {
  if (value.length > 64) return CONTROL.test(value);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

function checkText(what: string, value: unknown, max: number): string {
  if (typeof value !== "string") {
    throw new IdentityError(
      `Cannot accept identity: ${what} must be a string, got ${typeof value}`,
    );
  }
  if (value.length > max) {
    throw new IdentityError(
      `Cannot accept identity: ${what} is ${value.length} characters long (limit ${max})`,
    );
  }
  if (hasControl(value)) {
    throw new IdentityError(
      `Cannot accept identity: ${what} ${JSON.stringify(value)} contains control characters`,
    );
  }
  return value;
}

/** The anonymous user: `system:anonymous` in `system:unauthenticated`. */
export function anonymousUser(): UserInfo {
  return { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}

/**
 * Normalises identity input as Kubernetes' authentication chain does: no name
 * gives the anonymous user; an identified user is added to
 * `system:authenticated` unless it already is in it or in
 * `system:unauthenticated`. Groups are de-duplicated (first occurrence kept) and
 * empty ones dropped. Throws {@linkcode IdentityError} on oversized or malformed input.
 *
 * @example
 * ```ts
 * import { normalizeUser } from "@apf/edge";
 * normalizeUser({ name: "alice", groups: ["dev"] });
 * // { name: "alice", groups: ["dev", "system:authenticated"] }
 * ```
 */
export function normalizeUser(input: IdentityInput | undefined | null): UserInfo {
  if (input === undefined || input === null) return anonymousUser();
  const name = checkText("user name", input.name ?? "", IDENTITY_LIMITS.nameLength);
  if (name === "") return anonymousUser();
  const given = input.groups ?? [];
  if (!Array.isArray(given)) {
    throw new IdentityError("Cannot accept identity: groups must be a list");
  }
  if (given.length > IDENTITY_LIMITS.groups) {
    throw new IdentityError(
      `Cannot accept identity: ${given.length} groups (limit ${IDENTITY_LIMITS.groups})`,
    );
  }
  const count = given.length;
  // Kubernetes' AuthenticatedGroupAdder: anonymous and unauthenticated users are left alone.
  let adds = name !== ANONYMOUS_USER;
  let kept = true; // no empty group, no repeat: the list is copied as it is
  for (let i = 0; i < count; i++) {
    const group = checkText("group name", given[i], IDENTITY_LIMITS.groupLength);
    if (group === AUTHENTICATED_GROUP || group === UNAUTHENTICATED_GROUP) adds = false;
    if (group === "" || (kept && i > 0 && given.indexOf(group) < i)) kept = false;
  }
  let groups: string[];
  if (kept) {
    // Sized once: pushing onto an empty array costs a second allocation as it grows.
    groups = new Array<string>(adds ? count + 1 : count);
    for (let i = 0; i < count; i++) groups[i] = given[i]!;
  } else {
    groups = [];
    for (let i = 0; i < count; i++) {
      const group = given[i]!;
      if (group !== "" && !groups.includes(group)) groups.push(group);
    }
  }
  if (adds) groups[kept ? count : groups.length] = AUTHENTICATED_GROUP;
  const user: UserInfo = { name, groups };
  if (input.uid !== undefined && input.uid !== "") {
    user.uid = checkText("uid", input.uid, IDENTITY_LIMITS.nameLength);
  }
  if (input.extra !== undefined) user.extra = normalizeExtra(input.extra);
  return user;
}

function normalizeExtra(
  extra: Readonly<Record<string, readonly string[]>>,
): Record<string, string[]> {
  const keys = Object.keys(extra);
  if (keys.length > IDENTITY_LIMITS.extraKeys) {
    throw new IdentityError(
      `Cannot accept identity: ${keys.length} extra keys (limit ${IDENTITY_LIMITS.extraKeys})`,
    );
  }
  const out: Record<string, string[]> = {};
  for (const key of keys) {
    checkText("extra key", key, IDENTITY_LIMITS.groupLength);
    const values = extra[key];
    if (!Array.isArray(values) || values.length > IDENTITY_LIMITS.extraValues) {
      throw new IdentityError(
        `Cannot accept identity: extra ${
          JSON.stringify(key)
        } must be a list of at most ${IDENTITY_LIMITS.extraValues} strings`,
      );
    }
    out[key] = values.map((v) =>
      checkText(`extra ${JSON.stringify(key)} value`, v, IDENTITY_LIMITS.groupLength)
    );
  }
  return out;
}
