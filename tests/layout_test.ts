/**
 * The rules of `docs/architecture.md`, "Rooms", checked on every import of
 * `src/`: a file whose name starts with `_` is private to its folder, and a
 * room imports only from the rooms listed before it.
 */

import assert from "node:assert/strict";

const SRC = new URL("../src/", import.meta.url);

/** The rooms from the lowest to the highest, as docs/architecture.md lists them. */
const ROOMS = [
  "_shared",
  "config",
  "fairqueuing",
  "adaptive",
  "classify",
  "estimate",
  "observe",
  "coordinator",
  "protocol",
  "remote",
  "server",
  "budgets",
  "hono",
  "deno",
  "redis",
  "cloudflare",
  "sim",
  "cli",
];

interface Import {
  /** The importing file, relative to `src/`. */
  from: string;
  /** The imported file, relative to `src/`. */
  to: string;
}

async function sourceFiles(dir: URL, prefix = ""): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) {
      files.push(...await sourceFiles(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`));
    } else if (entry.name.endsWith(".ts")) {
      files.push(prefix + entry.name);
    }
  }
  return files;
}

async function relativeImports(): Promise<Import[]> {
  const imports: Import[] = [];
  const specifier = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/g;
  for (const from of await sourceFiles(SRC)) {
    const text = await Deno.readTextFile(new URL(from, SRC));
    for (const m of text.matchAll(specifier)) {
      const target = new URL(m[1]!, new URL(from, SRC));
      if (!target.href.startsWith(SRC.href)) continue; // the root mod.ts re-exports, not a room
      imports.push({ from, to: target.href.slice(SRC.href.length) });
    }
  }
  return imports;
}

const folderOf = (path: string) => path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
const roomOf = (path: string) => path.split("/")[0]!;
const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

Deno.test("layout: the walk finds the imports of src/", async () => {
  const imports = await relativeImports();
  assert.ok(imports.length > 300, `found ${imports.length} imports`);
  assert.ok(
    imports.some((i) => i.from === "hono/middleware.ts" && roomOf(i.to) === "coordinator"),
  );
});

Deno.test("layout: no file imports a _ file of another folder (_shared excepted)", async () => {
  const crossing = (await relativeImports()).filter((i) =>
    baseName(i.to).startsWith("_") && folderOf(i.to) !== folderOf(i.from) &&
    roomOf(i.to) !== "_shared"
  );
  assert.deepEqual(crossing.map((i) => `${i.from} -> ${i.to}`), []);
});

Deno.test("layout: a room imports only from itself and the rooms before it", async () => {
  const upward = (await relativeImports()).filter((i) => {
    const from = ROOMS.indexOf(roomOf(i.from));
    const to = ROOMS.indexOf(roomOf(i.to));
    return from === -1 || to === -1 || to > from;
  });
  assert.deepEqual(upward.map((i) => `${i.from} -> ${i.to}`), []);
});

Deno.test("layout: config and fairqueuing import nothing of ours but _shared", async () => {
  const imports = (await relativeImports()).filter((i) =>
    ["config", "fairqueuing"].includes(roomOf(i.from)) && roomOf(i.to) !== roomOf(i.from) &&
    roomOf(i.to) !== "_shared"
  );
  assert.deepEqual(imports.map((i) => `${i.from} -> ${i.to}`), []);
});

Deno.test("layout: adaptive imports nothing of ours but _shared and the clock", async () => {
  const imports = (await relativeImports()).filter((i) =>
    roomOf(i.from) === "adaptive" && roomOf(i.to) !== "adaptive" && roomOf(i.to) !== "_shared" &&
    i.to !== "fairqueuing/clock.ts"
  );
  assert.deepEqual(imports.map((i) => `${i.from} -> ${i.to}`), []);
});
