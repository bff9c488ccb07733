/**
 * `apf validate <file>...`: checks manifests as a kube-apiserver would.
 *
 * @module
 */

import { parseConfiguration, resolveConfiguration } from "../config/mod.ts";
import { helpText, parseArgs } from "./args.ts";
import { STDIN_TWICE } from "./effective_input.ts";
import type { CliIO, ExitCode } from "./io.ts";
import { readManifests } from "./read_manifests.ts";

/** Usage line of the command. */
export const VALIDATE_USAGE = "apf validate <file>...   (use - for standard input)";

const HELP = helpText(
  VALIDATE_USAGE,
  `
Checks FlowSchema and PriorityLevelConfiguration manifests (YAML or JSON, one
or more documents, Lists) as a kube-apiserver would; names must be unique
across the files. Exits 0 when valid, 1 when invalid (every problem is
printed), 2 on a usage error or an unreadable input. Each input may be at
most 16 MiB.
`,
);

/**
 * Validates the files together (names must be unique across them). Prints a
 * one-line summary and exits 0 when valid; prints every error and exits 1 when
 * not; exits 2 on a usage error or an unreadable file. FlowSchemas that
 * reference a missing level are reported as warnings: Kubernetes accepts them.
 */
export async function validateCommand(args: readonly string[], io: CliIO): Promise<ExitCode> {
  const parsed = parseArgs(args, {});
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(HELP);
    return 0;
  }
  if (!parsed.ok || parsed.positionals.length === 0) {
    io.stderr(`${parsed.ok ? "no file given" : parsed.error}\nusage: ${VALIDATE_USAGE}\n`);
    return 2;
  }
  if (parsed.positionals.filter((p) => p === "-").length > 1) {
    io.stderr(`${STDIN_TWICE}\nusage: ${VALIDATE_USAGE}\n`);
    return 2;
  }
  const read = await readManifests(parsed.positionals, io);
  if (!read.ok) {
    io.stderr(`${read.error}\n`);
    return 2;
  }
  const result = parseConfiguration({ manifests: read.sources });
  if (!result.ok) {
    io.stdout(result.errors.map((e) => `${e}\n`).join(""));
    const n = result.errors.length;
    io.stderr(`invalid: ${n} error${n === 1 ? "" : "s"}\n`);
    return 1;
  }
  const { flowSchemas, priorityLevels } = result.configuration;
  const effective = resolveConfiguration(result.configuration);
  for (const fs of effective.dangling) {
    io.stderr(
      `warning: FlowSchema/${fs.name}: spec.priorityLevelConfiguration.name: ` +
        `no PriorityLevelConfiguration named ${
          JSON.stringify(fs.priorityLevel)
        }; the schema matches nothing\n`,
    );
  }
  const files = read.sources.length;
  io.stdout(
    `valid: ${files} file${files === 1 ? "" : "s"}, ${flowSchemas.length} FlowSchemas, ` +
      `${priorityLevels.length} PriorityLevelConfigurations\n`,
  );
  return 0;
}
