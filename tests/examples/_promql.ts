/**
 * A small PromQL parser for the dashboard test: enough of the grammar
 * (selectors, functions, aggregations with `by`/`without`, binary operators
 * with `on`/`ignoring`) to find every metric a query reads, the labels it
 * matches and groups by, and the labels its result carries. It evaluates
 * nothing. Grammar: https://prometheus.io/docs/prometheus/latest/querying/basics/
 */

/** A label matcher of a selector: `label op "value"`. */
export interface Matcher {
  label: string;
  op: "=" | "!=" | "=~" | "!~";
  value: string;
}

/** A node of a parsed query. */
export type Node =
  | { kind: "selector"; name: string; matchers: Matcher[]; range: string | null }
  | { kind: "call"; fn: string; args: Node[] }
  | { kind: "aggregation"; op: string; grouping: Grouping | null; args: Node[] }
  | { kind: "binary"; op: string; lhs: Node; rhs: Node; matching: Grouping | null }
  | { kind: "number"; value: number }
  | { kind: "string"; value: string };

/** `by (...)`, `without (...)`, `on (...)` or `ignoring (...)`, with its labels. */
export interface Grouping {
  mode: "by" | "without" | "on" | "ignoring";
  labels: string[];
}

const AGGREGATIONS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "count",
  "stddev",
  "stdvar",
  "group",
  "topk",
  "bottomk",
  "quantile",
  "count_values",
]);
const BINARY = ["==", "!=", ">=", "<=", ">", "<", "+", "-", "*", "/", "%", "^"];
const SET_OPS = new Set(["and", "or", "unless"]);

const TOKEN =
  /\s*(?:("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(\[[^\]]*\])|(\d+(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+)|([a-zA-Z_:][a-zA-Z0-9_:]*)|(=~|!~|==|!=|>=|<=|[-+*/%^<>=(){},]))/y;

interface Token {
  type: "string" | "range" | "number" | "ident" | "punct";
  text: string;
}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < query.length) {
    if (/^\s*$/.test(query.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(query);
    if (m === null) throw new SyntaxError(`Cannot parse ${JSON.stringify(query)} at ${at}`);
    const [, str, range, num, ident, punct] = m;
    if (str !== undefined) tokens.push({ type: "string", text: str });
    else if (range !== undefined) tokens.push({ type: "range", text: range });
    else if (num !== undefined) tokens.push({ type: "number", text: num });
    else if (ident !== undefined) tokens.push({ type: "ident", text: ident });
    else tokens.push({ type: "punct", text: punct! });
  }
  return tokens;
}

const unquote = (s: string): string => JSON.parse(s[0] === "'" ? `"${s.slice(1, -1)}"` : s);

/** Parses `query`; throws a `SyntaxError` naming the query on anything outside the subset. */
export function parsePromQL(query: string): Node {
  const tokens = tokenize(query);
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`Cannot parse ${JSON.stringify(query)}: ${what} at token ${i}`);
  };
  const peek = (): Token | undefined => tokens[i];
  const is = (text: string): boolean => tokens[i]?.text === text && tokens[i]?.type !== "string";
  const expect = (text: string): void => {
    if (!is(text)) fail(`expected ${text}`);
    i++;
  };
  const labelList = (): string[] => {
    expect("(");
    const labels: string[] = [];
    while (!is(")")) {
      const t = tokens[i++];
      if (t?.type !== "ident") fail("expected a label name");
      labels.push(t!.text);
      if (is(",")) i++;
    }
    expect(")");
    return labels;
  };
  const grouping = (modes: Grouping["mode"][]): Grouping | null => {
    const t = peek();
    if (t?.type !== "ident" || !(modes as string[]).includes(t.text)) return null;
    i++;
    return { mode: t.text as Grouping["mode"], labels: labelList() };
  };
  const args = (): Node[] => {
    expect("(");
    const out: Node[] = [];
    while (!is(")")) {
      out.push(expr());
      if (is(",")) i++;
      else if (!is(")")) fail("expected , or )");
    }
    expect(")");
    return out;
  };
  const matchers = (): Matcher[] => {
    expect("{");
    const out: Matcher[] = [];
    while (!is("}")) {
      const label = tokens[i++];
      const op = tokens[i++];
      const value = tokens[i++];
      if (label?.type !== "ident" || value?.type !== "string") fail('expected label op "value"');
      if (!["=", "!=", "=~", "!~"].includes(op?.text ?? "")) fail("expected a matcher operator");
      out.push({ label: label!.text, op: op!.text as Matcher["op"], value: unquote(value!.text) });
      if (is(",")) i++;
    }
    expect("}");
    return out;
  };
  const range = (): string | null => peek()?.type === "range" ? tokens[i++]!.text : null;
  const primary = (): Node => {
    const t = peek() ?? fail("unexpected end");
    if (t.type === "number") {
      i++;
      return { kind: "number", value: Number(t.text) };
    }
    if (t.type === "string") {
      i++;
      return { kind: "string", value: unquote(t.text) };
    }
    if (is("-") || is("+")) {
      i++;
      return {
        kind: "binary",
        op: "*",
        lhs: { kind: "number", value: -1 },
        rhs: primary(),
        matching: null,
      };
    }
    if (is("(")) {
      i++;
      const inner = expr();
      expect(")");
      return inner;
    }
    if (is("{")) return { kind: "selector", name: "", matchers: matchers(), range: range() };
    if (t.type !== "ident") return fail(`unexpected ${t.text}`);
    i++;
    if (AGGREGATIONS.has(t.text) && (is("(") || is("by") || is("without"))) {
      const before = grouping(["by", "without"]);
      const a = args();
      const after = grouping(["by", "without"]);
      return { kind: "aggregation", op: t.text, grouping: before ?? after, args: a };
    }
    if (is("(")) return { kind: "call", fn: t.text, args: args() };
    return {
      kind: "selector",
      name: t.text,
      matchers: is("{") ? matchers() : [],
      range: range(),
    };
  };
  const expr = (): Node => {
    let lhs = primary();
    for (;;) {
      const t = peek();
      const op = t === undefined
        ? undefined
        : t.type === "punct" && BINARY.includes(t.text)
        ? t.text
        : t.type === "ident" && SET_OPS.has(t.text)
        ? t.text
        : undefined;
      if (op === undefined) return lhs;
      i++;
      if (is("bool")) i++;
      const matching = grouping(["on", "ignoring"]);
      if (is("group_left") || is("group_right")) {
        i++;
        if (is("(")) labelList();
      }
      lhs = { kind: "binary", op, lhs, rhs: primary(), matching };
    }
  };
  const node = expr();
  if (i !== tokens.length) fail("trailing tokens");
  return node;
}

/** Every node of `node`'s tree, `node` first, with its ancestors (nearest first). */
export function* walk(
  node: Node,
  ancestors: Node[] = [],
): Generator<{ node: Node; ancestors: Node[] }> {
  yield { node, ancestors };
  const children = node.kind === "call" || node.kind === "aggregation"
    ? node.args
    : node.kind === "binary"
    ? [node.lhs, node.rhs]
    : [];
  for (const c of children) yield* walk(c, [node, ...ancestors]);
}

/** The selectors under `node`. */
export function selectors(node: Node): Extract<Node, { kind: "selector" }>[] {
  return [...walk(node)].map((w) => w.node).filter((n) => n.kind === "selector") as Extract<
    Node,
    { kind: "selector" }
  >[];
}

const SCALAR_FUNCTIONS = new Set(["scalar", "time"]);

/**
 * The labels of `node`'s result (`null` for a scalar), given the labels of
 * each metric's series. Throws an `Error` where two vectors could not match:
 * an arithmetic or comparison operator between vectors of different label
 * sets, without `on` or `ignoring` to say which labels match.
 */
export function resultLabels(
  node: Node,
  labelsOf: (metric: string) => Set<string>,
): Set<string> | null {
  const of = (n: Node) => resultLabels(n, labelsOf);
  switch (node.kind) {
    case "number":
    case "string":
      return null;
    case "selector":
      return labelsOf(node.name);
    case "call": {
      if (SCALAR_FUNCTIONS.has(node.fn)) return null;
      if (node.fn === "vector") return new Set();
      const vectors = node.args.map(of).filter((l) => l !== null);
      if (vectors.length !== 1) {
        throw new Error(`${node.fn}() takes one vector here, got ${vectors.length}`);
      }
      const labels = new Set(vectors[0]);
      if (node.fn === "histogram_quantile") labels.delete("le");
      return labels;
    }
    case "aggregation": {
      const inner = of(node.args[node.args.length - 1]!);
      if (inner === null) throw new Error(`${node.op}() of a scalar`);
      if (node.grouping === null) return new Set();
      if (node.grouping.mode === "by") return new Set(node.grouping.labels);
      return new Set([...inner].filter((l) => !node.grouping!.labels.includes(l)));
    }
    case "binary": {
      const l = of(node.lhs);
      const r = of(node.rhs);
      if (l === null) return r;
      if (r === null || SET_OPS.has(node.op)) return l;
      const m = node.matching;
      const key = (s: Set<string>) =>
        [...s].filter((x) =>
          m === null ? true : m.mode === "on" ? m.labels.includes(x) : !m.labels.includes(x)
        ).sort().join(",");
      if (m?.mode === "on") {
        for (const x of m.labels) {
          if (!l.has(x) || !r.has(x)) throw new Error(`on(${x}): not on both sides of ${node.op}`);
        }
      } else if (key(l) !== key(r)) {
        throw new Error(
          `the two sides of ${node.op} have different labels: {${key(l)}} and {${key(r)}}`,
        );
      }
      return l;
    }
  }
}
