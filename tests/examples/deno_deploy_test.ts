/**
 * `examples/deno_deploy.ts` starts with the command its doc comment gives,
 * and with no more permissions than it names.
 */

import assert from "node:assert/strict";
import { sleep } from "../_helpers/real_time.ts";

const file = new URL("../../examples/deno_deploy.ts", import.meta.url);

Deno.test("examples/deno_deploy.ts runs with its documented command", async () => {
  const text = await Deno.readTextFile(file);
  const documented = /^ \* {3}deno run (.*?) examples\/deno_deploy\.ts/m.exec(text);
  assert.ok(documented !== null, "the doc comment gives a deno run command");
  const flags = documented[1]!.split(/\s+/);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, file.pathname],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let seen = "";
  const read = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) seen += text;
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  try {
    // Deno.serve says where it listens; port 8000 being taken is not the example's failure
    // (its configuration was parsed by then).
    for (let i = 0; i < 300 && !/Listening on|AddrInUse|error/i.test(seen); i++) {
      await sleep(20);
    }
    assert.match(seen, /Listening on|AddrInUse/, seen);
    assert.doesNotMatch(seen, /NotCapable|YamlEnvironmentError/, seen);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // It exited.
    }
    await child.status;
    await reading;
  }
});
