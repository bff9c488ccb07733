/**
 * The dashboard's HTML: the page, and the sign-in page a browser gets
 * instead when it is not authorized. Static text, no data and no secret:
 * the script (`_dashboard_script.ts`) fetches the data, the style sheet
 * (`_dashboard_style.ts`) is a file of its own, so that the page works under
 * a Content-Security-Policy that allows no inline script or style.
 *
 * @module
 */

/**
 * The Content-Security-Policy of the page and its files. No `img-src`: the
 * page has no image (its charts are inline SVG), and without it the browser
 * does not ask for `/favicon.ico`, a path outside the dashboard that the
 * admin listener answers 404 (an error in the page's console).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The page: a shell the script fills (URLs are relative: it works under any
 * prefix). {@linkcode dashboardHtml} gives it with or without a sign-out
 * button.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API Priority and Fairness</title>
<link rel="stylesheet" href="dashboard.css">
<script src="dashboard.js" defer></script>
</head>
<body>
<header>
  <h1>API Priority and Fairness</h1>
  <p id="status" role="status">Connecting…</p>
</header>
<section id="legend" aria-label="Legend">
  <span class="key"><span class="swatch in-use"></span>seats in use</span>
  <span class="key"><span class="swatch waiting"></span>seats waiting (beyond the limit)</span>
  <span class="key"><span class="swatch limit"></span>current limit</span>
  <span class="key"><span class="swatch nominal"></span>nominal limit</span>
  <span class="key"><span class="swatch rejected"></span>rejected</span>
  <span class="key">Queues: one cell per queue, darker = more waiting; the number is requests waiting.</span>
</section>
<nav id="summary" aria-label="Every level at a glance"></nav>
<section id="server" aria-label="Learned server concurrency limit" hidden></section>
<main id="levels"></main>
<footer>
  <p>Levels in matching order. Rates are per second over the last second; wait times are of the
  requests that started executing in the last 10 s. Charts show up to the last 5 minutes; "top" is
  the value at the top of a chart.</p>
  <!--sign-out-->
</footer>
</body>
</html>
`;

/** The page; `signedIn` (it came with the sign-in cookie) adds the sign-out button. */
export function dashboardHtml(signedIn: boolean): string {
  return DASHBOARD_HTML.replace(
    "<!--sign-out-->",
    signedIn
      ? '<form method="post" action="sign-out"><button type="submit">Sign out</button></form>'
      : "",
  );
}

/**
 * The page a browser gets without authorization (answered with 403): a form
 * for the token. {@linkcode signInHtml} says when a token was refused.
 */
export const SIGN_IN_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API Priority and Fairness: sign in</title>
</head>
<body>
<h1>API Priority and Fairness</h1>
<p>Forbidden: this page needs the admin routes' authorization. Send it in an
<code>Authorization: Bearer</code> header, or sign in with the admin token
(kept in a cookie for these pages only, never in the address).</p>
<!--refused-->
<form method="post" action="sign-in">
<label>Admin token <input type="password" name="token" autocomplete="off" required></label>
<button type="submit">Sign in</button>
</form>
</body>
</html>
`;

/** The sign-in page; with `refused`, it says that the token signed in with was not accepted. */
export function signInHtml(refused: boolean): string {
  return SIGN_IN_HTML.replace(
    "<!--refused-->",
    refused ? "<p><strong>The token you signed in with was not accepted.</strong></p>" : "",
  );
}
