/**
 * Whether apimachinery's labels.Parse accepts a label selector (only validity matters to RequestInfo).
 *
 * @module
 */

import { dns1123SubdomainErrors } from "../config/names.ts";

// ---------------------------------------------------------------------------
// Label selectors: only whether apimachinery's labels.Parse accepts them.

const T_END = 1;
const T_CLOSE = 2;
const T_COMMA = 3;
const T_NOT = 4;
const T_OP = 5; // = == != (exact-value operators)
const T_ORDER = 6; // > < (integer-value operators)
const T_IDENT = 7;
const T_IN = 8; // in, notin
const T_OPEN = 9;

const SYMBOLS = new Map([
  ["(", T_OPEN],
  [")", T_CLOSE],
  [",", T_COMMA],
  ["!", T_NOT],
  ["=", T_OP],
  ["==", T_OP],
  ["!=", T_OP],
  [">", T_ORDER],
  ["<", T_ORDER],
]);

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

function isSymbol(c: number): boolean {
  return c === 0x3d || c === 0x21 || c === 0x28 || c === 0x29 || c === 0x2c || c === 0x3e ||
    c === 0x3c;
}

/**
 * labels.Lexer, byte for byte where it matters: a NUL reads as the end of
 * input at the start of a token, but only ends (and is consumed by) an
 * identifier or an operator.
 */
function lexLabels(s: string, kinds: number[], texts: string[]): void {
  let pos = 0;
  for (;;) {
    let c = pos < s.length ? s.charCodeAt(pos++) : 0;
    while (isBlank(c)) c = pos < s.length ? s.charCodeAt(pos++) : 0;
    if (c === 0) {
      kinds.push(T_END);
      texts.push("");
      return;
    }
    const from = pos - 1;
    if (isSymbol(c)) {
      // The longest operator: "!=" and "==" are the only two-character ones.
      if ((c === 0x21 || c === 0x3d) && s.charCodeAt(pos) === 0x3d) pos++;
      const text = s.slice(from, pos);
      if (s.charCodeAt(pos) === 0) pos++;
      kinds.push(SYMBOLS.get(text)!);
      texts.push(text);
      continue;
    }
    let to = -1;
    while (pos < s.length) {
      const d = s.charCodeAt(pos);
      if (d === 0) {
        to = pos++;
        break;
      }
      if (isSymbol(d) || isBlank(d)) break;
      pos++;
    }
    const text = s.slice(from, to < 0 ? pos : to);
    kinds.push(text === "in" || text === "notin" ? T_IN : T_IDENT);
    texts.push(text);
  }
}

/**
 * Whether labels.Parse accepts the selector: its grammar, keys that are
 * qualified names, values that are label values, integers after `>`/`<`.
 */
export function isLabelSelector(selector: string): boolean {
  const kinds: number[] = [];
  const texts: string[] = [];
  lexLabels(selector, kinds, texts);
  let p = 0;
  // In value position "in" and "notin" are ordinary identifiers.
  const peek = (): number => kinds[p] === T_IN ? T_IDENT : kinds[p] ?? T_END;
  const take = (): number => {
    const k = peek();
    p++;
    return k;
  };
  const requirement = (): boolean => {
    let k = take();
    const negated = k === T_NOT;
    if (negated) k = take();
    if (k !== T_IDENT || !isQualifiedName(texts[p - 1]!)) return false;
    const next = peek();
    if (negated || next === T_END || next === T_COMMA) return true;
    const op = kinds[p++]; // operator position: "in" and "notin" are keywords here
    if (op === T_IN) {
      if (take() !== T_OPEN) return false;
      if (peek() === T_CLOSE) return take() === T_CLOSE; // "()" is the set {""}
      if (peek() !== T_IDENT && peek() !== T_COMMA) return false;
      for (;;) {
        const t = take();
        if (t === T_IDENT) {
          if (!isLabelValue(texts[p - 1]!)) return false;
          if (peek() === T_CLOSE) break;
          if (peek() !== T_COMMA) return false;
        } else if (t === T_COMMA) {
          // Empty members are the value "", which is valid.
          if (peek() === T_CLOSE) break;
          if (peek() === T_COMMA) p++;
        } else {
          return false;
        }
      }
      return take() === T_CLOSE;
    }
    if (op !== T_OP && op !== T_ORDER) return false;
    let value = "";
    if (peek() !== T_END && peek() !== T_COMMA) {
      if (take() !== T_IDENT) return false;
      value = texts[p - 1]!;
    }
    return (op === T_OP || isInt64(value)) && isLabelValue(value);
  };
  for (;;) {
    const k = peek();
    if (k === T_END) return true;
    if (k !== T_IDENT && k !== T_NOT) return false;
    if (!requirement()) return false;
    const after = take();
    if (after === T_END) return true;
    if (after !== T_COMMA || (peek() !== T_IDENT && peek() !== T_NOT)) return false;
  }
}

/** apimachinery `validation.IsQualifiedName`: `[prefix/]name`. */
function isQualifiedName(key: string): boolean {
  const slash = key.indexOf("/");
  let name = key;
  if (slash >= 0) {
    if (key.indexOf("/", slash + 1) >= 0) return false;
    const prefix = key.slice(0, slash);
    if (prefix === "" || dns1123SubdomainErrors(prefix).length > 0) return false;
    name = key.slice(slash + 1);
  }
  return name.length <= 63 && QUALIFIED_NAME.test(name);
}

/** apimachinery `validation.IsValidLabelValue`. */
function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

/** `strconv.ParseInt(s, 10, 64)` succeeds. */
export function isInt64(s: string): boolean {
  if (!/^[+-]?[0-9]+$/.test(s)) return false;
  const digits = s.replace(/^[+-]?0*/, "");
  if (digits.length !== 19) return digits.length < 19;
  return digits <= (s.charCodeAt(0) === 0x2d ? "9223372036854775808" : "9223372036854775807");
}
