/**
 * Comparing secrets (tokens, bearer headers) without telling where they
 * differ.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * Compares two strings in time that depends on their lengths only, not on
 * where they differ (for secrets).
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a), y = encoder.encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
