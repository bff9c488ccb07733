/**
 * What the CLI needs from its host, so that commands run the same under
 * Deno and in tests.
 *
 * @module
 */

/** The host services the `apf` commands use. */
export interface CliIO {
  /** Reads a whole file as UTF-8; `-` means standard input. Rejects when unreadable. */
  readTextFile(path: string): Promise<string>;
  /** Standard input, line by line (without line terminators). */
  stdinLines(): AsyncIterable<string>;
  /** Writes to standard output. */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
}

/** An exit status: 0 success, 1 invalid input, 2 usage error or unreadable input. */
export type ExitCode = 0 | 1 | 2;
