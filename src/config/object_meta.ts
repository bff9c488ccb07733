/**
 * The metadata checks both kinds share (apimachinery's `ValidateObjectMeta`
 * for a cluster-scoped object, as `ValidateFlowSchema` and
 * `ValidatePriorityLevelConfiguration` call it): the name, labels and
 * annotations, with Kubernetes' messages (`pkg/api/validate/content`:
 * `IsLabelKey`, `IsLabelValue`), and a `uid` a response header can carry.
 *
 * @module
 */

import { type FieldErrorList, invalid, required, tooLong } from "./field_errors.ts";
import { dns1123SubdomainErrors, SUBDOMAIN_MESSAGE, SUBDOMAIN_RE } from "./names.ts";

const LABEL_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_RE = new RegExp(`^${LABEL_KEY}$`);
const LABEL_KEY_MESSAGE = "must consist of alphanumeric characters, '-', '_' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', " +
  `regex used for validation is '${LABEL_KEY}')`;
const LABEL_VALUE = `(${LABEL_KEY})?`;
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE}$`);
const LABEL_VALUE_MESSAGE = "a valid label must be an empty string or consist of alphanumeric " +
  "characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  `(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`;
/** Keys and values of every annotation together, in bytes (`TotalAnnotationSizeLimitB`). */
const ANNOTATIONS_LIMIT_BYTES = 256 * 1024;

const utf8 = new TextEncoder();
const bytes = (s: string): number => utf8.encode(s).length;

/**
 * Problems with `key` as a label key, an optional DNS subdomain prefix and
 * `/` before a name of at most 63 bytes (Kubernetes' `IsLabelKey`, alias
 * `IsQualifiedName`); empty when valid.
 */
export function labelKeyErrors(key: string): string[] {
  const errors: string[] = [];
  const parts = key.split("/");
  if (parts.length > 2) {
    return [
      `a valid label key ${LABEL_KEY_MESSAGE} with an optional DNS subdomain prefix and '/' ` +
      "(e.g. 'example.com/MyName')",
    ];
  }
  const name = parts.length === 1 ? parts[0]! : parts[1]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === "") errors.push("prefix part must be non-empty");
    else {
      if (bytes(prefix) > 253) errors.push("prefix part must be no more than 253 bytes");
      if (!SUBDOMAIN_RE.test(prefix)) errors.push(`prefix part ${SUBDOMAIN_MESSAGE}`);
    }
  }
  if (name === "") errors.push("name part must be non-empty");
  else if (bytes(name) > 63) errors.push("name part must be no more than 63 bytes");
  if (!LABEL_KEY_RE.test(name)) errors.push(`name part ${LABEL_KEY_MESSAGE}`);
  return errors;
}

/** Problems with `value` as a label value (Kubernetes' `IsLabelValue`); empty when valid. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (bytes(value) > 63) errors.push("must be no more than 63 bytes");
  if (!LABEL_VALUE_RE.test(value)) errors.push(LABEL_VALUE_MESSAGE);
  return errors;
}

/**
 * The metadata of both kinds: the name is a DNS-1123 subdomain; labels and
 * annotations are checked as Kubernetes checks them (each label's key and
 * value, each annotation's key lower-cased, and 256 KiB of annotations at
 * most); a `uid`, when given, is what a header value can carry (Fetch's
 * rule: no NUL, CR or LF, nothing beyond U+00FF; blanks around it are
 * trimmed when it is set), since it is sent in the
 * `X-Kubernetes-PF-FlowSchema-UID` and `X-Kubernetes-PF-PriorityLevel-UID`
 * response headers (Kubernetes' own are UUIDs the server assigns).
 */
export function validateObjectMeta(
  errs: FieldErrorList,
  meta: {
    readonly name: string;
    readonly uid?: string | undefined;
    readonly labels?: Readonly<Record<string, string>> | undefined;
    readonly annotations?: Readonly<Record<string, string>> | undefined;
  },
): void {
  const { name, uid } = meta;
  if (name === "") {
    errs.add("metadata.name", required("name or generateName is required"));
  } else {
    for (const msg of dns1123SubdomainErrors(name)) errs.add("metadata.name", invalid(name, msg));
  }
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const msg of labelKeyErrors(key)) errs.add("metadata.labels", invalid(key, msg));
    for (const msg of labelValueErrors(value)) errs.add("metadata.labels", invalid(value, msg));
  }
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    // The rule of a label key, except that case does not matter.
    for (const msg of labelKeyErrors(key.toLowerCase())) {
      errs.add("metadata.annotations", invalid(key, msg));
    }
    annotationBytes += bytes(key) + bytes(value);
  }
  if (annotationBytes > ANNOTATIONS_LIMIT_BYTES) {
    errs.add("metadata.annotations", tooLong(ANNOTATIONS_LIMIT_BYTES));
  }
  if (uid !== undefined && NOT_IN_A_HEADER.test(uid)) {
    errs.add(
      "metadata.uid",
      invalid(
        uid,
        "must not hold a NUL, CR or LF, nor a character beyond U+00FF: " +
          "it is sent as a response header's value",
      ),
    );
  }
}

/** What no header value may hold (the Fetch standard's header value). */
const NOT_IN_A_HEADER = /[\0\r\n\u0100-\uffff]/;
