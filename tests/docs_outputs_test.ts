/**
 * What the README and the guides show the `apf` command printing, it prints:
 * each shown command is run as shown (ports moved to free ones) and its
 * output compared with the lines shown under it. The quick start's flood gets
 * its 429s.
 */

import assert from "node:assert/strict";
import { sleep } from "./_helpers/real_time.ts";

const root = new URL("../", import.meta.url);

/** The `deno task apf` command line of deno.json, as arguments of this Deno. */
async function apfTask(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))) as {
    tasks: Record<string, string>;
  };
  const [deno, ...args] = config.tasks.apf!.split(/\s+/);
  assert.equal(deno, "deno");
  return args;
}

interface Shown {
  /** The command's arguments after `task apf`. */
  args: string[];
  /** The `# ` lines under it, without the `# `. */
  output: string[];
}

/** The shell blocks of `page` running `task apf <command>`, with the output lines shown under each. */
async function shown(page: string, command: string): Promise<Shown[]> {
  const text = await Deno.readTextFile(new URL(page, root));
  const found: Shown[] = [];
  for (const m of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = m[1]!.replace(/\\\n\s*/g, "").split("\n");
    for (const [i, line] of lines.entries()) {
      const run = new RegExp(`task apf ${command} (.*)$`).exec(line);
      if (run === null || run[1]!.includes("#")) continue;
      const output: string[] = [];
      for (const next of lines.slice(i + 1)) {
        if (!next.startsWith("# ")) break;
        output.push(next.slice(2));
      }
      if (output.length > 0) {
        found.push({ args: [command, ...run[1]!.trim().split(/\s+/)], output });
      }
    }
  }
  return found;
}

/** `http://127.0.0.1:<port>` and `ws://…` of a listener (not the upstream's 3000) as `:PORT`. */
function normalize(line: string): string {
  return line.replace(
    /((?:http|ws):\/\/127\.0\.0\.1):(\d+)/g,
    (all, host, port) => port === "3000" ? all : `${host}:PORT`,
  );
}

/** Runs `apf <args>` with its listeners on free ports until it has printed `lines` lines. */
async function firstLines(args: string[], lines: number): Promise<string[]> {
  const moved = args.map((a, i) =>
    ["--listen", "--admin-listen"].includes(args[i - 1] ?? "") ? "127.0.0.1:0" : a
  );
  if (!moved.includes("--listen")) moved.push("--listen", "127.0.0.1:0");
  const child = new Deno.Command(Deno.execPath(), {
    args: [...await apfTask(), ...moved],
    cwd: root,
    env: { NO_COLOR: "1", INIT_CWD: root.pathname },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const reading = (async () => {
    for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) out += text;
  })();
  const errors = new Response(child.stderr).text();
  try {
    for (let i = 0; i < 1500 && out.split("\n").length <= lines; i++) await sleep(20);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reading;
  }
  assert.ok(out.split("\n").length > lines, `apf ${moved.join(" ")}:\n${out}${await errors}`);
  return out.split("\n").slice(0, lines);
}

for (
  const [page, command] of [
    ["README.md", "serve"],
    ["docs/gateway.md", "serve"],
    ["docs/sharing-seats.md", "coordinator"],
  ] as const
) {
  Deno.test(`${page}: apf ${command} prints the lines shown`, async () => {
    const examples = await shown(page, command);
    assert.ok(examples.length >= 1, `${page} shows apf ${command} with its output`);
    for (const { args, output } of examples) {
      const printed = await firstLines(args, output.length);
      assert.deepEqual(printed.map(normalize), output.map(normalize), args.join(" "));
    }
  });
}

Deno.test("docs/cli.md: apf classify prints the line shown", async () => {
  const text = await Deno.readTextFile(new URL("docs/cli.md", root));
  const m = /echo '(.*)' \\\n\s*\| deno task apf classify\n((?:# .*\n)+)/.exec(text);
  assert.ok(m !== null, "docs/cli.md shows apf classify");
  const child = new Deno.Command(Deno.execPath(), {
    args: [...await apfTask(), "classify"],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(m[1]! + "\n"));
  await writer.close();
  const printed = JSON.parse(new TextDecoder().decode((await child.output()).stdout));
  const expected = JSON.parse(
    m[2]!.split("\n").map((l) => l.replace(/^#\s*/, "")).join("").replace("{...}", "null"),
  );
  for (const [key, value] of Object.entries(expected)) {
    if (value !== null) assert.deepEqual(printed[key], value, key);
  }
});

Deno.test("README.md: the quick start's flood of /slow gets 429s", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const flood = /npx -y deno@2 eval '(.*)'\n# (\d+) × 200, (\d+) × 429\n/.exec(readme);
  assert.ok(flood !== null, "the README shows the flood and what it prints");
  const port = /fetch\("http:\/\/127\.0\.0\.1:(\d+)\/slow"\)/.exec(flood[1]!)?.[1];
  assert.equal(port, "8000", "the flood goes where examples/quick_start.ts listens");
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", new URL("examples/quick_start.ts", root).pathname],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let seen = "";
  const reading = Promise.all([server.stdout, server.stderr].map(async (stream) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) seen += text;
  }));
  try {
    for (let i = 0; i < 500 && !/Listening on|AddrInUse|error/i.test(seen); i++) await sleep(20);
    if (/AddrInUse/.test(seen)) {
      console.warn("port 8000 is taken: the flood is not checked");
      return;
    }
    assert.match(seen, /Listening on/, seen);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", flood[1]!],
      env: { NO_COLOR: "1" },
      stdout: "piped",
    }).output();
    const got = /^(\d+) × 200, (\d+) × 429$/.exec(new TextDecoder().decode(out.stdout).trim());
    assert.ok(got !== null, new TextDecoder().decode(out.stdout));
    const [served, rejected] = [Number(got[1]), Number(got[2])];
    assert.equal(served + rejected, Number(flood[2]) + Number(flood[3]));
    // 56 seats and 300 places in the queues: at least that many are served, and the rest get 429
    // (more are served only if the machine was too slow to send the flood within a second).
    assert.ok(served >= Number(flood[2]) && rejected > 0, `${served} × 200, ${rejected} × 429`);
  } finally {
    server.kill("SIGTERM");
    await server.status;
    await reading;
  }
});
