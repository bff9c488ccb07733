/**
 * `apf simulate <scenario.json>`: runs a uniform scenario (spec §10.1) on a
 * simulated clock and prints what each client got, as JSON.
 *
 * @module
 */

import { runScenario } from "../sim/run.ts";
import { parseScenario, ScenarioError } from "../sim/scenario.ts";
import type { Scenario } from "../sim/types.ts";
import { helpText, parseArgs } from "./args.ts";
import type { CliIO, ExitCode } from "./io.ts";

/** Usage line of the command. */
export const SIMULATE_USAGE = "apf simulate <scenario.json|->";

const HELP = helpText(
  SIMULATE_USAGE,
  `
Runs a uniform scenario of closed-loop clients against one simulated priority
level and prints the result as JSON. Use - to read the scenario from standard
input. Omitted scenario fields take their defaults (Kubernetes'
TestUniformFlowsHandSize1 with one client). The scenario file may be at most
16 MiB.
`,
);

/**
 * Reads the scenario named by the single positional argument (`-` is standard
 * input), runs it and prints the result as indented JSON. Exits 0 on success,
 * 1 on an invalid scenario, 2 on a usage error or an unreadable file.
 *
 * @example
 * ```ts
 * import { runCli } from "@apf/edge/cli";
 * const code = await runCli(["simulate", "scenario.json"], {
 *   readTextFile: (path) => Deno.readTextFile(path),
 *   stdinLines: async function* () {},
 *   stdout: (text) => console.log(text),
 *   stderr: (text) => console.error(text),
 * });
 * ```
 */
export async function simulateCommand(args: readonly string[], io: CliIO): Promise<ExitCode> {
  const parsed = parseArgs(args, {});
  if (parsed.ok && parsed.booleans.has("help")) {
    io.stdout(HELP);
    return 0;
  }
  if (!parsed.ok || parsed.positionals.length !== 1) {
    const problem = !parsed.ok
      ? parsed.error
      : parsed.positionals.length === 0
      ? "no scenario file given"
      : `expected one scenario file, got ${parsed.positionals.length}`;
    io.stderr(`apf simulate: ${problem}\nusage: ${SIMULATE_USAGE}\n`);
    return 2;
  }
  const path = parsed.positionals[0]!;
  const name = path === "-" ? "<stdin>" : path;
  let text: string;
  try {
    text = await io.readTextFile(path);
  } catch (e) {
    io.stderr(`apf simulate: cannot read ${path}: ${e instanceof Error ? e.message : e}\n`);
    return 2;
  }
  let scenario: Scenario;
  try {
    scenario = parseScenario(text);
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    io.stderr(`apf simulate: ${name}: ${e.message}\n`);
    return 1;
  }
  const result = runScenario(scenario);
  io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}
