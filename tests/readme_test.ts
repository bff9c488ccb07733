import assert from "node:assert/strict";

/**
 * The README's Hono and gateway snippets are excerpts of files under
 * `examples/`, which `deno task check` type-checks: so every snippet a
 * newcomer copies compiles and runs.
 */
Deno.test("every TypeScript snippet of the README's Hono section stands in a file of examples/", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const start = readme.indexOf("## Hono middleware");
  const end = readme.indexOf("\n## ", start + 1);
  assert.ok(start >= 0 && end > start);
  const snippets = [...readme.slice(start, end).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
  );
  assert.ok(snippets.length >= 2, "the section has snippets");
  const examples: string[] = [];
  for await (const entry of Deno.readDir(new URL("../examples/", import.meta.url))) {
    if (entry.isFile && entry.name.endsWith(".ts")) {
      examples.push(await Deno.readTextFile(new URL(`../examples/${entry.name}`, import.meta.url)));
    }
  }
  for (const snippet of snippets) {
    assert.ok(examples.some((e) => e.includes(snippet)), `not in examples/:\n${snippet}`);
  }
});
