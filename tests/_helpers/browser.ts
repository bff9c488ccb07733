/**
 * A real headless Chromium (the Debian package `chromium`) driven by
 * puppeteer-core over the DevTools protocol, for tests of the pages a server
 * of ours renders: launch it with {@linkcode launchBrowser} (or
 * {@linkcode withBrowser}), load a page with {@linkcode openPage}, and assert
 * that the page logged no error. Where no Chromium is installed,
 * `CHROMIUM_MISSING` is true and the tests that need it are ignored;
 * `browser_test.ts` says so, once for the whole run (Deno evaluates this
 * module once per test file).
 */

import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { within } from "./real_time.ts";

export type { Browser, Page };

/** Where Debian and Ubuntu install Chromium, in the order tried. */
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** Launching a cold Chromium takes 1–3 s on our 2-core machines; a loaded one, more. */
const LAUNCH_TIMEOUT_MS = 30_000;
/** For each DevTools call and each wait of a page (navigation, selector, function). */
const PAGE_TIMEOUT_MS = 15_000;
/** For a graceful close before the process is killed. */
const CLOSE_TIMEOUT_MS = 10_000;

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * The Chromium executable: `CHROMIUM_PATH` when set and not empty (as is,
 * so that a wrong one fails the launch rather than ignoring the tests), else
 * the first of /usr/bin/chromium and /usr/bin/chromium-browser that exists,
 * else null.
 */
export function chromiumPath(): string | null {
  const chosen = Deno.env.get("CHROMIUM_PATH");
  if (chosen) return chosen;
  return CANDIDATES.find(isFile) ?? null;
}

/** True where no Chromium is found ({@linkcode chromiumPath}): the browser tests are then ignored. */
export const CHROMIUM_MISSING: boolean = chromiumPath() === null;

/** A running headless Chromium; dispose it (or call `close`) at the end of the test. */
export interface LaunchedBrowser extends AsyncDisposable {
  /** The puppeteer handle on it. */
  readonly browser: Browser;
  /**
   * Closes the browser, waits for its process to exit (killing it if it does
   * not close within 10 s, and then rejecting) and removes its profile
   * directory. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** How {@linkcode launchBrowser} starts Chromium. */
export interface LaunchOptions {
  /**
   * More command-line flags, e.g. `--host-resolver-rules=MAP dashboard.test
   * 127.0.0.1` to reach a loopback server under a host name the browser
   * does not treat as a secure context.
   */
  args?: readonly string[];
}

/**
 * Launches Chromium headless (the new headless mode) with a fresh profile in
 * a temporary directory, without the sandbox (the tests run as root) and
 * without a GPU: `await using chromium = await launchBrowser()`.
 *
 * @throws {Error} where no Chromium is found, or it does not start within 30 s.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<LaunchedBrowser> {
  const executablePath = chromiumPath();
  if (executablePath === null) {
    throw new Error(
      `Cannot launch Chromium: none of ${CANDIDATES.join(", ")} exists ` +
        "(apt-get install chromium, or set CHROMIUM_PATH)",
    );
  }
  const profile = await Deno.makeTempDir({ prefix: "apf-chromium-" });
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      headless: true,
      userDataDir: profile,
      args: ["--no-sandbox", "--disable-gpu", ...options.args ?? []],
      // Chromium keeps its crash database and a dconf cache under the XDG
      // directories, not the profile: those go to the profile too.
      env: { ...Deno.env.toObject(), XDG_CONFIG_HOME: profile, XDG_CACHE_HOME: profile },
      timeout: LAUNCH_TIMEOUT_MS,
      protocolTimeout: PAGE_TIMEOUT_MS,
    });
  } catch (error) {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = () => closing ??= shutDown(browser, profile);
  return { browser, close, [Symbol.asyncDispose]: close };
}

async function shutDown(browser: Browser, profile: string): Promise<void> {
  const child = browser.process();
  try {
    await within(browser.close(), CLOSE_TIMEOUT_MS, "Chromium closes");
  } catch (error) {
    // No process may outlive the test: kill what did not close, and wait for it.
    if (child !== null && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    }
    throw error;
  } finally {
    await Deno.remove(profile, { recursive: true });
  }
}

/**
 * Runs `fn` with a browser from {@linkcode launchBrowser} and closes it after,
 * whether `fn` resolves or throws.
 */
export async function withBrowser(fn: (browser: Browser) => Promise<void>): Promise<void> {
  await using launched = await launchBrowser();
  await fn(launched.browser);
}

/** How {@linkcode openPage} loads the page. */
export interface OpenPageOptions {
  /**
   * Extra HTTP headers sent with every request of the page (the document,
   * its scripts and styles, its fetches), e.g. `Authorization`.
   */
  headers?: Record<string, string>;
}

/** A loaded page and what went wrong in it so far; a clean page leaves the three lists empty. */
export interface OpenedPage {
  /** The puppeteer handle on the page; it closes with its browser. */
  readonly page: Page;
  /**
   * Console messages of type error or warning, as `"error: text (url:line)"`.
   * Chromium reports here what the page's scripts log, and also each
   * Content-Security-Policy violation and each load answered with an error.
   */
  readonly consoleMessages: string[];
  /** Uncaught exceptions and unhandled rejections of the page's scripts (their messages). */
  readonly pageErrors: string[];
  /**
   * Requests that failed (`"GET url: net::ERR_…"`) or had an answer of
   * status 400 or more (`"GET url: 401"`).
   */
  readonly failedRequests: string[];
}

function describeConsole(type: string, text: string, url?: string, line?: number): string {
  if (!url) return `${type}: ${text}`;
  return `${type}: ${text} (${url}${line === undefined ? "" : `:${line + 1}`})`;
}

/**
 * Opens a new page in `browser`, starts collecting its errors, and navigates
 * to `url` (resolving once the page and its scripts have loaded). What the
 * page does after that (a fetch, a render) the test waits for itself, e.g.
 * with `page.waitForFunction`.
 *
 * @throws {Error} when the navigation fails (an unreachable server, a bad URL) or takes over 15 s.
 */
export async function openPage(
  browser: Browser,
  url: string,
  options: OpenPageOptions = {},
): Promise<OpenedPage> {
  const page = await browser.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  const opened: OpenedPage = { page, consoleMessages: [], pageErrors: [], failedRequests: [] };
  page.on("console", (message) => {
    const type = message.type();
    if (type !== "error" && type !== "warn") return;
    const { url, lineNumber } = message.location();
    opened.consoleMessages.push(describeConsole(type, message.text(), url, lineNumber));
  });
  page.on("pageerror", (error) => {
    opened.pageErrors.push(error instanceof Error ? error.message : String(error));
  });
  page.on("requestfailed", (request) => {
    const reason = request.failure()?.errorText ?? "failed";
    opened.failedRequests.push(`${request.method()} ${request.url()}: ${reason}`);
  });
  page.on("response", (response) => {
    if (response.status() < 400) return;
    opened.failedRequests.push(
      `${response.request().method()} ${response.url()}: ${response.status()}`,
    );
  });
  if (options.headers !== undefined) await page.setExtraHTTPHeaders(options.headers);
  await page.goto(url, { waitUntil: "load" });
  return opened;
}
