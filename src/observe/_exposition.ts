/**
 * Pieces of the Prometheus text exposition format 0.0.4: name rules,
 * escaping, and numbers printed the way Go's client library prints them.
 * Internal to the metrics registry.
 *
 * @module
 */

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Throws unless `name` is a valid metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`).
 *
 * @throws {TypeError} naming the received value.
 */
export function checkMetricName(name: unknown): asserts name is string {
  if (typeof name !== "string" || !METRIC_NAME.test(name)) {
    throw new TypeError(
      `Cannot create metric: invalid metric name ${fmtReceived(name)}`,
    );
  }
}

/**
 * Throws unless `name` is a valid label name that is not reserved (a
 * leading `__` is reserved for Prometheus; `le` for histogram buckets).
 *
 * @throws {TypeError} naming the received value.
 */
export function checkLabelName(
  metric: string,
  name: unknown,
  reserved: readonly string[],
): asserts name is string {
  if (typeof name !== "string" || !LABEL_NAME.test(name) || name.startsWith("__")) {
    throw new TypeError(
      `Cannot create metric ${metric}: invalid label name ${fmtReceived(name)}`,
    );
  }
  if (reserved.includes(name)) {
    throw new TypeError(`Cannot create metric ${metric}: label name "${name}" is reserved`);
  }
}

/** A received value for an error message. */
export function fmtReceived(x: unknown): string {
  if (typeof x === "string") return JSON.stringify(x);
  if (typeof x === "bigint") return `${x}n`;
  if (typeof x === "object" && x !== null) {
    try {
      return JSON.stringify(x);
    } catch {
      return String(x);
    }
  }
  return String(x);
}

/** Escapes `# HELP` text: backslash and line feed (format 0.0.4). */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === "\\" ? "\\\\" : "\\n"));
}

/** Escapes a label value: backslash, double quote and line feed (format 0.0.4). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\\" ? "\\\\" : c === '"' ? '\\"' : "\\n"));
}

/**
 * Formats a sample value as Go's Prometheus client does: `+Inf`, `-Inf`,
 * `NaN`, else `strconv.FormatFloat(x, 'g', -1, 64)`: the shortest digits
 * that round-trip, in exponent form with at least two exponent digits
 * (`1e+06`, `1.5e-05`) when the decimal exponent is below -4 or at least 6.
 */
export function formatValue(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "+Inf";
  if (x === -Infinity) return "-Inf";
  if (x === 0) return "0";
  // JavaScript's shortest round-trip digits and decimal exponent.
  const [mant, expStr] = x.toExponential().split("e") as [string, string];
  const exp = Number(expStr);
  const sign = x < 0 ? "-" : "";
  const digits = mant.replace("-", "").replace(".", "");
  if (exp < -4 || exp >= 6) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = exp < 0 ? -exp : exp;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  if (digits.length > exp + 1) {
    return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  return sign + digits + "0".repeat(exp + 1 - digits.length);
}
