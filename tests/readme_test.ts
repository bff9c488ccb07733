import assert from "node:assert/strict";

/** Every `.ts` file under `examples/`, read. */
async function exampleFiles(dir = new URL("../examples/", import.meta.url)): Promise<string[]> {
  const texts: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory && entry.name !== "node_modules") {
      texts.push(...await exampleFiles(new URL(`${entry.name}/`, dir)));
    } else if (entry.isFile && entry.name.endsWith(".ts")) {
      texts.push(await Deno.readTextFile(new URL(entry.name, dir)));
    }
  }
  return texts;
}

/**
 * The README's Hono and Cloudflare snippets are excerpts of files under
 * `examples/`, which `deno task check` type-checks: so every snippet a
 * newcomer copies compiles and runs.
 */
for (const section of ["## Hono middleware", "## Cloudflare Workers"]) {
  Deno.test(`every TypeScript snippet of the README's "${section}" stands in a file of examples/`, async () => {
    const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
    const start = readme.indexOf(section);
    const end = readme.indexOf("\n## ", start + 1);
    assert.ok(start >= 0 && end > start);
    const snippets = [...readme.slice(start, end).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
      m[1]!
    );
    assert.ok(snippets.length >= 1, "the section has snippets");
    const examples = await exampleFiles();
    for (const snippet of snippets) {
      assert.ok(examples.some((e) => e.includes(snippet)), `not in examples/:\n${snippet}`);
    }
  });
}
