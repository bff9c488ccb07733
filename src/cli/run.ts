/**
 * The `apf` command: dispatch to subcommands.
 *
 * @module
 */

import { CLASSIFY_USAGE, classifyCommand } from "./classify.ts";
import { CONFIG_PRINT_HELP, CONFIG_PRINT_USAGE, configPrintCommand } from "./config_print.ts";
import { DEMO_USAGE, demoCommand } from "./demo.ts";
import { type CliIO, type ExitCode, OutputClosedError } from "./io.ts";
import { COORDINATOR_USAGE, coordinatorCommand } from "./coordinator.ts";
import { SERVE_USAGE, serveCommand } from "./serve.ts";
import { SIMULATE_USAGE, simulateCommand } from "./simulate.ts";
import { VALIDATE_USAGE, validateCommand } from "./validate.ts";

/** The version printed by `apf version`. */
export const VERSION = "0.1.0";

const USAGE = `apf: Kubernetes API Priority and Fairness for edge and serverless apps

usage:
  ${VALIDATE_USAGE}
  ${CONFIG_PRINT_USAGE}
  ${CLASSIFY_USAGE}
  ${SIMULATE_USAGE}
  ${SERVE_USAGE}
  ${COORDINATOR_USAGE}
  ${DEMO_USAGE}
  apf version
  apf help
`;

/**
 * Runs the `apf` command line with `args` (without the program name) and
 * returns the exit status.
 *
 * @example
 * ```ts
 * import { createDenoIO, runCli } from "@apf/edge/cli";
 * const code = await runCli(["config", "print", "--json"], createDenoIO());
 * ```
 */
export async function runCli(args: readonly string[], io: CliIO): Promise<ExitCode> {
  try {
    return await dispatch(args, io);
  } catch (e) {
    // The reader of our output went away (`apf config print | head`): nothing is wrong with
    // the command, and nobody is left to tell. Exit quietly and successfully, like ripgrep.
    if (e instanceof OutputClosedError) return 0;
    // Host trouble (for example a missing permission) is a usage problem, not a crash.
    io.stderr(`apf: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}

async function dispatch(args: readonly string[], io: CliIO): Promise<ExitCode> {
  const [command, ...rest] = args;
  switch (command) {
    case "validate":
      return await validateCommand(rest, io);
    case "config":
      if (rest[0] === "print") return await configPrintCommand(rest.slice(1), io);
      if (rest[0] === "--help" || rest[0] === "-h") {
        io.stdout(CONFIG_PRINT_HELP);
        return 0;
      }
      io.stderr(
        `unknown config command ${JSON.stringify(rest[0] ?? "")}\nusage: ${CONFIG_PRINT_USAGE}\n`,
      );
      return 2;
    case "classify":
      return await classifyCommand(rest, io);
    case "simulate":
      return await simulateCommand(rest, io);
    case "serve":
      return await serveCommand(rest, io);
    case "coordinator":
      return await coordinatorCommand(rest, io);
    case "demo":
      return await demoCommand(rest, io);
    case "version":
    case "--version":
      io.stdout(`apf ${VERSION}\n`);
      return 0;
    case "help":
    case "--help":
    case "-h":
      io.stdout(USAGE);
      return 0;
    default:
      io.stderr(
        `${
          command === undefined ? "no command given" : `unknown command ${JSON.stringify(command)}`
        }\n\n${USAGE}`,
      );
      return 2;
  }
}
