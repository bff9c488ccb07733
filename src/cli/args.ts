/**
 * A small, strict command-line option parser: `--flag`, `--name value`,
 * `--name=value`, repeated options, and `--` to end options. Every command
 * accepts `--help` (or `-h`), reported as the boolean `help`.
 *
 * @module
 */

/** Which options a command accepts. */
export interface ArgSpec {
  /** Options without a value. */
  booleans?: readonly string[];
  /** Options with a value; repeating them collects every value. */
  strings?: readonly string[];
}

/** Parsed arguments, or the reason they are wrong. */
export type ParsedArgs =
  | { ok: true; booleans: Set<string>; strings: Map<string, string[]>; positionals: string[] }
  | { ok: false; error: string };

/**
 * Parses `args` against `spec`; unknown options and missing values are errors.
 * `--help` and `-h` are always accepted and set the boolean `help`.
 */
export function parseArgs(args: readonly string[], spec: ArgSpec): ParsedArgs {
  const booleans = new Set<string>();
  const strings = new Map<string, string[]>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      for (let j = i + 1; j < args.length; j++) positionals.push(args[j]!);
      break;
    }
    if (arg === "-h") {
      booleans.add("help");
      continue;
    }
    if (!arg.startsWith("--") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (name === "help" || spec.booleans?.includes(name)) {
      if (eq !== -1) return { ok: false, error: `option --${name} takes no value` };
      booleans.add(name);
    } else if (spec.strings?.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined) return { ok: false, error: `option --${name} needs a value` };
      strings.set(name, [...(strings.get(name) ?? []), value]);
    } else {
      return { ok: false, error: `unknown option --${name}` };
    }
  }
  return { ok: true, booleans, strings, positionals };
}

/** The text `--help` prints: the usage line, then what the command does. */
export function helpText(usage: string, description: string): string {
  return `usage: ${usage}\n\n${description.trim()}\n`;
}
