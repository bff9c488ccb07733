/**
 * Capturing what code under test prints to the console, so that expected
 * errors and warnings are asserted rather than left in the test output.
 */

/** The console methods a test can capture. */
export type ConsoleMethod = "error" | "warn" | "info" | "log" | "debug";

/** Calls captured by {@linkcode captureConsole}; disposing it restores the console. */
export interface CapturedConsole extends Disposable {
  /** The arguments of each call, in order. */
  readonly calls: unknown[][];
  /** Each call's arguments as one line of text, as the console would print them (roughly). */
  lines(): string[];
}

/**
 * Replaces `console[method]` with a recorder until the result is disposed:
 * `using logged = captureConsole("error")`.
 */
export function captureConsole(method: ConsoleMethod): CapturedConsole {
  const original = console[method];
  const calls: unknown[][] = [];
  console[method] = (...args: unknown[]) => void calls.push(args);
  return {
    calls,
    lines: () =>
      calls.map((args) =>
        args.map((a) =>
          typeof a === "string" ? a : a instanceof Error ? String(a) : Deno.inspect(a)
        )
          .join(" ")
      ),
    [Symbol.dispose]() {
      console[method] = original;
    },
  };
}
