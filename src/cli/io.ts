/**
 * What the CLI needs from its host, so that commands run the same under
 * Deno and in tests.
 *
 * @module
 */

/** The default most bytes of one input (a file, or standard input read whole): 16 MiB. */
export const DEFAULT_MAX_INPUT_BYTES: number = 16 * 1024 * 1024;

/** A line longer than the reader's limit: its text was skipped, not buffered. */
export interface LineTooLong {
  /** The limit in bytes that the line exceeded. */
  tooLong: number;
}

/** One line of standard input (without its terminator), or a line that was too long. */
export type InputLine = string | LineTooLong;

/** Options of {@linkcode CliIO.stdinLines}. */
export interface StdinLinesOptions {
  /** Lines longer than this many bytes are reported as {@linkcode LineTooLong}. */
  maxLineBytes?: number;
}

/** The host services the `apf` commands use. */
export interface CliIO {
  /**
   * Reads a whole file as UTF-8; `-` means standard input. Relative paths are
   * the caller's (for the Deno host: `INIT_CWD` when set, as under
   * `deno task`). Rejects when unreadable, not a file, or larger than the
   * host's input limit ({@linkcode DEFAULT_MAX_INPUT_BYTES} unless configured).
   */
  readTextFile(path: string): Promise<string>;
  /**
   * A path as the caller means it: relative paths against the caller's
   * directory, as {@linkcode CliIO.readTextFile} reads them (for files a
   * command opens itself, such as a Deno KV file). Absent: as given.
   */
  resolvePath?(path: string): string;
  /** Standard input, line by line (without line terminators). */
  stdinLines(options?: StdinLinesOptions): AsyncIterable<InputLine>;
  /**
   * Writes to standard output, all of `text`. Throws an
   * {@linkcode OutputClosedError} when the reader went away; the command then
   * stops and `apf` exits 0.
   */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /**
   * Whether standard output is a terminal (live views redraw in place only
   * then). Absent means no.
   */
  isTerminal?(): boolean;
}

/**
 * Thrown by {@linkcode CliIO.stdout} when standard output was closed by its
 * reader (`apf config print | head -c 10`): nobody is left to read the rest,
 * which is not an error of `apf`.
 */
export class OutputClosedError extends Error {
  /** Creates the error, wrapping the host's (for example `Deno.errors.BrokenPipe`). */
  constructor(cause?: unknown) {
    super("Cannot write to standard output: it was closed", { cause });
    this.name = "OutputClosedError";
  }
}

/**
 * A writer to `io.stdout` for long-running commands (servers): a reader of
 * their output that goes away must not stop them, so a closed output is
 * ignored.
 */
export function tolerantStdout(io: CliIO): (text: string) => void {
  return (text) => {
    try {
      io.stdout(text);
    } catch (e) {
      if (!(e instanceof OutputClosedError)) throw e;
    }
  };
}

/** An exit status: 0 success, 1 invalid input, 2 usage error or unreadable input. */
export type ExitCode = 0 | 1 | 2;
