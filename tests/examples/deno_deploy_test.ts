/**
 * `examples/deno_deploy.ts` starts with the commands its doc comment gives,
 * and with no more permissions than they name: alone, and as two processes
 * sharing the seats through one KV file.
 */

import assert from "node:assert/strict";
import { sleep } from "../_helpers/real_time.ts";

const file = new URL("../../examples/deno_deploy.ts", import.meta.url);

/** Runs `deno run <flags> <file>` with `env`; resolves its output once it listens (or failed). */
async function start(flags: string[], env: Record<string, string> = {}) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, file.pathname],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  const out = { seen: "" };
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) out.seen += text;
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  for (let i = 0; i < 300 && !/Listening on|AddrInUse|error/i.test(out.seen); i++) {
    await sleep(20);
  }
  return {
    out,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch {
        // It exited.
      }
      await child.status;
      await reading;
    },
  };
}

Deno.test("examples/deno_deploy.ts runs with its documented command", async () => {
  const text = await Deno.readTextFile(file);
  const documented = /^ \* {3}deno run (.*?) examples\/deno_deploy\.ts/m.exec(text);
  assert.ok(documented !== null, "the doc comment gives a deno run command");
  await using child = await start(documented[1]!.split(/\s+/));
  // Deno.serve says where it listens; port 8000 being taken is not the example's failure
  // (its configuration was parsed by then).
  assert.match(child.out.seen, /Listening on|AddrInUse/, child.out.seen);
  assert.doesNotMatch(child.out.seen, /NotCapable|YamlEnvironmentError/, child.out.seen);
});

Deno.test("examples/deno_deploy.ts: two processes on one KV file, as its header shows, both serve", async () => {
  const text = await Deno.readTextFile(file);
  const lines = [
    ...text.matchAll(
      /^ \* {3}PORT=(\d+) APF_KV_PATH=(\S+) deno run (.*?) examples\/deno_deploy\.ts$/gm,
    ),
  ];
  assert.equal(lines.length, 2, "the header shows two processes");
  const dir = await Deno.makeTempDir({ prefix: "apf-deploy-" });
  try {
    // The header's file and ports, moved to a fresh folder and free ports (the flags as shown, but
    // for the folder the file is in).
    const ports = [freePort(), freePort()];
    const processes = await Promise.all(
      lines.map(([, , path, flags], i) =>
        start(flags!.replaceAll("/tmp", dir).split(/\s+/), {
          PORT: String(ports[i]),
          APF_KV_PATH: path!.replace("/tmp", dir),
        })
      ),
    );
    try {
      for (const [i, p] of processes.entries()) {
        assert.match(p.out.seen, /Listening on/, p.out.seen);
        const res = await fetch(`http://127.0.0.1:${ports[i]}/`);
        assert.equal(res.status, 200);
        assert.equal(await res.text(), "Hello from visitors!\n");
      }
    } finally {
      for (const p of processes) await p[Symbol.asyncDispose]();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
