/**
 * DNS-1123 name checks, with Kubernetes' messages (apimachinery `IsDNS1123Label`
 * and `IsDNS1123Subdomain`).
 *
 * @module
 */

const LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const LABEL_RE = new RegExp(`^${LABEL}$`);
export const SUBDOMAIN_RE = new RegExp(`^${SUBDOMAIN}$`);

const LABEL_MESSAGE = "a lowercase RFC 1123 label must consist of lower case alphanumeric " +
  "characters or '-', and must start and end with an alphanumeric character " +
  `(e.g. 'my-name',  or '123-abc', regex used for validation is '${LABEL}')`;
export const SUBDOMAIN_MESSAGE = "a lowercase RFC 1123 subdomain must consist of lower case " +
  "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric " +
  `character (e.g. 'example.com', regex used for validation is '${SUBDOMAIN}')`;

/**
 * Problems with `value` as a DNS-1123 label (at most 63 characters, used for
 * namespaces); empty when valid.
 */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push("must be no more than 63 characters");
  if (!LABEL_RE.test(value)) {
    // A valid subdomain that is no label: the length is checked, so it has dots (Kubernetes'
    // `IsDNS1123Label`).
    errors.push(SUBDOMAIN_RE.test(value) ? "must not contain dots" : LABEL_MESSAGE);
  }
  return errors;
}

/**
 * Problems with `value` as a DNS-1123 subdomain (at most 253 characters, used
 * for object and service-account names); empty when valid.
 */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push("must be no more than 253 characters");
  if (!SUBDOMAIN_RE.test(value)) errors.push(SUBDOMAIN_MESSAGE);
  return errors;
}
