/** Request paths shared by the classification, middleware and gateway tests. */

/** Every way of writing a dot segment that a URL parser or a decoding server resolves. */
export const SMUGGLING_PATHS: readonly string[] = [
  "/healthz/../load",
  "/healthz/./../load",
  "/livez/./../load",
  "/healthz/%2e%2e/load",
  "/healthz/%2E%2E/load",
  "/healthz/%2e%2E/load",
  "/healthz/.%2e/load",
  "/healthz/%2e./load",
  "/healthz/%2e/../load",
  "/healthz/..",
  "/healthz/.",
  "/healthz/%2e",
  "/healthz%2F..%2Fload",
  "/healthz%2f%2e%2e%2fload",
  "/healthz/..%2Fload",
  "/healthz\\..\\load",
  "/healthz\\load",
  "/healthz%5C..%5Cload",
  "/healthz%5c%2e%2e%5cload",
  "/readyz/%zz",
  "/readyz/%2",
];
