/**
 * The README and the guides of `docs/` stay true to the code: the README is a
 * front page of at most 400 lines that opens with the two commands; every
 * TypeScript snippet is an excerpt of a file of `examples/` or `src/` (which
 * `deno task check` type-checks), every YAML snippet one of `examples/`, and
 * every JSON snippet parses; every `deno run` of an example is the one its
 * header gives; every relative link resolves to a file, and every anchor to
 * a heading of it; every repository path named in code exists.
 */

import assert from "node:assert/strict";

const root = new URL("../", import.meta.url);

/** Every `.md` page of the README and `docs/`: path from the root, and text. */
async function pages(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  found.set("README.md", await Deno.readTextFile(new URL("README.md", root)));
  const names: string[] = [];
  for await (const entry of Deno.readDir(new URL("docs/", root))) {
    if (entry.isFile && entry.name.endsWith(".md")) names.push(entry.name);
  }
  for (const name of names.sort()) {
    found.set(`docs/${name}`, await Deno.readTextFile(new URL(`docs/${name}`, root)));
  }
  return found;
}

/** The text of every file under `dir` (from the root) whose name ends with one of `endings`. */
async function filesUnder(dir: string, endings: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for await (const entry of Deno.readDir(new URL(dir, root))) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory && entry.name !== "node_modules") {
      for (const [p, text] of await filesUnder(`${path}/`, endings)) found.set(p, text);
    } else if (entry.isFile && endings.some((e) => entry.name.endsWith(e))) {
      found.set(path, await Deno.readTextFile(new URL(path, root)));
    }
  }
  return found;
}

interface Fence {
  /** The fence's info string: `ts`, `sh`, `json`, … (empty without one). */
  lang: string;
  /** The block's text, each line ending with a newline. */
  code: string;
  /** The line of the opening fence, from 1. */
  line: number;
}

/** The fenced code blocks of a page, and its text outside them (fenced lines blanked). */
function split(text: string): { fences: Fence[]; prose: string } {
  const fences: Fence[] = [];
  const prose: string[] = [];
  let open: Fence | null = null;
  for (const [i, line] of text.split("\n").entries()) {
    if (open === null && /^```/.test(line)) {
      open = { lang: line.slice(3).trim(), code: "", line: i + 1 };
      prose.push("");
    } else if (open !== null && /^```\s*$/.test(line)) {
      fences.push(open);
      open = null;
      prose.push("");
    } else if (open !== null) {
      open.code += line + "\n";
      prose.push("");
    } else {
      prose.push(line);
    }
  }
  assert.equal(open, null, "every fence is closed");
  return { fences, prose: prose.join("\n") };
}

/** The inline code spans of prose. */
function codeSpans(prose: string): string[] {
  return [...prose.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)].map((m) =>
    m[2]!.replace(/\s+/g, " ").trim()
  );
}

/** GitHub's anchors for the headings of a page: text lower-cased, punctuation dropped, `-` for spaces. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of split(text).prose.split("\n")) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const words = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link's text stays
      .replace(/`/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(words) ?? 0;
    seen.set(words, n + 1);
    found.add(n === 0 ? words : `${words}-${n}`);
  }
  return found;
}

async function exists(url: URL): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(url);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

Deno.test("the README is a front page: at most 400 lines, opening with the two commands", async () => {
  const readme = (await pages()).get("README.md")!;
  const lines = readme.split("\n").length - (readme.endsWith("\n") ? 1 : 0);
  assert.ok(lines <= 400, `README.md has ${lines} lines`);
  const first = split(readme).fences[0]!;
  assert.equal(first.lang, "sh");
  assert.deepEqual(
    first.code.trim().split("\n").map((l) => l.split("#")[0]!.trim()),
    ["npx -y deno@2 task start", "npx -y deno@2 task test"],
  );
});

Deno.test("every TypeScript snippet of the README and docs/ stands in a file of examples/ or src/", async () => {
  const sources = [
    ...(await filesUnder("examples/", [".ts"])).values(),
    ...(await filesUnder("src/", [".ts"])).values(),
  ];
  let count = 0;
  for (const [page, text] of await pages()) {
    for (const fence of split(text).fences) {
      if (!["ts", "typescript", "js", "javascript", "tsx"].includes(fence.lang)) continue;
      count++;
      assert.ok(
        sources.some((s) => s.includes(fence.code)),
        `${page}:${fence.line}: not in a file of examples/ or src/:\n${fence.code}`,
      );
    }
  }
  assert.ok(count >= 10, `only ${count} snippets found`);
});

Deno.test("every YAML snippet stands in a file of examples/, and every JSON snippet parses", async () => {
  const manifests = [...(await filesUnder("examples/", [".yaml", ".yml"])).values()];
  for (const [page, text] of await pages()) {
    for (const fence of split(text).fences) {
      const where = `${page}:${fence.line}`;
      if (fence.lang === "yaml" || fence.lang === "yml") {
        assert.ok(manifests.some((m) => m.includes(fence.code)), `${where}: not in examples/`);
      } else if (fence.lang === "json") {
        assert.doesNotThrow(() => JSON.parse(fence.code), `${where}: not JSON`);
      }
    }
  }
});

Deno.test("every `deno run` of an example in the README and docs/ is a command of its header", async () => {
  const examples = await filesUnder("examples/", [".ts"]);
  const command = /deno(?:@2)? run ((?:--?[\w-]+(?:=\S*)? )*)(examples\/\S+\.ts)/g;
  let count = 0;
  for (const [page, text] of await pages()) {
    const { fences, prose } = split(text);
    const places = [...fences.map((f) => f.code), ...codeSpans(prose)];
    for (const place of places) {
      for (const m of place.matchAll(command)) {
        count++;
        const [, flags, file] = m;
        const header = examples.get(file!);
        assert.ok(header !== undefined, `${page}: ${file} does not exist`);
        assert.ok(
          header.includes(`deno run ${flags}${file}`),
          `${page}: "deno run ${flags}${file}" is not in the header of ${file}`,
        );
      }
    }
  }
  assert.ok(count >= 5, `only ${count} commands found`);
});

Deno.test("every relative link of the README and docs/ resolves, and its anchor is a heading", async () => {
  const all = await pages();
  let count = 0;
  for (const [page, text] of all) {
    const base = new URL(page, root);
    const prose = split(text).prose.replace(
      /(`+)[^`]+?\1/g,
      (code) => code.replace(/[[\]()]/g, ""),
    );
    for (const m of prose.matchAll(/!?\[(?:[^\][]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
      count++;
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const url = path === "" ? base : new URL(path, base);
      const info = await exists(url);
      assert.ok(info !== null, `${page}: ${target} does not exist`);
      if (anchor === undefined) continue;
      assert.ok(url.pathname.endsWith(".md"), `${page}: ${target}: an anchor into a non-page`);
      const headings = anchors(await Deno.readTextFile(url));
      assert.ok(headings.has(anchor), `${page}: ${target}: no heading "#${anchor}"`);
    }
  }
  assert.ok(count >= 20, `only ${count} links found`);
});

Deno.test("every repository path named in the code of the README and docs/ exists", async () => {
  const path = /(?<![\w./-])((?:examples|src|tests|bench|docs|dev|\.ci)\/[\w./*-]*)/g;
  for (const [page, text] of await pages()) {
    const { fences, prose } = split(text);
    const code = [
      ...codeSpans(prose),
      ...fences.filter((f) => ["sh", "bash", ""].includes(f.lang)).map((f) => f.code),
    ];
    for (const place of code) {
      for (const m of place.matchAll(path)) {
        const named = m[1]!.replace(/[.]+$/, "");
        if (named.includes("*")) continue;
        assert.ok(await exists(new URL(named, root)) !== null, `${page}: ${named} does not exist`);
      }
    }
  }
});
