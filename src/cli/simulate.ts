/**
 * `apf simulate <scenario.json>`: runs a uniform scenario (`docs/semantics.md` §10.1) on a
 * simulated clock and prints what each client got, as JSON.
 *
 * @module
 */

import { runConfigScenario } from "../sim/config_run.ts";
import { configScenarioFromJson } from "../sim/config_scenario.ts";
import type { ConfigScenario } from "../sim/config_types.ts";
import { runScenario } from "../sim/run.ts";
import { ScenarioError, scenarioFromJson } from "../sim/scenario.ts";
import type { Scenario } from "../sim/types.ts";
import { helpText, parseArgs } from "./args.ts";
import { loadEffectiveFiles } from "./effective_input.ts";
import type { CliIO, ExitCode } from "./io.ts";

/** Usage line of the command. */
export const SIMULATE_USAGE = "apf simulate <scenario.json|->";

const HELP = helpText(
  SIMULATE_USAGE,
  `
Runs a scenario of closed-loop clients on a simulated clock and prints the
result as JSON. Use - to read the scenario from standard input. The scenario
file may be at most 16 MiB.

A uniform scenario (no "config" key) runs against one priority level; omitted
fields take their defaults (Kubernetes' TestUniformFlowsHandSize1 with one
client). A scenario with a "config" key runs HTTP-like requests through the
whole configuration: the classifier, the work estimator and the coordinator
with borrowing; "config" lists manifests relative to the scenario file ([] or
null: the built-in configuration only). There, "upstream" sends executed calls
to a simulated pool of workers, and "serverConcurrencyLimit": "auto" learns
the limit from their time in it (see docs/cli.md).
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    io.stderr(`apf simulate: ${name}: invalid JSON: ${e instanceof Error ? e.message : e}\n`);
    return 1;
  }
  let scenario: Scenario | ConfigScenario;
  const whole = typeof value === "object" && value !== null && Object.hasOwn(value, "config");
  try {
    scenario = whole ? configScenarioFromJson(value) : scenarioFromJson(value);
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    io.stderr(`apf simulate: ${name}: ${e.message}\n`);
    return 1;
  }
  if (!("config" in scenario)) {
    io.stdout(`${JSON.stringify(runScenario(scenario), null, 2)}\n`);
    return 0;
  }
  const base = path === "-" ? "" : path.slice(0, path.lastIndexOf("/") + 1);
  const loaded = await loadEffectiveFiles(
    scenario.config.map((p) => (p.startsWith("/") ? p : base + p)),
    io,
    {
      mandatoryOnly: scenario.mandatoryOnly,
      serverConcurrencyLimit: scenario.serverConcurrencyLimit,
    },
  );
  if (!loaded.ok) return loaded.code;
  try {
    const result = await runConfigScenario(scenario, loaded.effective);
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    io.stderr(`apf simulate: ${name}: ${e.message}\n`);
    return 1;
  }
}
