/**
 * `deno doc --lint` over every entry point of deno.json together, failing on
 * any problem with our own types. A public signature that names a type of
 * Hono or of the Workers runtime (declared for us in
 * `src/cloudflare/_workers_types.d.ts`) is not ours to document, so a
 * `private-type-ref` to a type that no source file of ours declares is
 * reported as a note, not an error.
 *
 * Run: `deno run --allow-read --allow-run dev/doc_lint.ts`
 */

const root = new URL("../", import.meta.url);
const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))) as {
  exports: Record<string, string>;
};
const entries = Object.values(config.exports);

/** Names declared by a source file of ours (the Workers runtime's declarations excepted). */
async function ownNames(dir: URL): Promise<Set<string>> {
  const names = new Set<string>();
  const declaration =
    /^\s*(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:interface|type|class|enum|const|let|function)\s+([A-Za-z_$][\w$]*)/gm;
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) {
      for (const name of await ownNames(url)) names.add(name);
    } else if (entry.name.endsWith(".ts") && entry.name !== "_workers_types.d.ts") {
      for (const m of (await Deno.readTextFile(url)).matchAll(declaration)) names.add(m[1]!);
    }
  }
  return names;
}

const own = await ownNames(new URL("src/", root));
const output = await new Deno.Command(Deno.execPath(), {
  args: ["doc", "--lint", ...entries],
  cwd: root,
  env: { NO_COLOR: "1" },
  stdout: "piped",
  stderr: "piped",
}).output();
const text = new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout);

// Each problem starts with "error[kind]: message" and runs to the next one.
const problems = text.split(/^(?=error\[)/m).filter((p) => p.startsWith("error["));
const errors: string[] = [];
const theirs = new Set<string>();
for (const problem of problems) {
  const foreign = /^error\[private-type-ref\]: public type '.*' references private type '([^']+)'/
    .exec(problem);
  if (foreign !== null && !own.has(foreign[1]!)) theirs.add(foreign[1]!);
  else errors.push(problem.trimEnd());
}
if (problems.length === 0 && !output.success) errors.push(text.trim());

if (theirs.size > 0) {
  console.log(
    `doc lint: types of Hono and the Workers runtime left to them: ${
      [...theirs].sort().join(", ")
    }`,
  );
}
if (errors.length > 0) {
  console.error(errors.join("\n\n"));
  console.error(`doc lint: ${errors.length} problem(s) in ${entries.join(" ")}`);
  Deno.exit(1);
}
console.log(`doc lint: ${entries.length} entry points, no problem with our own types`);
