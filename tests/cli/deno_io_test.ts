import assert from "node:assert/strict";
import { splitLines } from "../../src/cli/_streams.ts";
import { createDenoIO, OutputClosedError, runCli } from "../../src/cli/mod.ts";
import type { InputLine, SyncWriter } from "../../src/cli/mod.ts";
import { runOnDeno } from "../_helpers/cli.ts";

const fixtures = new URL("./fixtures/", import.meta.url).pathname.replace(/\/$/, "");
const MiB = 1024 * 1024;

/** A stream of `chunk` repeated `times` times (forever by default), counting the bytes pulled. */
function repeating(chunk: Uint8Array, times = Infinity) {
  const stats = { pulled: 0, cancelled: false };
  let n = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (n++ >= times) return controller.close();
      stats.pulled += chunk.length;
      controller.enqueue(chunk.slice());
    },
    cancel() {
      stats.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, stats };
}

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((c) => encoder.encode(c)));
}

Deno.test("apf validate /dev/zero stops at the 16 MiB input limit and exits 2", async () => {
  const r = await runOnDeno(["validate", "/dev/zero"]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "cannot read /dev/zero: larger than 16 MiB\n");
});

Deno.test("a directory is refused with exit 2", async () => {
  const r = await runOnDeno(["validate", fixtures]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, `cannot read ${fixtures}: is a directory\n`);
  const s = await runOnDeno(["simulate", fixtures]);
  assert.equal(s.code, 2);
  assert.equal(s.stderr, `apf simulate: cannot read ${fixtures}: is a directory\n`);
});

Deno.test("the input limit is the host's: files and standard input", async () => {
  const small = createDenoIO({ maxInputBytes: 10 });
  await assert.rejects(
    small.readTextFile(`${fixtures}/configmap.yaml`),
    /larger than 10 bytes$/,
  );
  const text = await createDenoIO({ maxInputBytes: 64 * 1024 }).readTextFile(
    `${fixtures}/configmap.yaml`,
  );
  assert.match(text, /kind: ConfigMap/);

  // Endless standard input (`yes 'a: b' | apf validate -`): reading stops just past the limit.
  const { stream, stats } = repeating(new TextEncoder().encode("a: b\n".repeat(1000)));
  const r = await runOnDeno(["validate", "-"], { stdin: () => stream, maxInputBytes: MiB });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "cannot read -: larger than 1 MiB\n");
  assert.ok(stats.pulled <= MiB + 5000, `pulled ${stats.pulled} bytes`);
  assert.ok(stats.cancelled);
  assert.throws(() => createDenoIO({ maxInputBytes: -1 }), /maxInputBytes .* got -1/);
});

Deno.test("standard input given twice is a usage error", async () => {
  const stdin = () => streamOf("kind: FlowSchema\n");
  for (
    const args of [
      ["validate", "-", "-"],
      ["config", "print", "--config", "-", "--config=-"],
      ["classify", "--config", "-"],
    ]
  ) {
    const r = await runOnDeno(args, { stdin });
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /standard input|--config - cannot be used/, args.join(" "));
    assert.match(r.stderr, /\nusage: apf /, args.join(" "));
  }
});

Deno.test("relative paths resolve against the host's directory (INIT_CWD)", async () => {
  const r = await runOnDeno(["validate", "configmap.yaml"], { cwd: fixtures });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^configmap\.yaml: document 1, line 1: unsupported kind "ConfigMap"/);
  const abs = await runOnDeno(["validate", `${fixtures}/configmap.yaml`], { cwd: "/nonexistent" });
  assert.equal(abs.code, 1, abs.stderr);
});

Deno.test("stdout writes every byte across partial writes; a closed stdout exits 0", async () => {
  const written: number[] = [];
  const trickle: SyncWriter = {
    writeSync(bytes) {
      const n = Math.min(3, bytes.length);
      written.push(...bytes.subarray(0, n));
      return n;
    },
  };
  const io = createDenoIO({ stdout: trickle });
  io.stdout("héllo, world\n");
  assert.equal(new TextDecoder().decode(new Uint8Array(written)), "héllo, world\n");

  let errors = "";
  const closed = createDenoIO({
    stdout: {
      writeSync() {
        throw new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
      },
    },
    stderr: { writeSync: (b) => (errors += new TextDecoder().decode(b), b.length) },
  });
  assert.throws(() => closed.stdout("x"), OutputClosedError);
  assert.equal(await runCli(["config", "print"], closed), 0);
  assert.equal(errors, "");
});

async function collect(lines: AsyncIterable<InputLine>): Promise<InputLine[]> {
  const out: InputLine[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

Deno.test("splitLines splits across chunks, strips \\r\\n, keeps a last unterminated line", async () => {
  assert.deepEqual(
    await collect(splitLines(streamOf("a\r\nb", "c\n", "\n", "é", "\nlast\r"), 10)),
    [
      "a",
      "bc",
      "",
      "é",
      "last\r",
    ],
  );
  // One byte at a time: the same lines.
  const text = "one\ntwo\r\nthree";
  const bytes = [...new TextEncoder().encode(text)].map((b) => String.fromCharCode(b));
  const oneByOne = ReadableStream.from(bytes.map((b) => new Uint8Array([b.charCodeAt(0)])));
  assert.deepEqual(await collect(splitLines(oneByOne, 10)), ["one", "two", "three"]);
  // Exactly at the limit is fine (the \r does not count); one byte more is too long.
  assert.deepEqual(
    await collect(splitLines(streamOf("12345\r", "\n123456\nok"), 5)),
    ["12345", { tooLong: 5 }, "ok"],
  );
});

Deno.test("splitLines reports an overlong line as soon as it passes the limit", async () => {
  // 1 GiB without a newline would be pulled forever; the marker must come first.
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  const { stream, stats } = repeating(chunk, 16 * 1024);
  const lines = splitLines(stream, 64 * 1024);
  const first = await lines.next();
  assert.deepEqual(first.value, { tooLong: 64 * 1024 });
  assert.ok(stats.pulled <= 2 * chunk.length, `pulled ${stats.pulled} bytes`);
  await lines.return(undefined);
  assert.ok(stats.cancelled);
});

Deno.test("apf classify answers an overlong line with an error line and goes on", async () => {
  const long = JSON.stringify({ method: "GET", path: "/" + "x".repeat(70 * 1024) });
  const r = await runOnDeno(["classify"], {
    stdin: () =>
      streamOf(long.slice(0, 1000), long.slice(1000), '\n{"method":"GET","path":"/version"}\n'),
  });
  assert.equal(r.code, 0, r.stderr);
  const [error, ok, ...rest] = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(error, { error: "line is longer than 64 KiB" });
  assert.equal(ok.flowSchema, "global-default");
  assert.deepEqual(rest, []);
});
